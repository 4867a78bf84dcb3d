/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ending the machine. Success: ACPI S5 through the PM1a control register
 * (hintvm exits 0); where that register does not exist (QEMU microvm) the
 * debug-exit port with 0 (QEMU exits 1). Failure: debug-exit with 1.
 */
#ifndef TK_POWER_H
#define TK_POWER_H

#include <stdbool.h>

__attribute__((noreturn)) void machine_exit(bool success);

#endif
