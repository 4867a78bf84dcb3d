// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "devices/virtio/virtio_mmio.h"

#define REG_MAGIC 0x000
#define REG_VERSION 0x004
#define REG_DEVICE_ID 0x008
#define REG_VENDOR_ID 0x00c
#define REG_DEVICE_FEATURES 0x010
#define REG_DEVICE_FEATURES_SEL 0x014
#define REG_DRIVER_FEATURES 0x020
#define REG_DRIVER_FEATURES_SEL 0x024
#define REG_QUEUE_SEL 0x030
#define REG_QUEUE_NUM_MAX 0x034
#define REG_QUEUE_NUM 0x038
#define REG_QUEUE_READY 0x044
#define REG_QUEUE_NOTIFY 0x050
#define REG_INTERRUPT_STATUS 0x060
#define REG_INTERRUPT_ACK 0x064
#define REG_STATUS 0x070
#define REG_QUEUE_DESC_LOW 0x080
#define REG_QUEUE_DESC_HIGH 0x084
#define REG_QUEUE_DRIVER_LOW 0x090
#define REG_QUEUE_DRIVER_HIGH 0x094
#define REG_QUEUE_DEVICE_LOW 0x0a0
#define REG_QUEUE_DEVICE_HIGH 0x0a4
#define REG_CONFIG_GENERATION 0x0fc
#define REG_CONFIG 0x100

#define MMIO_MAGIC 0x74726976 /* "virt" */
#define MMIO_VERSION 2
#define MMIO_VENDOR 0x4d564849 /* "HIVM" */
#define INT_USED_BUFFER 1
#define INT_CONFIG 2

static struct virtq *selected(struct virtio_mmio *m)
{
	return m->queue_select < m->vdev->nr_vqs
		       ? &m->vdev->vqs[m->queue_select]
		       : NULL;
}

static uint32_t reg_read(struct virtio_mmio *m, uint64_t off)
{
	struct virtio_device *vdev = m->vdev;
	struct virtq *vq = selected(m);

	switch (off) {
	case REG_MAGIC:
		return MMIO_MAGIC;
	case REG_VERSION:
		return MMIO_VERSION;
	case REG_DEVICE_ID:
		return vdev->device_id;
	case REG_VENDOR_ID:
		return MMIO_VENDOR;
	case REG_DEVICE_FEATURES:
		return virtio_device_features_word(vdev, m->dfselect);
	case REG_QUEUE_NUM_MAX:
		return vq ? vq->max_size : 0;
	case REG_QUEUE_READY:
		return vq ? vq->enabled : 0;
	case REG_INTERRUPT_STATUS:
		return m->interrupt_status;
	case REG_STATUS:
		return vdev->status;
	case REG_CONFIG_GENERATION:
		return vdev->config_generation;
	default:
		return 0; /* write-only or reserved */
	}
}

static void set_addr_half(struct virtq *vq, uint64_t *field, bool high,
			  uint32_t v)
{
	if (!vq || vq->enabled)
		return;
	if (high)
		*field = (*field & 0xffffffffull) | (uint64_t)v << 32;
	else
		*field = (*field & ~0xffffffffull) | v;
}

static void update_irq(struct virtio_mmio *m)
{
	irq_line_set(&m->irq, m->interrupt_status != 0);
}

