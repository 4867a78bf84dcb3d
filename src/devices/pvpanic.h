/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pvpanic device as QEMU models it (docs/specs/pvpanic.rst there): one
 * byte that reads back the events the device supports and takes the event
 * the guest kernel reports. Linux's pvpanic driver writes PANICKED from its
 * panic notifier, or CRASH_LOADED instead when a kdump kernel is loaded and
 * will take over. On x86 it is the ISA device at port 0x505 that the guest
 * finds in the DSDT (_HID "QEMU0001"); the same register works as MMIO
 * ("qemu,pvpanic-mmio" in a device tree).
 *
 * PANICKED reports POWER_GUEST_PANIC through the power sink (the VM ends as
 * a guest crash); CRASH_LOADED is only logged, the guest keeps running.
 */
#ifndef HVM_DEVICES_PVPANIC_H
#define HVM_DEVICES_PVPANIC_H

#include "abi/pvpanic_regs.h"
#include "core/bus.h"
#include "core/power.h"

struct pvpanic;

struct pvpanic *pvpanic_create(struct power_sink power);
void pvpanic_destroy(struct pvpanic *dev);

extern const struct bus_ops pvpanic_bus_ops;

#endif
