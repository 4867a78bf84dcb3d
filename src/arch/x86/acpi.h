/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Minimal ACPI tables so that a Linux guest finds its CPUs and interrupt
 * controllers (MADT), can power off (FADT PM1a control block + \_S5 in the
 * DSDT), reset (FADT RESET_REG) and report a panic (the pvpanic device in
 * the DSDT), without any firmware:
 *
 *   RSDP (v2) -> XSDT -> FADT -> FACS, DSDT
 *                     -> MADT
 *
 * All of it lives in [X86_ACPI_GPA, X86_ACPI_GPA + X86_ACPI_MAX), in the
 * reserved window below 1 MiB, with the RSDP first so that kernels that
 * scan 0xe0000-0xfffff for "RSD PTR " find it too.
 */
#ifndef HVM_ARCH_X86_ACPI_H
#define HVM_ARCH_X86_ACPI_H

#include <stdbool.h>
#include <stdint.h>

struct guest_memory;

/* Local APIC IDs are 8 bits in the MADT entries hintvm writes. */
#define ACPI_MAX_VCPUS 255

/* Where each table went (guest-physical addresses), for tests and logs. */
struct acpi_layout {
	uint64_t rsdp, xsdt, fadt, facs, dsdt, madt;
	uint64_t end; /* first byte after the last table */
};

/*
 * Write the tables for NR_VCPUS vCPUs (APIC IDs 0..NR_VCPUS-1). LEGACY_PIC:
 * the machine has the dual 8259 (the in-kernel irqchip); without it the
 * MADT says there is none. Returns 0 and fills LAYOUT (may be NULL), or
 * -errno with a message.
 */
int acpi_build_tables(struct guest_memory *mem, unsigned int nr_vcpus,
		      bool legacy_pic, struct acpi_layout *layout);

#endif
