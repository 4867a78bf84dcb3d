// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/virtio_rng.h"

#define RNG_QUEUE_SIZE 64
/* Bytes per request at most: a 4 GiB request must not stall the loop. */
#define RNG_MAX_PER_REQUEST 4096

struct virtio_rng {
	struct virtio_device vdev;
	struct virtq_chain *chain;
};

static struct virtq_chain *get_chain(struct virtio_device *vdev, uint16_t q)
{
	return ((struct virtio_rng *)vdev)->chain;
}

static int handle(struct virtio_device *vdev, uint16_t q,
		  struct virtq_chain *chain)
{
	struct iovec *in = virtq_chain_in(chain);
	size_t written = 0;

	/* Any readable buffers are ignored; fill the writable ones. */
	for (unsigned int i = 0; i < chain->nr_in; i++) {
		size_t want = in[i].iov_len;
		ssize_t n;

		if (want > RNG_MAX_PER_REQUEST - written)
			want = RNG_MAX_PER_REQUEST - written;
		if (!want)
			break;
		/* Never block the loop: early in boot, give what there is. */
		n = getrandom(in[i].iov_base, want, GRND_NONBLOCK);
		if (n <= 0)
			break;
		written += (size_t)n;
		if ((size_t)n < want)
			break;
	}
	return (int)written;
}

static const struct virtio_queue_handler rng_queue = {
	.get_chain = get_chain,
	.handle = handle,
};

static void rng_queue_notify(struct virtio_device *vdev, uint16_t q)
{
	virtio_queue_drain(vdev, q, &rng_queue);
}

static void rng_destroy(struct virtio_device *vdev)
{
	struct virtio_rng *rng = (struct virtio_rng *)vdev;

	free(rng->chain);
	virtio_device_destroy(vdev);
	free(rng);
}

static const struct virtio_device_ops rng_ops = {
	.queue_notify = rng_queue_notify,
	.destroy = rng_destroy,
};

struct virtio_device *virtio_rng_create(const struct virtio_host *host)
{
	struct virtio_rng *rng = calloc(1, sizeof(*rng));

	if (!rng || !(rng->chain = virtq_chain_alloc(RNG_QUEUE_SIZE)) ||
	    virtio_device_init(&rng->vdev, "virtio-rng", &rng_ops, host->mem,
			       VIRTIO_ID_RNG,
			       VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC) |
				       VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX),
			       1, RNG_QUEUE_SIZE, NULL, 0) < 0) {
		if (rng)
			free(rng->chain);
		free(rng);
		hvm_set_error(-ENOMEM, "virtio-rng: out of memory");
		return NULL;
	}
	return &rng->vdev;
}
