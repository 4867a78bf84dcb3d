/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fault: a deliberate triple fault on the BSP. With an empty IDT the #UD
 * cannot be delivered (#GP), neither can that (#DF), so the CPU shuts down:
 * the VMM must report a guest crash (QEMU resets unless -no-reboot). The
 * RESULT line comes first because nothing runs afterwards; expect= tells a
 * harness what must follow.
 */
#include "console.h"
#include "payload.h"
#include "smp.h"
#include "x86.h"

static void fault_run(struct cpu *cpu)
{
	struct descriptor_table_ptr empty = { 0, 0 };

	if (cpu->nr != 0)
		return;
	printk("RESULT test=fault cpus=%u ok=1 expect=triple-fault",
	       smp_online_count());
	lidt(&empty);
	__asm__ volatile("ud2");
}

static bool fault_report(struct result *r)
{
	printk("fault: still running after the triple fault");
	return false;
}

const struct payload payload_fault = {
	.name = "fault",
	.run = fault_run,
	.report = fault_report,
};
