/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU discovery from firmware tables: the ACPI MADT (QEMU, hintvm with
 * ACPI), else the MP table (hintvm). Tables come from the VMM but are still
 * checked: lengths bounded, checksums verified.
 */
#ifndef TK_CPU_TABLES_H
#define TK_CPU_TABLES_H

#include <stdint.h>

#include "layout.h"

struct cpu_list {
	unsigned int count;
	unsigned int dropped; /* listed but over MAX_CPUS or unreachable */
	uint32_t apic_ids[MAX_CPUS];
	const char *source; /* "acpi" or "mptable" */
};

/* Fill LIST from the MADT; RSDP_GPA may be 0 (then scan the BIOS area).
 * Returns 0, or -1 when there is no usable MADT. */
int acpi_find_cpus(uint64_t rsdp_gpa, struct cpu_list *list);
/* Fill LIST from the MP configuration table; 0 or -1. */
int mptable_find_cpus(struct cpu_list *list);

#endif
