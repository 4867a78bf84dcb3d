// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smp-count: every CPU adds 1 to one shared counter ITERATIONS times with
 * atomic read-modify-writes at EL0; the total must come out exact, proving
 * the CPUs ran concurrently without losing an update. Parameter:
 * iterations=N.
 */
#include "cmdline.h"
#include "payload.h"

static uint64_t iterations;
static uint64_t counter;
static volatile uint64_t per_cpu[MAX_CPUS];

static bool count_setup(void)
{
	return cmdline_get_u64("iterations", 10000, 1, 100000000, &iterations);
}

/* Runs at EL0. */
static uint64_t count_user(void *arg)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < iterations; i++) {
		__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
		n++;
	}
	return n;
}

static void count_run(struct cpu *cpu)
{
	per_cpu[cpu->nr] = run_user(count_user, NULL);
}

static bool count_report(struct result *r)
{
	unsigned int n = smp_online_count();
	uint64_t want = iterations * n, sum = 0;

	for (unsigned int i = 0; i < n; i++)
		sum += per_cpu[i];
	result_add(r, "iterations", "%lu", iterations);
	result_add(r, "total", "%lu",
		   __atomic_load_n(&counter, __ATOMIC_ACQUIRE));
	return sum == want &&
	       __atomic_load_n(&counter, __ATOMIC_ACQUIRE) == want;
}

const struct payload payload_smp_count = {
	.name = "smp-count",
	.setup = count_setup,
	.run = count_run,
	.report = count_report,
};
