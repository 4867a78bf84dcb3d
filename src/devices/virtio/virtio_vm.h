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

#include <stddef.h>

/*
 * Snapshots (docs/snapshot.md). Check: 0 when every device can be saved
 * (virtio-blk, -console, -rng on PCI), else -EOPNOTSUPP with "device
 * NAME cannot be snapshotted yet (why)".
 */
int virtio_vm_check_snapshot(const struct vm *vm);
/*
 * With the vCPUs paused: stop every device taking new work (kicks are
 * recorded) and wait, at most 10 s, until what they took is answered, so
 * no request is half done while the state and memory are saved.
 * -ETIMEDOUT naming the device (then thawed).
 */
int virtio_vm_freeze(struct vm *vm);
/* Serve again, with the kicks that arrived meanwhile. */
void virtio_vm_thaw(struct vm *vm);
/*
 * Device I (0 .. virtio_vm_count() - 1): its NAME and the LEN bytes of its
 * state (docs/snapshot.md), or -EOPNOTSUPP naming it.
 */
int virtio_vm_device_state(const struct vm *vm, unsigned int i,
			   const char **name, size_t *len);
/* Frozen and drained: write device I's state (LEN bytes) to BUF. */
int virtio_vm_save_device(struct vm *vm, unsigned int i, void *buf);
/*
 * Load device I from BUF (LEN bytes): every field checked, the disk's
 * size and mode against the image opened. -EINVAL naming the device.
 */
int virtio_vm_load_device(struct vm *vm, unsigned int i, const void *buf);
/*
 * For a message about a device section the restoring machine does not
 * match: what the restoring command line must name again, from the
 * section's own state (STATE, LEN bytes after its header) where NAME's
 * kind records it: " (on tap T: give --net tap=T)" for virtio-net, else
 * "". Written to BUF (SIZE bytes); never trusts STATE beyond LEN.
 */
void virtio_vm_section_hint(const char *name, const void *state, size_t len,
			    char *buf, size_t size);
/* After every device is loaded: kick each enabled queue of a live one. */
void virtio_vm_restored(struct vm *vm);

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
