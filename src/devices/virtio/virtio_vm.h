/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The virtio devices of one VM: created from the configuration (--disk,
 * --net, --console virtio, --rng), served by one io_uring event loop
 * thread, and put on the architecture's transport: PCI on x86
 * (virtio_vm_plug_pci), MMIO on arm64 (virtio_vm_plug_mmio, which reports
 * what the device tree must describe).
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_VM_H
#define HVM_DEVICES_VIRTIO_VIRTIO_VM_H

#include <stdint.h>

#include "core/irq.h"
#include "devices/pci/pci.h"

struct vm;

#define VIRTIO_VM_MAX_DEVICES 16

/* Create the devices and the event loop (none when no device is asked). */
int virtio_vm_create(struct vm *vm);

/* Number of devices virtio_vm_create made. */
unsigned int virtio_vm_count(const struct vm *vm);

/*
 * x86: put every device on HOST's bus. When the guest is a Linux kernel
 * (--kernel) and its command line does not say otherwise, "pci=noacpi"
 * is appended: hintvm's ACPI tables describe no PCI root bridge, and this
 * makes Linux scan bus 0 through configuration mechanism #1.
 */
int virtio_vm_plug_pci(struct vm *vm, struct pci_host *host);

/* One virtio-mmio device as the arm64 FDT must describe it. */
struct virtio_mmio_slot {
	uint64_t base;
	uint64_t size;
	uint32_t irq; /* SPI number as given to the in-kernel GIC (gsi) */
};

/*
 * arm64: register device i on the MMIO bus at BASE + i * VIRTIO_MMIO_SIZE
 * (0x200) with interrupt line FIRST_IRQ, gsi + i (the arch's set_level
 * encodes it for KVM_IRQ_LINE). Fills SLOTS (room for
 * VIRTIO_VM_MAX_DEVICES) and *NR for the device tree ("virtio,mmio" nodes).
 */
int virtio_vm_plug_mmio(struct vm *vm, uint64_t base,
			const struct irq_line *first_irq,
			struct virtio_mmio_slot *slots, unsigned int *nr);

/* Stop the event loop and free every device (before guest RAM goes). */
void virtio_vm_destroy(struct vm *vm);

#endif
