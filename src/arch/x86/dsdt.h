/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The DSDT's AML body: \_S5 for power-off, and under \_SB the pvpanic
 * device and the PCI root bridge, so that a Linux guest finds bus 0 through
 * ACPI like on any PC (no "pci=noacpi" needed).
 */
#ifndef HVM_ARCH_X86_DSDT_H
#define HVM_ARCH_X86_DSDT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write the AML body (what follows the table header) to BUF of CAP bytes.
 * Returns its length, or 0 when CAP is too small.
 */
size_t dsdt_build_aml(uint8_t *buf, size_t cap);

#endif