static void reg_write(struct virtio_mmio *m, uint64_t off, uint32_t v)
{
	struct virtio_device *vdev = m->vdev;
	struct virtq *vq = selected(m);

	switch (off) {
	case REG_DEVICE_FEATURES_SEL:
		m->dfselect = v;
		break;
	case REG_DRIVER_FEATURES:
		virtio_driver_features_write(vdev, m->gfselect, v);
		break;
	case REG_DRIVER_FEATURES_SEL:
		m->gfselect = v;
		break;
	case REG_QUEUE_SEL:
		m->queue_select = v;
		break;
	case REG_QUEUE_NUM:
		if (vq)
			virtq_set_size(vq, v);
		break;
	case REG_QUEUE_READY:
		if (vq && v == 1 && !vq->enabled)
			virtio_queue_enable(vdev, (uint16_t)m->queue_select);
		break;
	case REG_INTERRUPT_ACK:
		m->interrupt_status &= ~v;
		update_irq(m);
		break;
	case REG_STATUS:
		virtio_set_status(vdev, (uint8_t)v);
		if (v == 0) {
			m->interrupt_status = 0;
			update_irq(m);
		}
		break;
	case REG_QUEUE_DESC_LOW:
	case REG_QUEUE_DESC_HIGH:
		if (vq)
			set_addr_half(vq, &vq->desc_gpa,
				      off == REG_QUEUE_DESC_HIGH, v);
		break;
	case REG_QUEUE_DRIVER_LOW:
	case REG_QUEUE_DRIVER_HIGH:
		if (vq)
			set_addr_half(vq, &vq->avail_gpa,
				      off == REG_QUEUE_DRIVER_HIGH, v);
		break;
	case REG_QUEUE_DEVICE_LOW:
	case REG_QUEUE_DEVICE_HIGH:
		if (vq)
			set_addr_half(vq, &vq->used_gpa,
				      off == REG_QUEUE_DEVICE_HIGH, v);
		break;
	default:
		break; /* read-only or reserved */
	}
}

static void mmio_read(void *dev, uint64_t off, uint8_t *data, uint32_t len)
{
	struct virtio_mmio *m = dev;
	uint32_t v;

	memset(data, 0, len);
	pthread_mutex_lock(&m->vdev->lock);
	if (off >= REG_CONFIG) {
		virtio_config_read(m->vdev, (uint32_t)(off - REG_CONFIG), data,
				   len);
	} else if (len == 4 && !(off & 3)) {
		v = reg_read(m, off);
		memcpy(data, &v, 4); /* little-endian host and guest */
	}
	pthread_mutex_unlock(&m->vdev->lock);
}

static void mmio_write(void *dev, uint64_t off, const uint8_t *data,
		       uint32_t len)
{
	struct virtio_mmio *m = dev;
	uint32_t v;

	if (off == REG_QUEUE_NOTIFY && len == 4) {
		memcpy(&v, data, 4);
		if (v < m->vdev->nr_vqs)
			virtio_device_kick(m->vdev, (uint16_t)v);
		return;
	}
	pthread_mutex_lock(&m->vdev->lock);
	if (off >= REG_CONFIG) {
		virtio_config_write(m->vdev, (uint32_t)(off - REG_CONFIG), data,
				    len);
	} else if (len == 4 && !(off & 3)) {
		memcpy(&v, data, 4);
		reg_write(m, off, v);
	}
	pthread_mutex_unlock(&m->vdev->lock);
}

const struct bus_ops virtio_mmio_ops = {
	.read = mmio_read,
	.write = mmio_write,
};

/* Locked. */
static int signal_queue(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_mmio *m = vdev->transport.ctx;

	m->interrupt_status |= INT_USED_BUFFER;
	update_irq(m);
	return 0;
}

static int signal_config(struct virtio_device *vdev)
{
	struct virtio_mmio *m = vdev->transport.ctx;

	m->interrupt_status |= INT_CONFIG;
	update_irq(m);
	return 0;
}

int virtio_mmio_init(struct virtio_mmio *m, struct virtio_device *vdev,
		     uint64_t base, struct irq_line irq,
		     const struct virtio_host *host)
{
	*m = (struct virtio_mmio){ .vdev = vdev, .irq = irq, .base = base };
	vdev->transport = (struct virtio_transport){
		.signal_queue = signal_queue,
		.signal_config = signal_config,
		.ctx = m,
	};
	for (uint16_t q = 0; host->ioeventfd && q < vdev->nr_vqs; q++) {
		int ret = host->ioeventfd(host->ioeventfd_ctx,
					  base + REG_QUEUE_NOTIFY, 4, true, q,
					  vdev->kicks[q].fd, true);

		if (ret) {
			pr_warn("%s: no ioeventfd for queue %u (%s): kicks exit to userspace",
				vdev->name, q, strerror(-ret));
			break;
		}
	}
	return 0;
}
