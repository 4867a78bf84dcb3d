// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fault: on every CPU, EL0 reads an unmapped address and then writes to
 * read-only kernel text; each must arrive at EL1 as a data abort from EL0
 * (ESR class 0x24) with the faulting address in FAR, after which the CPU
 * carries on. (The x86 kernel's "fault" ends in a triple fault instead;
 * arm64 has no equivalent, so this one proves the exception path.)
 */
#include "payload.h"

#define EC_DABT_LOWER 0x24
#define DFSC_MASK 0x3c /* fault status without the level */
#define DFSC_TRANSLATION 0x04
#define DFSC_PERMISSION 0x0c
#define UNMAPPED_VA 0x80000000ULL /* 2 GiB: no level-1 entry */

static volatile uint32_t good[MAX_CPUS];

/* Run at EL0. */
static uint64_t read_unmapped(void *arg)
{
	return *(volatile uint64_t *)(uintptr_t)UNMAPPED_VA;
}

static uint64_t write_text(void *arg)
{
	*(volatile uint32_t *)arg = 0;
	return 0;
}

static bool expect_fault(struct cpu *cpu, uint64_t (*fn)(void *), void *arg,
			 uint64_t far, uint32_t dfsc)
{
	uint32_t before = cpu->faults;
	uint64_t esr;

	if (run_user(fn, arg) != EL0_FAULTED || cpu->faults != before + 1)
		return false;
	esr = cpu->fault_esr;
	if (esr >> 26 != EC_DABT_LOWER || (esr & DFSC_MASK) != dfsc ||
	    cpu->fault_far != far) {
		printk("fault: cpu %u esr=0x%lx far=0x%lx, expected a data abort at 0x%lx",
		       cpu->nr, esr, cpu->fault_far, far);
		return false;
	}
	return true;
}

static void fault_run(struct cpu *cpu)
{
	extern char _start[];

	if (expect_fault(cpu, read_unmapped, NULL, UNMAPPED_VA,
			 DFSC_TRANSLATION) &&
	    expect_fault(cpu, write_text, _start, (uintptr_t)_start,
			 DFSC_PERMISSION))
		good[cpu->nr] = 1;
}

static bool fault_report(struct result *r)
{
	unsigned int n = smp_online_count(), ok = 0;

	for (unsigned int i = 0; i < n; i++)
		ok += good[i];
	result_add(r, "faults", "%u", 2 * ok);
	result_add(r, "esr", "0x%lx", cpus[0].fault_esr);
	return ok == n;
}

const struct payload payload_fault = {
	.name = "fault",
	.run = fault_run,
	.report = fault_report,
};
