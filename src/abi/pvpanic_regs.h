/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pvpanic register as QEMU defines it (docs/specs/pvpanic.rst there):
 * one byte, at an I/O port on x86 and at an MMIO address in a device tree.
 * Shared by the device model and the arch tables that describe it. Only
 * plain #defines: freestanding guest code may include this.
 */
#ifndef HVM_ABI_PVPANIC_REGS_H
#define HVM_ABI_PVPANIC_REGS_H

#define PVPANIC_LEN 1
#define PVPANIC_PANICKED (1u << 0) /* the host should handle the panic */
#define PVPANIC_CRASH_LOADED (1u << 1) /* the guest's kdump handles it */
#define PVPANIC_EVENTS (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED)

#endif
