// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the virtio-mmio transport: the input is a sequence
 * of guest register accesses of any width and offset, guest RAM writes and
 * "event loop runs" that drain the kicked queues inline. Nothing may
 * crash, hang or touch memory outside RAM; the interrupt line must follow
 * InterruptStatus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/virtio_mmio.h"
#include "fuzz.h"

#define RAM_SIZE 0x10000ull

static uint8_t *ram;
static struct virtq_chain *chain;
static bool line;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, RAM_SIZE);
	chain = virtq_chain_alloc(64);
	return ram && chain ? 0 : -1;
}

static struct virtq_chain *get_chain(struct virtio_device *vdev, uint16_t q)
{
	return chain;
}

static int handle(struct virtio_device *vdev, uint16_t q, struct virtq_chain *c)
{
	for (unsigned int i = 0; i < c->nr_in; i++)
		memset(virtq_chain_in(c)[i].iov_base, 0xa5,
		       virtq_chain_in(c)[i].iov_len);
	return (int)c->in_len;
}

static const struct virtio_queue_handler handler = { get_chain, handle };

static void queue_notify(struct virtio_device *vdev, uint16_t q)
{
	virtio_queue_drain(vdev, q, &handler);
}

static const struct virtio_device_ops ops = { .queue_notify = queue_notify };

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	line = level;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_memory mem = { 0 };
	struct virtio_device vdev;
	struct virtio_mmio m;
	struct virtio_host host = { .mem = &mem };
	uint8_t config[16] = { 0 };

	memset(ram, 0, RAM_SIZE);
	line = false;
	guest_memory_add_region(&mem, 0, RAM_SIZE, ram);
	if (virtio_device_init(&vdev, "fuzz", &ops, &mem, 4,
			       VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX) |
				       VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC),
			       2, 64, config, sizeof(config)))
		abort();
	virtio_mmio_init(&m, &vdev, 0x0a000000,
			 (struct irq_line){ .set_level = set_level }, &host);
	/* Records: kind, width, offset (2 bytes), value (8 bytes). */
	while (size >= 12) {
		uint8_t kind = data[0] % 4,
			len = (uint8_t)(1u << (data[1] % 4));
		uint16_t off =
			(uint16_t)((data[2] | data[3] << 8) % VIRTIO_MMIO_SIZE);
		uint8_t val[8];

		memcpy(val, data + 4, 8);
		if (off + len > VIRTIO_MMIO_SIZE)
			len = 1;
		switch (kind) {
		case 0:
			virtio_mmio_ops.write(&m, off, val, len);
			break;
		case 1:
			virtio_mmio_ops.read(&m, off, val, len);
			break;
		case 2:
			memcpy(ram + ((data[2] | data[3] << 8) %
				      (RAM_SIZE - 8)),
			       val, 8);
			break;
		default:
			for (uint16_t q = 0; q < vdev.nr_vqs; q++) {
				pthread_mutex_lock(&vdev.lock);
				if (virtio_device_live(&vdev) &&
				    vdev.vqs[q].enabled && !vdev.vqs[q].broken)
					queue_notify(&vdev, q);
				pthread_mutex_unlock(&vdev.lock);
			}
			break;
		}
		if (line != (m.interrupt_status != 0))
			abort();
		data += 12;
		size -= 12;
	}
	virtio_device_destroy(&vdev);
	return 0;
}
