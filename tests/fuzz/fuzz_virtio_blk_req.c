// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the virtio-blk request parser: a ring in fuzzed
 * guest RAM is popped and each chain parsed. Every I/O the parser allows
 * must lie inside the image and every buffer and the status byte inside
 * guest RAM.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "core/guest_memory.h"
#include "devices/virtio/virtio_blk_req.h"
#include "devices/virtio/virtqueue.h"
#include "fuzz.h"

#define RAM_GPA 0x0ull
#define RAM_SIZE 0x4000ull
#define QSIZE 16

static uint8_t *ram;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, RAM_SIZE);
	return ram ? 0 : -1;
}

static int in_ram(const void *p, size_t len)
{
	const uint8_t *b = p;

	return b >= ram && len <= RAM_SIZE && b + len <= ram + RAM_SIZE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_memory mem = { 0 };
	struct virtq vq;
	struct virtq_chain *chain;
	uint64_t capacity;

	if (size < 4)
		return 0;
	memset(ram, 0, RAM_SIZE);
	memcpy(ram, data + 4, size - 4 < RAM_SIZE ? size - 4 : RAM_SIZE);
	guest_memory_add_region(&mem, RAM_GPA, RAM_SIZE, ram);
	virtq_init(&vq, &mem, QSIZE);
	/* Rings at fixed places; descriptors and requests are all fuzz. */
	vq.desc_gpa = 0;
	vq.avail_gpa = 0x100;
	vq.used_gpa = 0x200;
	if (virtq_enable(&vq, 1ull << VIRTIO_RING_F_INDIRECT_DESC))
		abort();
	capacity = (uint64_t)data[0] << (data[1] % 48);
	capacity -= capacity % VIRTIO_BLK_SECTOR;
	chain = virtq_chain_alloc(QSIZE);
	for (int i = 0; i < 2 * QSIZE; i++) {
		struct virtio_blk_req req;

		if (virtq_pop(&vq, chain) <= 0)
			break;
		if (virtio_blk_parse(chain, capacity, data[2] & 1, data[2] & 2,
				     &req) < 0)
			continue;
		if (!in_ram(req.status, 1))
			abort();
		for (unsigned int j = 0; j < req.nr_data; j++)
			if (!in_ram(req.data[j].iov_base, req.data[j].iov_len))
				abort();
		if (req.verdict == VIRTIO_BLK_S_OK &&
		    (req.type == VIRTIO_BLK_T_IN ||
		     req.type == VIRTIO_BLK_T_OUT ||
		     req.type == VIRTIO_BLK_T_DISCARD) &&
		    (req.offset > capacity || req.len > capacity - req.offset))
			abort();
		if (req.verdict == VIRTIO_BLK_S_OK &&
		    req.type == VIRTIO_BLK_T_OUT && (data[2] & 1))
			abort(); /* a write got past a read-only disk */
		virtq_push(&vq, chain->head, 1);
	}
	free(chain);
	return 0;
}
