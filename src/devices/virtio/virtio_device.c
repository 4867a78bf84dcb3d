// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <linux/virtio_config.h>

#include "base/log.h"
#include "devices/virtio/virtio_device.h"

int virtio_device_init(struct virtio_device *vdev, const char *name,
		       const struct virtio_device_ops *ops,
		       const struct guest_memory *mem, uint32_t device_id,
		       uint64_t features, uint16_t nr_vqs, uint16_t queue_size,
		       void *config, uint32_t config_size)
{
	*vdev = (struct virtio_device){
		.name = name,
		.ops = ops,
		.mem = mem,
		.device_id = device_id,
		.device_features = features | VIRTIO_BIT(VIRTIO_F_VERSION_1),
		.config = config,
		.config_size = config_size,
		.nr_vqs = nr_vqs,
	};
	vdev->vqs = calloc(nr_vqs ? nr_vqs : 1, sizeof(*vdev->vqs));
	vdev->kicks = calloc(nr_vqs ? nr_vqs : 1, sizeof(*vdev->kicks));
	if (!vdev->vqs || !vdev->kicks) {
		free(vdev->vqs);
		free(vdev->kicks);
		return -ENOMEM;
	}
	for (uint16_t q = 0; q < nr_vqs; q++)
		vdev->kicks[q] =
			(struct virtio_kick){ .vdev = vdev, .q = q, .fd = -1 };
	pthread_mutex_init(&vdev->lock, NULL);
	for (uint16_t q = 0; q < nr_vqs; q++) {
		virtq_init(&vdev->vqs[q], mem, queue_size);
		vdev->kicks[q].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (vdev->kicks[q].fd < 0) {
			int err = errno;

			virtio_device_destroy(vdev);
			return hvm_set_error(-err, "%s: eventfd: %s", name,
					     strerror(err));
		}
	}
	return 0;
}

void virtio_device_destroy(struct virtio_device *vdev)
{
	for (uint16_t q = 0; vdev->kicks && q < vdev->nr_vqs; q++)
		if (vdev->kicks[q].fd >= 0)
			close(vdev->kicks[q].fd);
	free(vdev->kicks);
	free(vdev->vqs);
	vdev->kicks = NULL;
	vdev->vqs = NULL;
	pthread_mutex_destroy(&vdev->lock);
}

static void kick_ready(struct event_watch *w)
{
	struct virtio_kick *k = (struct virtio_kick *)w;
	struct virtio_device *vdev = k->vdev;
	struct virtq *vq = &vdev->vqs[k->q];

	pthread_mutex_lock(&vdev->lock);
	if (vdev->frozen)
		vdev->frozen_kicks |= 1ull << (k->q % 64);
	else if (virtio_device_live(vdev) && vq->enabled && !vq->broken &&
		 vdev->ops->queue_notify)
		vdev->ops->queue_notify(vdev, k->q);
	pthread_mutex_unlock(&vdev->lock);
}

int virtio_device_attach_loop(struct virtio_device *vdev,
			      struct event_loop *loop)
{
	for (uint16_t q = 0; q < vdev->nr_vqs; q++) {
		struct virtio_kick *k = &vdev->kicks[q];
		int ret = event_loop_watch(loop, &k->watch, k->fd, true,
					   kick_ready);

		if (ret)
			return hvm_set_error(ret, "%s: watching queue %u: %s",
					     vdev->name, q, strerror(-ret));
	}
	return 0;
}

