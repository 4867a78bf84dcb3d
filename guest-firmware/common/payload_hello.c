/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hello: every online CPU reaches C, drops to user mode and says so from
 * there (x86: port I/O through its TSS I/O bitmap, the dev host ignores
 * IOPL), and is counted.
 */
#include "payload.h"
#include "payload_arch.h"

static volatile uint32_t checked_in;

/* Runs in user mode. */
static uint64_t hello_user(void *arg)
{
	hello_print(arg);
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
