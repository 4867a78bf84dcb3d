/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The virtio device tests' driver side: 32-bit register accesses to a
 * virtio-mmio transport, as a guest driver makes them.
 */
#ifndef HVM_TESTS_UNIT_DEVICES_VIRTIO_MMIO_ACCESS_H
#define HVM_TESTS_UNIT_DEVICES_VIRTIO_MMIO_ACCESS_H

#include <stdint.h>

#include "devices/virtio/virtio_mmio.h"

static inline uint32_t mmio_rd(struct virtio_mmio *m, uint64_t off)
{
	uint32_t v = 0;

	virtio_mmio_ops.read(m, off, (uint8_t *)&v, 4);
	return v;
}

static inline void mmio_wr(struct virtio_mmio *m, uint64_t off, uint32_t v)
{
	virtio_mmio_ops.write(m, off, (uint8_t *)&v, 4);
}

#endif
