// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ipi: all-to-all SGIs. In each round every CPU sends one SGI to every
 * other CPU, with its own index as the SGI number, so the receiver knows
 * the sender and two SGIs from one sender are never pending together
 * (rounds are separated by a barrier): every one must be counted exactly
 * once. Receivers wait in WFI. Parameter: rounds=N.
 */
#include "cmdline.h"
#include "payload.h"

#define ROUND_TIMEOUT_MS 2000

static uint64_t rounds;
/* received[receiver][sender], each row written only by its receiver. */
static volatile uint32_t received[MAX_CPUS][MAX_CPUS];
static volatile uint32_t timeouts;

static void ipi_handler(unsigned int intid)
{
	received[this_cpu()->nr][intid]++;
}

static bool ipi_setup(void)
{
	if (!cmdline_get_u64("rounds", 4, 1, 100000, &rounds))
		return false;
	for (unsigned int s = 0; s < smp_online_count(); s++)
		irq_set_handler(s, ipi_handler);
	return true;
}

struct round {
	unsigned int me;
	uint32_t want;
};

static bool round_complete(void *arg)
{
	const struct round *r = arg;

	for (unsigned int s = 0; s < smp_online_count(); s++) {
		if (s != r->me && received[r->me][s] < r->want)
			return false;
	}
	return true;
}

static void ipi_run(struct cpu *cpu)
{
	unsigned int n = smp_online_count(), me = cpu->nr;

	for (uint32_t round = 1; round <= rounds; round++) {
		struct round r = { me, round };

		for (unsigned int t = 0; t < n; t++) {
			if (t != me)
				gic_send_sgi(cpus[t].mpidr, me);
		}
		if (!wait_irq(round_complete, &r,
			      now_ticks() + ms_to_ticks(ROUND_TIMEOUT_MS)))
			__atomic_add_fetch(&timeouts, 1, __ATOMIC_RELAXED);
		smp_barrier();
	}
}

static bool ipi_report(struct result *r)
{
	unsigned int n = smp_online_count();
	uint64_t total = 0, wrong = 0;

	for (unsigned int recv = 0; recv < n; recv++) {
		for (unsigned int s = 0; s < n; s++) {
			uint32_t want = recv == s ? 0 : (uint32_t)rounds;

			total += received[recv][s];
			if (received[recv][s] != want) {
				if (!wrong)
					printk("ipi: cpu %u got %u from cpu %u, expected %u",
					       recv, received[recv][s], s,
					       want);
				wrong++;
			}
		}
	}
	result_add(r, "ipis", "%lu", total);
	result_add(r, "rounds", "%lu", rounds);
	if (wrong)
		result_add(r, "wrong", "%lu", wrong);
	if (timeouts)
		result_add(r, "timeouts", "%u", timeouts);
	return !wrong && !timeouts;
}

const struct payload payload_ipi = {
	.name = "ipi",
	.setup = ipi_setup,
	.run = ipi_run,
	.report = ipi_report,
};
