// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness: the fuzzer's bytes become guest RAM holding a split
 * ring (plus a few bytes of queue setup), and the device side drains it.
 * Whatever the bytes, every iovec handed out must lie inside guest RAM and
 * nothing may crash or trip ASan/UBSan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "base/log.h"
#include "core/guest_memory.h"
#include "devices/virtio/virtqueue.h"
#include "fuzz.h"

#define RAM_GPA 0x1000ull
#define RAM_SIZE 0x8000ull

static uint8_t *ram;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_ERROR); /* every broken ring would warn */
	ram = aligned_alloc(4096, RAM_SIZE);
	return ram ? 0 : -1;
}

static void check_inside_ram(const struct virtq_chain *chain)
{
	uint32_t out = 0, in = 0;

	for (unsigned int i = 0; i < chain->nr_out + chain->nr_in; i++) {
		const uint8_t *b = chain->iov[i].iov_base;
		size_t len = chain->iov[i].iov_len;

		if (b < ram || len > RAM_SIZE || b + len > ram + RAM_SIZE ||
		    len == 0)
			abort();
		if (i < chain->nr_out)
			out += len;
		else
			in += len;
	}
	if (out != chain->out_len || in != chain->in_len ||
	    chain->nr_out + chain->nr_in > chain->iov_cap)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_memory mem = { 0 };
	struct virtq vq;
	struct virtq_chain *chain;
	uint64_t features = 0;
	uint16_t cap;

	if (size < 8)
		return 0;
	/* Setup bytes: queue size, features, ring placement, chain cap. */
	memset(ram, 0, RAM_SIZE);
	memcpy(ram, data + 8, size - 8 < RAM_SIZE ? size - 8 : RAM_SIZE);
	if (guest_memory_add_region(&mem, RAM_GPA, RAM_SIZE, ram))
		abort();
	virtq_init(&vq, &mem, 256);
	virtq_set_size(&vq, 1u << (data[0] % 10));
	if (data[1] & 1)
		features |= 1ull << VIRTIO_RING_F_INDIRECT_DESC;
	if (data[1] & 2)
		features |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	/* Ring offsets in 16-byte units, sometimes off RAM or misaligned. */
	vq.desc_gpa = RAM_GPA + (uint64_t)data[2] * 16 + (data[1] & 4 ? 8 : 0);
	vq.avail_gpa = RAM_GPA + (uint64_t)data[3] * 64 + (data[1] & 8);
	vq.used_gpa = RAM_GPA + (uint64_t)data[4] * 64 + (data[1] & 16);
	if (data[1] & 32)
		vq.used_gpa = UINT64_MAX - data[4];
	cap = data[5] ? data[5] : 256;
	if (virtq_enable(&vq, features))
		return 0;
	chain = virtq_chain_alloc(cap);
	if (!chain)
		abort();
	virtq_disable_notify(&vq);
	for (int i = 0; i < 600; i++) {
		int ret = virtq_pop(&vq, chain);

		if (ret < 0 && !vq.broken)
			abort();
		if (ret <= 0) {
			if (ret < 0 || !virtq_enable_notify(&vq))
				break;
			continue;
		}
		check_inside_ram(chain);
		if (chain->head >= vq.size)
			abort();
		virtq_push(&vq, chain->head, chain->in_len);
		if (data[6] & 1)
			virtq_should_notify(&vq);
	}
	free(chain);
	return 0;
}
