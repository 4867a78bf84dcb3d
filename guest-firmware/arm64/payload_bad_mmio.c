// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bad-mmio: a hostile guest's device access. The boot CPU loads a register
 * pair from an unclaimed MMIO address: a load pair leaves no instruction
 * syndrome, so KVM cannot emulate it and the VMM must end the VM as a guest
 * crash that names the address, not fail as a host error or hang. The
 * RESULT line comes first because nothing runs afterwards; expect= tells a
 * harness what must follow.
 */
#include "payload.h"

#define UNCLAIMED_MMIO 0x09030000UL /* device window, no device there */

static void bad_mmio_run(struct cpu *cpu)
{
	uint64_t lo, hi;

	if (cpu->nr != 0)
		return;
	printk("RESULT test=bad-mmio cpus=%u ok=1 expect=guest-crash addr=0x%lx",
	       smp_online_count(), UNCLAIMED_MMIO);
	__asm__ volatile("ldp %0, %1, [%2]"
			 : "=r"(lo), "=r"(hi)
			 : "r"(UNCLAIMED_MMIO)
			 : "memory");
	printk("bad-mmio: the load pair returned 0x%lx 0x%lx", lo, hi);
}

static bool bad_mmio_report(struct result *r)
{
	printk("bad-mmio: still running after the undecodable MMIO access");
	return false;
}

const struct payload payload_bad_mmio = {
	.name = "bad-mmio",
	.run = bad_mmio_run,
	.report = bad_mmio_report,
};
