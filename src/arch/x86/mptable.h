/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Intel MultiProcessor Specification 1.4 tables: how a guest booted without
 * ACPI (acpi=off, or a tiny kernel) finds its CPUs, the I/O APIC and the
 * ISA interrupt wiring.
 */
#ifndef HVM_X86_MPTABLE_H
#define HVM_X86_MPTABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/guest_memory.h"

/*
 * Write the floating pointer and configuration table for NR_CPUS CPUs
 * (APIC ids 0..NR_CPUS-1) at GPA, using at most MAX bytes. LEGACY_PIC: the
 * dual 8259 and the PIT exist (in-kernel irqchip); without them the table
 * wires no ExtINT to LINT0 and no ISA IRQ 0 (timer) or 2 (cascade).
 */
int mptable_write(const struct guest_memory *mem, uint64_t gpa, uint64_t max,
		  unsigned int nr_cpus, bool legacy_pic);

#endif
