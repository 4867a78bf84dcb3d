/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VM's devices, placed by the builder: the platform devices on the
 * slots the architecture describes (arch_platform(), core/arch.h), then
 * the virtio devices on the PCI host where the platform has one, else on
 * virtio-mmio windows. The same code for every architecture.
 */
#ifndef HVM_VMM_PLATFORM_H
#define HVM_VMM_PLATFORM_H

struct vm;
struct snap_writer;
struct snap_file;

/* After arch_vm_init, before the vCPUs exist. */
int platform_place(struct vm *vm);

/* After virtio_vm_destroy (the PCI host outlives its devices). */
void platform_destroy(struct vm *vm);

/*
 * Snapshots (docs/snapshot.md): whether every device can be saved (-EOPNOTSUPP
 * naming the first that cannot), each device's state as a device section,
 * and each section checked and loaded back into the freshly placed device
 * (PATH names the file in messages).
 */
int platform_check_snapshot(struct vm *vm);
int platform_save(struct vm *vm, struct snap_writer *w);
int platform_load(struct vm *vm, const struct snap_file *f, const char *path);

#endif