void virtio_device_kick(struct virtio_device *vdev, uint16_t q)
{
	uint64_t one = 1;

	if (q >= vdev->nr_vqs)
		return;
	/* EAGAIN only when the counter is about to overflow: kicked anyway. */
	if (write(vdev->kicks[q].fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_warn_ratelimited("%s: kick queue %u: %s", vdev->name, q,
				    strerror(errno));
}

int virtio_features_check(uint64_t offered, uint64_t accepted)
{
	uint64_t extra = accepted & ~offered;

	if (extra)
		return hvm_set_error(
			-EINVAL,
			"driver accepted features 0x%llx the device did not offer",
			(unsigned long long)extra);
	if (!(accepted & VIRTIO_BIT(VIRTIO_F_VERSION_1)))
		return hvm_set_error(
			-EINVAL,
			"driver did not accept VIRTIO_F_VERSION_1 (legacy drivers are not supported)");
	return 0;
}

uint32_t virtio_device_features_word(const struct virtio_device *vdev,
				     uint32_t sel)
{
	if (sel > 1)
		return 0;
	return (uint32_t)(vdev->device_features >> (32 * sel));
}

uint32_t virtio_driver_features_word(const struct virtio_device *vdev,
				     uint32_t sel)
{
	if (sel > 1)
		return 0;
	return (uint32_t)(vdev->driver_features >> (32 * sel));
}

void virtio_driver_features_write(struct virtio_device *vdev, uint32_t sel,
				  uint32_t value)
{
	uint64_t mask;

	/* Features are negotiated between DRIVER and FEATURES_OK only. */
	if (!(vdev->status & VIRTIO_CONFIG_S_DRIVER) ||
	    (vdev->status & VIRTIO_CONFIG_S_FEATURES_OK) || sel > 1)
		return;
	mask = 0xffffffffull << (32 * sel);
	vdev->driver_features = (vdev->driver_features & ~mask) |
				((uint64_t)value << (32 * sel));
}

void virtio_device_reset(struct virtio_device *vdev)
{
	if (vdev->ops->reset)
		vdev->ops->reset(vdev);
	for (uint16_t q = 0; q < vdev->nr_vqs; q++)
		virtq_reset(&vdev->vqs[q]);
	vdev->status = 0;
	vdev->driver_features = 0;
}

bool virtio_device_live(const struct virtio_device *vdev)
{
	return (vdev->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	       !(vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* Guest-caused problems: log a few per device, then stay quiet. */
#define MAX_GUEST_ERRORS_LOGGED 8

void virtio_device_log_guest_error(struct virtio_device *vdev, const char *fmt,
				   ...)
{
	char msg[256];
	va_list ap;

	if (vdev->errors_logged >= MAX_GUEST_ERRORS_LOGGED)
		return;
	vdev->errors_logged++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_warn("%s: %s%s", vdev->name, msg,
		vdev->errors_logged == MAX_GUEST_ERRORS_LOGGED
			? " (further guest-caused errors not logged)"
			: "");
}

static void log_driver_error(struct virtio_device *vdev, const char *what)
{
	virtio_device_log_guest_error(vdev, "driver error, needs reset: %s",
				      what);
}

void virtio_device_set_needs_reset(struct virtio_device *vdev)
{
	if (vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	vdev->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	if ((vdev->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    vdev->transport.signal_config)
		vdev->transport.signal_config(vdev);
}

static bool features_acceptable(struct virtio_device *vdev)
{
	if (virtio_features_check(vdev->device_features,
				  vdev->driver_features) ||
	    (vdev->ops->validate_features &&
	     vdev->ops->validate_features(vdev, vdev->driver_features))) {
		virtio_device_log_guest_error(vdev, "FEATURES_OK refused: %s",
					      hvm_error_message());
		return false;
	}
	return true;
}

void virtio_set_status(struct virtio_device *vdev, uint8_t status)
{
	uint8_t added;

	if (status == 0) {
		virtio_device_reset(vdev);
		return;
	}
	/* A driver may only add bits (virtio 1.x 2.1.1); NEEDS_RESET is ours. */
	status &= ~VIRTIO_CONFIG_S_NEEDS_RESET;
	added = status & ~vdev->status;
	if ((added & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    (!(vdev->status & VIRTIO_CONFIG_S_DRIVER) ||
	     !features_acceptable(vdev)))
		added &= ~VIRTIO_CONFIG_S_FEATURES_OK;
	if (added & VIRTIO_CONFIG_S_DRIVER_OK) {
		if (!((vdev->status | added) & VIRTIO_CONFIG_S_FEATURES_OK)) {
			log_driver_error(vdev, "DRIVER_OK without FEATURES_OK");
			added &= ~VIRTIO_CONFIG_S_DRIVER_OK;
			vdev->status |= added;
			virtio_device_set_needs_reset(vdev);
			return;
		}
		vdev->status |= added;
		if (vdev->ops->activate && vdev->ops->activate(vdev)) {
			virtio_device_log_guest_error(vdev,
						      "activation failed: %s",
						      hvm_error_message());
			virtio_device_set_needs_reset(vdev);
			return;
		}
		/* Buffers queued before DRIVER_OK: look at them now. */
		for (uint16_t q = 0; q < vdev->nr_vqs; q++)
			if (vdev->vqs[q].enabled)
				virtio_device_kick(vdev, q);
		return;
	}
	vdev->status |= added;
}

int virtio_config_read(struct virtio_device *vdev, uint32_t off, uint8_t *data,
		       uint32_t len)
{
	if (off > vdev->config_size || len > vdev->config_size - off) {
		memset(data, 0, len);
		return -EINVAL;
	}
	memcpy(data, (const uint8_t *)vdev->config + off, len);
	return 0;
}

int virtio_config_write(struct virtio_device *vdev, uint32_t off,
			const uint8_t *data, uint32_t len)
{
	if (off > vdev->config_size || len > vdev->config_size - off)
		return -EINVAL;
	/* Only the device knows which fields are writable. */
	if (vdev->ops->config_written) {
		memcpy((uint8_t *)vdev->config + off, data, len);
		vdev->ops->config_written(vdev, off, len);
	}
	return 0;
}

void virtio_config_changed(struct virtio_device *vdev)
{
	vdev->config_generation++;
	if ((vdev->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    vdev->transport.signal_config)
		vdev->transport.signal_config(vdev);
}

int virtio_queue_enable(struct virtio_device *vdev, uint16_t q)
{
	int ret;

	if (q >= vdev->nr_vqs)
		return -EINVAL;
	ret = virtq_enable(&vdev->vqs[q], vdev->driver_features);
	if (ret) {
		log_driver_error(vdev, hvm_error_message());
		virtio_device_set_needs_reset(vdev);
	}
	return ret;
}

void virtio_queue_notify_driver(struct virtio_device *vdev, uint16_t q)
{
	if (q >= vdev->nr_vqs || !vdev->transport.signal_queue)
		return;
	if (virtq_should_notify(&vdev->vqs[q]))
		vdev->transport.signal_queue(vdev, q);
}

void virtio_queue_failed(struct virtio_device *vdev, uint16_t q)
{
	log_driver_error(vdev, hvm_error_message());
	virtio_device_set_needs_reset(vdev);
}

void virtio_queue_drain(struct virtio_device *vdev, uint16_t q,
			const struct virtio_queue_handler *h)
{
	struct virtq *vq = &vdev->vqs[q];
	unsigned int budget = vq->size;
	bool pushed = false;
	int ret;

	do {
		virtq_disable_notify(vq);
		for (;;) {
			struct virtq_chain *chain;

			if (budget == 0) {
				/* Let other work run; come back via a kick. */
				virtio_device_kick(vdev, q);
				goto out;
			}
			chain = h->get_chain(vdev, q);
			if (!chain)
				goto out;
			ret = virtq_pop(vq, chain);
			if (ret == 0)
				break;
			if (ret < 0) {
				virtio_queue_failed(vdev, q);
				goto out;
			}
			budget--;
			ret = h->handle(vdev, q, chain);
			if (ret >= 0) {
				virtq_push(vq, chain->head, (uint32_t)ret);
				pushed = true;
			} else if (ret != -EINPROGRESS) {
				virtio_queue_failed(vdev, q);
				goto out;
			}
		}
	} while (virtq_enable_notify(vq));
out:
	if (pushed)
		virtio_queue_notify_driver(vdev, q);
}

/* ---- snapshots ---- */

void virtio_device_freeze(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	vdev->frozen = true;
	pthread_mutex_unlock(&vdev->lock);
}

void virtio_device_thaw(struct virtio_device *vdev)
{
	uint64_t kicks;

	pthread_mutex_lock(&vdev->lock);
	vdev->frozen = false;
	kicks = vdev->frozen_kicks;
	vdev->frozen_kicks = 0;
	pthread_mutex_unlock(&vdev->lock);
	for (uint16_t q = 0; q < vdev->nr_vqs; q++)
		if (kicks & (1ull << (q % 64)))
			virtio_device_kick(vdev, q);
}

size_t virtio_device_state_size(const struct virtio_device *vdev)
{
	return sizeof(struct virtio_device_state) +
	       (size_t)vdev->nr_vqs * sizeof(struct virtq_state);
}

void virtio_device_save(const struct virtio_device *vdev, void *buf)
{
	struct virtio_device_state h = {
		.driver_features = vdev->driver_features,
		.status = vdev->status,
		.config_generation = vdev->config_generation,
		.nr_vqs = vdev->nr_vqs,
	};
	uint8_t *p = buf;

	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (uint16_t q = 0; q < vdev->nr_vqs; q++) {
		const struct virtq *vq = &vdev->vqs[q];
		struct virtq_state s = {
			.desc_gpa = vq->desc_gpa,
			.avail_gpa = vq->avail_gpa,
			.used_gpa = vq->used_gpa,
			.size = vq->size,
			.last_avail = vq->last_avail,
			.used_idx = vq->used_idx,
			.signalled_used = vq->signalled_used,
			.enabled = vq->enabled,
			.broken = vq->broken,
			.signalled_used_valid = vq->signalled_used_valid,
		};

		memcpy(p, &s, sizeof(s));
		p += sizeof(s);
	}
}

#define STATUS_BITS                                                \
	(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |    \
	 VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK | \
	 VIRTIO_CONFIG_S_NEEDS_RESET | VIRTIO_CONFIG_S_FAILED)

static int load_queue(struct virtio_device *vdev, uint16_t q,
		      const struct virtq_state *s)
{
	struct virtq *vq = &vdev->vqs[q];

	if (s->size && virtq_set_size(vq, s->size) < 0)
		return hvm_set_error(
			-EINVAL,
			"%s: queue %u has size %u; expected a power of two up to %u",
			vdev->name, q, s->size, vq->max_size);
	if (s->enabled > 1 || s->broken > 1 || s->signalled_used_valid > 1)
		return hvm_set_error(
			-EINVAL,
			"%s: queue %u: enabled %u, broken %u, signalled %u; expected 0 or 1 each",
			vdev->name, q, s->enabled, s->broken,
			s->signalled_used_valid);
	vq->desc_gpa = s->desc_gpa;
	vq->avail_gpa = s->avail_gpa;
	vq->used_gpa = s->used_gpa;
	if (!s->enabled)
		return 0;
	if (!(vdev->status & VIRTIO_CONFIG_S_FEATURES_OK))
		return hvm_set_error(
			-EINVAL,
			"%s: queue %u is enabled, but the device status 0x%x has no FEATURES_OK",
			vdev->name, q, vdev->status);
	/* Alignment and every ring inside RAM, as when the driver enabled it. */
	if (virtq_enable(vq, vdev->driver_features) < 0)
		return hvm_set_error(-EINVAL, "%s: queue %u: %s", vdev->name, q,
				     hvm_error_message());
	/* Saved drained: every chain taken was given back, unless the
	 * driver broke a rule and the device waits for its reset. */
	if (s->last_avail != s->used_idx && !s->broken &&
	    virtio_device_live(vdev))
		return hvm_set_error(
			-EINVAL,
			"%s: queue %u: %u requests in flight (last available index %u, used index %u); a snapshot holds none",
			vdev->name, q, (uint16_t)(s->last_avail - s->used_idx),
			s->last_avail, s->used_idx);
	vq->last_avail = s->last_avail;
	vq->used_idx = s->used_idx;
	vq->signalled_used = s->signalled_used;
	vq->signalled_used_valid = s->signalled_used_valid;
	vq->broken = s->broken;
	return 0;
}

int virtio_device_load(struct virtio_device *vdev, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	struct virtio_device_state h;
	int r;

	if (len != virtio_device_state_size(vdev))
		return hvm_set_error(
			-EINVAL, "%s: %zu bytes of state; expected %zu",
			vdev->name, len, virtio_device_state_size(vdev));
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	if (h.nr_vqs != vdev->nr_vqs || h.reserved)
		return hvm_set_error(
			-EINVAL,
			"%s: %u queues (reserved 0x%x); expected %u (0)",
			vdev->name, h.nr_vqs, h.reserved, vdev->nr_vqs);
	if (h.status & ~STATUS_BITS)
		return hvm_set_error(
			-EINVAL, "%s: device status 0x%x has bits outside 0x%x",
			vdev->name, h.status, STATUS_BITS);
	if ((h.status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    !(h.status & VIRTIO_CONFIG_S_FEATURES_OK))
		return hvm_set_error(
			-EINVAL,
			"%s: device status 0x%x has DRIVER_OK without FEATURES_OK",
			vdev->name, h.status);
	if ((h.status & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    virtio_features_check(vdev->device_features, h.driver_features))
		return hvm_set_error(-EINVAL, "%s: %s", vdev->name,
				     hvm_error_message());
	if (h.driver_features & ~vdev->device_features)
		return hvm_set_error(
			-EINVAL,
			"%s: driver features 0x%llx; this device offers 0x%llx",
			vdev->name, (unsigned long long)h.driver_features,
			(unsigned long long)vdev->device_features);
	/* From the power-on state, whatever an earlier try left. */
	for (uint16_t q = 0; q < vdev->nr_vqs; q++)
		virtq_reset(&vdev->vqs[q]);
	vdev->driver_features = h.driver_features;
	vdev->status = h.status;
	vdev->config_generation = h.config_generation;
	for (uint16_t q = 0; q < vdev->nr_vqs; q++) {
		struct virtq_state s;

		memcpy(&s, p, sizeof(s));
		p += sizeof(s);
		r = load_queue(vdev, q, &s);
		if (r < 0)
			return r;
	}
	return 0;
}
