/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ACPI PM1 control register bits and the GPE0 block size the acpi_pm
 * model implements, shared with the DSDT's \_S5 package and the FADT
 * (arch/x86/dsdt.c, acpi.c) and the built-in test
 * kernel (guest-firmware/x86/power.c), so all three agree by construction.
 * Only plain #defines: freestanding guest code includes this.
 */
#ifndef HVM_ABI_ACPI_PM_REGS_H
#define HVM_ABI_ACPI_PM_REGS_H

/* PM1_CNT: writing SLP_EN with SLP_TYP = S5 powers the machine off. */
#define ACPI_SLP_TYP_SHIFT 10
#define ACPI_SLP_TYP_MASK (7 << ACPI_SLP_TYP_SHIFT)
#define ACPI_SLP_TYP_S5 5
#define ACPI_SLP_EN (1 << 13)
#define ACPI_SCI_EN 1

/* The GPE0 block: GPE0_STS (2 bytes), then GPE0_EN (2), 16 events; the
 * FADT's GPE0_BLK_LEN (arch/x86/acpi.c). */
#define ACPI_GPE0_LEN 4
#define ACPI_GPE0_COUNT 16

#endif
