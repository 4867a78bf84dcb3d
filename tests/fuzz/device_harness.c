// SPDX-License-Identifier: LGPL-2.1-or-later
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/event_loop.h"
#include "device_harness.h"
#include "devices/virtio/virtio_mmio.h"
#include "fuzz.h"

static uint8_t *ram;
static bool line;

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	line = level;
	return 0;
}

int fuzz_device_init(const struct fuzz_device *d)
{
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, FUZZ_RAM_SIZE);
	if (!ram)
		return -1;
	return d->init ? d->init() : 0;
}

/* Run what the loop has ready until it is quiet (bounded). */
static void loop_turn(const struct fuzz_device *d, struct event_loop *loop)
{
	for (int i = 0; i < 16 && event_loop_run_ready(loop) > 0; i++)
		;
	if (d->turn_done)
		d->turn_done();
}

int fuzz_device_run(const struct fuzz_device *d, const uint8_t *data,
		    size_t size)
{
	struct guest_memory mem = { 0 };
	struct event_loop *loop;
	struct virtio_device *vdev;
	struct virtio_host host;
	struct virtio_mmio m;
	/*
	 * A small guest-object budget (vsock's connections and rings, 9P's
	 * fids), so inputs reach the refusals: it must never pass its limit
	 * and must get every byte back.
	 */
	struct budget budget = { .limit = 256 << 10 };

	memset(ram, 0, FUZZ_RAM_SIZE);
	line = false;
	guest_memory_add_region(&mem, 0, FUZZ_RAM_SIZE, ram);
	if (event_loop_create(&loop, 64) < 0)
		abort();
	host = (struct virtio_host){ .mem = &mem,
				     .loop = loop,
				     .guest_objects = &budget };
	vdev = d->create(&host);
	if (!vdev || virtio_device_attach_loop(vdev, loop) < 0)
		abort();
	virtio_mmio_init(&m, vdev, 0x0a000000,
			 (struct irq_line){ .set_level = set_level }, &host);
	while (size >= 12) {
		uint8_t kind = data[0] % 5;
		uint8_t len = (uint8_t)(1u << (data[1] % 4));
		uint16_t off = (uint16_t)(data[2] | data[3] << 8);
		uint8_t val[8];

		memcpy(val, data + 4, 8);
		switch (kind) {
		case 0:
		case 1:
			off %= VIRTIO_MMIO_SIZE;
			if (off + len > VIRTIO_MMIO_SIZE)
				len = 1;
			if (kind == 0)
				virtio_mmio_ops.write(&m, off, val, len);
			else
				virtio_mmio_ops.read(&m, off, val, len);
			break;
		case 2:
			memcpy(ram + off % (FUZZ_RAM_SIZE - 8), val, 8);
			break;
		case 3:
			loop_turn(d, loop);
			break;
		default:
			if (d->host_input)
				d->host_input(vdev, val, data[1] % 9);
			break;
		}
		pthread_mutex_lock(&vdev->lock);
		check(line == (m.interrupt_status != 0));
		pthread_mutex_unlock(&vdev->lock);
		data += 12;
		size -= 12;
	}
	loop_turn(d, loop);
	/* Cancels and reaps what is in flight: RAM stays until after. */
	event_loop_destroy(loop);
	vdev->ops->destroy(vdev);
	check(!atomic_load(&budget.used) &&
	      atomic_load(&budget.peak) <= budget.limit);
	if (d->input_done)
		d->input_done();
	return 0;
}
