/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ipi: all-to-all IPIs (x86: fixed IPIs on vector IPI_VECTOR_BASE + sender;
 * arm64: SGIs numbered by the sender). In each round every CPU sends one
 * IPI to every other CPU on its own vector, so the receiver knows the
 * sender and two IPIs from one sender are never pending together (rounds
 * are separated by a barrier): every IPI must be counted exactly once.
 * Receivers wait with interrupts on (x86: HLT, arm64: WFI); the IPIs
 * themselves end the waits. Parameter: rounds=N.
 */
#include "cmdline.h"
#include "payload.h"
#include "payload_arch.h"

#define ROUND_TIMEOUT_MS 2000

static uint64_t rounds;
/* received[receiver][sender], each row written only by its receiver. */
static volatile uint32_t received[MAX_CPUS][MAX_CPUS];
static volatile uint32_t timeouts;

static void ipi_handler(unsigned int irq)
{
	received[this_cpu()->nr][ipi_sender(irq)]++;
}

static bool ipi_setup(void)
{
	if (!cmdline_get_u64("rounds", 4, 1, 100000, &rounds))
		return false;
	for (unsigned int s = 0; s < smp_online_count(); s++)
		irq_set_handler(ipi_irq(s), ipi_handler);
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
				ipi_send(t, ipi_irq(me));
		}
		if (!wait_irq_ms(round_complete, &r, ROUND_TIMEOUT_MS))
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
