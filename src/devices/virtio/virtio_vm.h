/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The virtio devices of one VM: created from the configuration (--disk,
 * --net, --console virtio, --rng, --vsock), served by one io_uring event loop
 * thread, and put on the machine's transport by the builder
 * (vmm/platform.c): the PCI host where the platform has one (x86), else
 * virtio-mmio windows the arch hands out.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_VM_H
#define HVM_DEVICES_VIRTIO_VIRTIO_VM_H

#include <stdint.h>

#include "devices/pci/pci.h"

struct vm;

#define VIRTIO_VM_MAX_DEVICES 16

/*
 * Create the devices and the event loop (none when no device is asked;
 * nothing when already created).
 */
int virtio_vm_create(struct vm *vm);

/*
 * The VM's virtio-vsock device (--vsock), or NULL: for hintvm's own host
 * services (virtio_vsock_add_host_listener(), virtio_vsock.h).
 */
struct virtio_device *virtio_vm_vsock(const struct vm *vm);

/* Number of devices virtio_vm_create made. */
unsigned int virtio_vm_count(const struct vm *vm);

/*
 * Snapshots: 0 when the VM has no virtio device, else -EOPNOTSUPP with
 * "device NAME cannot be snapshotted yet" (virtio state is not saved).
 */
int virtio_vm_check_snapshot(const struct vm *vm);

/*
 * x86: put every device on HOST's bus, which the DSDT describes as the PCI
 * root bridge (src/arch/x86/dsdt.c).
 */
int virtio_vm_plug_pci(struct vm *vm, struct pci_host *host);

/*
 * After arch_vm_init: create the devices if nobody did, and put every
 * device not yet on a transport on a virtio-mmio window claimed with
 * arch_virtio_mmio_slot(), which the architecture then describes to the
 * guest (arm64: a "virtio,mmio" FDT node). Nothing to do where
 * virtio_vm_plug_pci() already placed them all.
 */
int virtio_vm_plug_mmio(struct vm *vm);

/* Stop the event loop and free every device (before guest RAM goes). */
void virtio_vm_destroy(struct vm *vm);

#endif
