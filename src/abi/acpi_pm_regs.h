/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ACPI PM1 control register bits the acpi_pm model implements, shared
 * with the DSDT's \_S5 package (arch/x86/dsdt.c) and the built-in test
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

#endif
