/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the test kernel's polling virtio-pci drivers share (payload_virtio,
 * payload_vsock, virtio_blk_poll): PCI bus 0 configuration reads, MMIO
 * accessors, the virtio 1.x common configuration layout, and finding a
 * function's capability structures. CPL0, no interrupts.
 */
#ifndef TK_VIRTIO_PCI_GUEST_H
#define TK_VIRTIO_PCI_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "x86.h"

#define PCI_ADDR 0xcf8
#define PCI_DATA 0xcfc
#define VIRTIO_VENDOR 0x1af4

/* virtio 1.x common configuration offsets */
#define GFSELECT 0x08
#define GF 0x0c
#define STATUS 0x14
#define Q_SELECT 0x16
#define Q_SIZE 0x18
#define Q_ENABLE 0x1c
#define Q_NOTIFY_OFF 0x1e
#define Q_DESC 0x20
#define Q_AVAIL 0x28
#define Q_USED 0x30

/* device status bits */
#define S_ACK 1
#define S_DRIVER 2
#define S_DRIVER_OK 4
#define S_FEATURES_OK 8
#define S_NEEDS_RESET 0x40

/* descriptor flags */
#define D_NEXT 1
#define D_WRITE 2
#define D_INDIRECT 4

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/* A function's BAR 0 and where its structures sit in it (0: absent). */
struct virtio_pci_func {
	uint64_t bar, common, notify, device_cfg;
	uint32_t notify_mult;
};

static inline uint32_t pci_read(unsigned int slot, unsigned int off)
{
	outl(PCI_ADDR, 0x80000000u | slot << 11 | (off & 0xfc));
	return inl(PCI_DATA) >> (8 * (off & 3));
}

static inline uint8_t mmio_read8(uint64_t a)
{
	return *(volatile uint8_t *)a;
}

static inline uint16_t mmio_read16(uint64_t a)
{
	return *(volatile uint16_t *)a;
}

static inline uint32_t mmio_read32(uint64_t a)
{
	return *(volatile uint32_t *)a;
}

static inline void mmio_write8(uint64_t a, uint8_t v)
{
	*(volatile uint8_t *)a = v;
}

static inline void mmio_write16(uint64_t a, uint16_t v)
{
	*(volatile uint16_t *)a = v;
}

static inline void mmio_write32(uint64_t a, uint32_t v)
{
	*(volatile uint32_t *)a = v;
}

static inline void mmio_write64(uint64_t a, uint64_t v)
{
	mmio_write32(a, (uint32_t)v);
	mmio_write32(a + 4, (uint32_t)(v >> 32));
}

/*
 * The first function on PCI bus 0 with virtio DEVICE_ID (0x1040 + type):
 * its BAR 0 and the common, notify (queue_notify_off 0) and device
 * structures. False when there is none or it has no common structure.
 */
bool virtio_pci_find(uint16_t device_id, struct virtio_pci_func *f);

#endif
