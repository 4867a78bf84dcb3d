/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snap-count: a guest whose progress shows in its output, for snapshot
 * tests (docs/snapshot.md). Every CPU counts in user mode, in chunks of
 * `chunk` increments of its own counter; after each of its chunks CPU 0
 * prints "snap-count seq=S c0=N c1=N ..." with S = 1, 2, 3, ... A VM
 * snapshotted and restored anywhere in this must go on printing seq S+1
 * after S, with every counter at least what it was: nothing lost, nothing
 * repeated. Ends after `lines` lines. Parameters: chunk=N, lines=N.
 */
#include "cmdline.h"
#include "payload.h"
#include "payload_arch.h"

static uint64_t chunk, lines;
static volatile uint64_t counters[MAX_CPUS];
static volatile uint32_t done;
static uint64_t printed;

static bool snap_setup(void)
{
	return cmdline_get_u64("chunk", 1000000, 1, UINT64_MAX, &chunk) &&
	       cmdline_get_u64("lines", 10, 1, UINT64_MAX, &lines);
}

/* Runs in user mode: the counting never leaves the guest. */
static uint64_t snap_user(void *arg)
{
	volatile uint64_t *c = arg;

	for (uint64_t i = 0; i < chunk; i++)
		*c = *c + 1;
	return 0;
}

static void snap_run(struct cpu *cpu)
{
	char line[24 * MAX_CPUS + 32];

	if (cpu->nr) {
		while (!READ_ONCE(done))
			run_user(snap_user, (void *)&counters[cpu->nr]);
		return;
	}
	for (printed = 1; printed <= lines; printed++) {
		size_t n;

		run_user(snap_user, (void *)&counters[0]);
		n = snformat(line, sizeof(line), "snap-count seq=%lu", printed);
		for (unsigned int i = 0; i < smp_online_count(); i++)
			n += snformat(line + n, sizeof(line) - n, " c%u=%lu", i,
				      counters[i]);
		printk("%s", line);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

static bool snap_report(struct result *r)
{
	result_add(r, "lines", "%lu", printed - 1);
	return printed - 1 == lines;
}

const struct payload payload_snap_count = {
	.name = "snap-count",
	.setup = snap_setup,
	.run = snap_run,
	.report = snap_report,
};
