// SPDX-License-Identifier: LGPL-2.1-or-later
/* hello: every online CPU drops to EL0, says so from there, and is counted. */
#include "payload.h"

static volatile uint32_t checked_in;

/* Runs at EL0. */
static uint64_t hello_user(void *arg)
{
	const struct cpu *cpu = arg;

	printk("hello from cpu %u mpidr 0x%lx at EL0", cpu->nr, cpu->mpidr);
	return 1;
}

static void hello_run(struct cpu *cpu)
{
	if (run_user(hello_user, cpu) == 1)
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
