/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ending the machine. Success: ACPI S5 through the PM1a control register
 * (hintvm exits 0); where that register does not exist (QEMU microvm) the
 * debug-exit port with 0 (QEMU exits 1). Failure: debug-exit with 1.
 */
#include "lib.h"

#include "arch/x86/platform.h"
#include "abi/acpi_pm_regs.h"
#include "x86.h"

#define DEBUG_EXIT_SUCCESS 0
#define DEBUG_EXIT_FAILURE 1

extern void halt_forever(void) __attribute__((noreturn));

void machine_exit(bool success)
{
	if (success) {
		outw(X86_PM1A_CNT_PORT,
		     (ACPI_SLP_TYP_S5 << ACPI_SLP_TYP_SHIFT) | ACPI_SLP_EN);
		outl(X86_DEBUG_EXIT_PORT, DEBUG_EXIT_SUCCESS);
	} else {
		outl(X86_DEBUG_EXIT_PORT, DEBUG_EXIT_FAILURE);
	}
	halt_forever();
}
