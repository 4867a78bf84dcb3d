/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * QEMU isa-debug-exit compatible port: a write of value V ends the VM and
 * hintvm exits with status (V << 1) | 1. DEV is a struct power_sink *.
 */
#ifndef HVM_DEVICES_DEBUG_EXIT_H
#define HVM_DEVICES_DEBUG_EXIT_H

#include "core/bus.h"

#define DEBUG_EXIT_LEN 4

extern const struct bus_ops debug_exit_bus_ops;

#endif
