/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The virtio device tests' driver side: 32-bit register accesses to a
 * virtio-mmio transport, feature negotiation and queue setup, as a guest
 * driver makes them. Include after cmocka.h (the checks are cmocka's).
 */
#ifndef HVM_TESTS_UNIT_DEVICES_VIRTIO_MMIO_ACCESS_H
#define HVM_TESTS_UNIT_DEVICES_VIRTIO_MMIO_ACCESS_H

#include <stdint.h>

#include <linux/virtio_config.h>

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

/*
 * A driver's feature negotiation: ACKNOWLEDGE | DRIVER, feature word 0 =
 * LOW, word 1 = VERSION_1, FEATURES_OK, which the device must keep.
 */
static inline void mmio_negotiate(struct virtio_mmio *m, uint32_t low)
{
	mmio_wr(m, 0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	mmio_wr(m, 0x024, 0);
	mmio_wr(m, 0x020, low);
	mmio_wr(m, 0x024, 1);
	mmio_wr(m, 0x020, 1);
	mmio_wr(m, 0x070,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK);
	assert_true(mmio_rd(m, 0x070) & VIRTIO_CONFIG_S_FEATURES_OK);
}

/* Queue Q of SIZE entries at RING (descriptors; avail +0x800; used
 * +0x1000), then ready. */
static inline void mmio_queue(struct virtio_mmio *m, uint32_t q, uint32_t size,
			      uint64_t ring)
{
	mmio_wr(m, 0x030, q);
	mmio_wr(m, 0x038, size);
	mmio_wr(m, 0x080, (uint32_t)ring);
	mmio_wr(m, 0x090, (uint32_t)(ring + 0x800));
	mmio_wr(m, 0x0a0, (uint32_t)(ring + 0x1000));
	mmio_wr(m, 0x044, 1);
}

#endif
