// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>

#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "core/console_out.h"
#include "devices/virtio/iov.h"
#include "devices/virtio/virtio_console.h"

#define CONSOLE_QUEUE_SIZE 64
#define RX_QUEUE 0
#define TX_QUEUE 1
/*
 * Guest output taken per queue kick; the rest waits for the next turn of
 * the event loop, so one chatty console cannot hold back disk and network.
 */
#define TX_BYTES_PER_KICK (16 * 1024)

struct virtio_console {
	struct virtio_device vdev;
	struct virtio_console_config config;
	struct virtq_chain *chain;
	struct console_out *out;
	size_t tx_bytes; /* taken since this kick */
	void (*output_notify)(void *ctx);
	void *output_notify_ctx;
};

static struct virtio_console *to_console(struct virtio_device *vdev)
{
	return (struct virtio_console *)vdev;
}

static struct virtq_chain *get_chain(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_console *con = to_console(vdev);

	if (con->tx_bytes >= TX_BYTES_PER_KICK) {
		virtio_device_kick(vdev, q); /* come back on the next turn */
		return NULL;
	}
	return con->chain;
}

/*
 * Into the console buffer, which never blocks: when the host's reader
 * stalls, the output is dropped (and counted) and the guest carries on.
 */
static int handle_tx(struct virtio_device *vdev, uint16_t q,
		     struct virtq_chain *chain)
{
	struct virtio_console *con = to_console(vdev);

	console_out_writev(con->out, chain->iov, chain->nr_out);
	con->tx_bytes += chain->out_len;
	if (con->output_notify)
		con->output_notify(con->output_notify_ctx);
	return 0;
}

void virtio_console_set_output_notify(struct virtio_device *vdev,
				      void (*notify)(void *), void *ctx)
{
	struct virtio_console *con = to_console(vdev);

	con->output_notify = notify;
	con->output_notify_ctx = ctx;
}

static const struct virtio_queue_handler tx_queue = {
	.get_chain = get_chain,
	.handle = handle_tx,
};

static void console_queue_notify(struct virtio_device *vdev, uint16_t q)
{
	/* New receive buffers wait for input; nothing to do on a kick. */
	if (q == TX_QUEUE) {
		to_console(vdev)->tx_bytes = 0;
		virtio_queue_drain(vdev, q, &tx_queue);
	}
}

size_t virtio_console_receive(void *opaque, const uint8_t *buf, size_t len)
{
	struct virtio_console *con = opaque;
	struct virtio_device *vdev = &con->vdev;
	struct virtq *vq = &vdev->vqs[RX_QUEUE];
	size_t taken = 0;
	bool pushed = false;

	pthread_mutex_lock(&vdev->lock);
	/* Frozen for a snapshot: the console offers it again later. */
	while (taken < len && !vdev->frozen && virtio_device_live(vdev) &&
	       vq->enabled) {
		size_t n;
		int r = virtq_pop(vq, con->chain);

		if (r < 0)
			virtio_queue_failed(vdev, RX_QUEUE);
		if (r <= 0)
			break;
		n = buf_to_iov(virtq_chain_in(con->chain), con->chain->nr_in,
			       buf + taken, len - taken);
		virtq_push(vq, con->chain->head, (uint32_t)n);
		pushed = true;
		taken += n;
		if (n == 0)
			break; /* a chain without writable space */
	}
	if (pushed)
		virtio_queue_notify_driver(vdev, RX_QUEUE);
	pthread_mutex_unlock(&vdev->lock);
	return taken;
}

static void console_destroy(struct virtio_device *vdev)
{
	struct virtio_console *con = to_console(vdev);

	free(con->chain);
	virtio_device_destroy(vdev);
	free(con);
}

static const struct virtio_device_ops console_ops = {
	.queue_notify = console_queue_notify,
	.destroy = console_destroy,
};

struct virtio_device *virtio_console_create(const struct virtio_host *host,
					    struct console_out *out)
{
	struct virtio_console *con = calloc(1, sizeof(*con));

	if (!con || !(con->chain = virtq_chain_alloc(CONSOLE_QUEUE_SIZE)) ||
	    virtio_device_init(&con->vdev, "virtio-console", &console_ops,
			       host->mem, VIRTIO_ID_CONSOLE,
			       VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC) |
				       VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX),
			       2, CONSOLE_QUEUE_SIZE, &con->config,
			       sizeof(con->config)) < 0) {
		if (con)
			free(con->chain);
		free(con);
		hvm_set_error(-ENOMEM, "virtio-console: out of memory");
		return NULL;
	}
	con->out = out;
	return &con->vdev;
}
