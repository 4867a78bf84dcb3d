/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hello: every online CPU reaches C, says so, and is counted. */
#include "console.h"
#include "payload.h"
#include "smp.h"

static volatile uint32_t checked_in;

static void hello_run(struct cpu *cpu)
{
	printk("hello from cpu %u apic %u", cpu->nr, cpu->apic_id);
	__atomic_add_fetch(&checked_in, 1, __ATOMIC_ACQ_REL);
}

static bool hello_report(struct result *r)
{
	return READ_ONCE(checked_in) == smp_online_count();
}

const struct payload payload_hello = {
	.name = "hello",
	.run = hello_run,
	.report = hello_report,
};
