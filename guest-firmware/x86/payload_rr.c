/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rr: request/response with hintvm's host-side partner (--rr-partner,
 * src/abi/rr_partner_abi.h), the netperf TCP_RR analog for halt
 * polling. The BSP rings the partner's doorbell (an ioeventfd on the
 * host), halts with interrupts enabled, and is woken by the answer (an
 * irqfd on an I/O APIC pin); one transaction = ring + halt + wake. Whether
 * the host polls before putting the halted vCPU to sleep is what the
 * `haltpoll` benchmark varies.
 *
 * Reports transactions per second, latency percentiles (TSC ticks, and µs
 * from the guest's idea of the TSC rate) and the host CPU time the whole
 * VMM burned meanwhile, which the partner measures (cpu_ns).
 * service_us=N makes the partner take N µs per request (a server's
 * think time): then the vCPU really halts between requests. Without it the
 * answer is often back before the emulated guest kernel reaches `hlt` on
 * the dev host.
 * long_us=N long_pct=P make the idle periods bimodal (issue 35's halt-poll
 * Pareto): each transaction is a long one, served in long_us, with
 * probability P% (a fixed-seed xorshift, so every run draws the same
 * sequence), else a short one in service_us. The guest rewrites the
 * partner's service time before ringing, outside the timed span, only
 * when it changes. A single polling window cannot fit both modes: the
 * case an adaptive chooser is for.
 * Parameters: txns=N (at most RR_MAX_TXNS) service_us=N long_us=N
 * long_pct=P.
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "abi/rr_partner_abi.h"
#include "payload.h"
#include "timing.h"
#include "trap.h"
#include "x86.h"

#define RR_MAX_TXNS 200000
#define RR_VECTOR DEVICE_VECTOR_BASE
#define IOAPIC_REGSEL 0x00
#define IOAPIC_WINDOW 0x10
#define IOAPIC_REDIR_LOW(pin) (0x10 + 2 * (pin))
#define IOAPIC_REDIR_HIGH(pin) (0x11 + 2 * (pin))

static uint64_t txns, service_us, long_us, long_pct, longs;
static uint64_t latencies[RR_MAX_TXNS];
static uint64_t total_cycles;
static uint64_t host_cpu_ns;
static volatile uint64_t answers;
static bool partner_missing;

static void ioapic_write(uint32_t reg, uint32_t value)
{
	volatile uint32_t *base =
		(volatile uint32_t *)(uintptr_t)X86_IOAPIC_GPA;

	base[IOAPIC_REGSEL / 4] = reg;
	base[IOAPIC_WINDOW / 4] = value;
}

static void rr_answer(unsigned int vector)
{
	answers++;
}

static bool rr_setup(void)
{
	if (!cmdline_get_u64("txns", 10000, 1, RR_MAX_TXNS, &txns) ||
	    !cmdline_get_u64("service_us", 0, 0, RR_MAX_SERVICE_US,
			     &service_us) ||
	    !cmdline_get_u64("long_us", 0, 0, RR_MAX_SERVICE_US, &long_us) ||
	    !cmdline_get_u64("long_pct", 0, 0, 100, &long_pct))
		return false;
	if (inl(X86_RR_PARTNER_PORT + RR_REG_DOORBELL) != RR_PARTNER_MAGIC) {
		printk("rr: no partner at port 0x%x (run hintvm with "
		       "--rr-partner)",
		       X86_RR_PARTNER_PORT);
		partner_missing = true;
		return false;
	}
	outl(X86_RR_PARTNER_PORT + RR_REG_SERVICE_US, (uint32_t)service_us);
	irq_set_handler(RR_VECTOR, rr_answer);
	/* Edge-triggered, active high, fixed delivery to the BSP. */
	ioapic_write(IOAPIC_REDIR_HIGH(X86_RR_PARTNER_IRQ),
		     this_cpu()->apic_id << 24);
	ioapic_write(IOAPIC_REDIR_LOW(X86_RR_PARTNER_IRQ), RR_VECTOR);
	return true;
}

/* Whether the next transaction is a long one (xorshift64, fixed seed). */
static bool draw_long(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x % 100 < long_pct;
}

static void rr_run(struct cpu *cpu)
{
	uint64_t start, rng = 0x9e3779b97f4a7c15ull;
	bool was_long = false;

	if (cpu->nr != 0)
		return;
	outl(X86_RR_PARTNER_PORT + RR_REG_CONTROL, RR_CTRL_START);
	start = rdtsc();
	for (uint64_t i = 0; i < txns; i++) {
		bool is_long = long_pct && draw_long(&rng);

		if (is_long != was_long)
			outl(X86_RR_PARTNER_PORT + RR_REG_SERVICE_US,
			     (uint32_t)(is_long ? long_us : service_us));
		was_long = is_long;
		longs += is_long;

		uint64_t t0 = rdtsc();

		outl(X86_RR_PARTNER_PORT + RR_REG_DOORBELL, (uint32_t)i);
		/* cli, check, then sti;hlt: an answer cannot slip in between
		 * the check and the halt. */
		for (;;) {
			irq_disable();
			if (answers > i)
				break;
			irq_enable_and_halt();
		}
		latencies[i] = rdtsc() - t0;
	}
	total_cycles = rdtsc() - start;
	outl(X86_RR_PARTNER_PORT + RR_REG_CONTROL, RR_CTRL_STOP);
	host_cpu_ns = inl(X86_RR_PARTNER_PORT + RR_REG_CPU_NS_LO) |
		      (uint64_t)inl(X86_RR_PARTNER_PORT + RR_REG_CPU_NS_HI)
			      << 32;
}

/* Heap sort at CPL3 (native speed; CPL0 is emulated on the dev host). */
static void sift_down(uint64_t *a, uint64_t root, uint64_t n)
{
	for (;;) {
		uint64_t child = 2 * root + 1, top = root;

		if (child < n && a[child] > a[top])
			top = child;
		if (child + 1 < n && a[child + 1] > a[top])
			top = child + 1;
		if (top == root)
			return;
		uint64_t t = a[root];
		a[root] = a[top];
		a[top] = t;
		root = top;
	}
}

static uint64_t sort_latencies(void *arg)
{
	uint64_t n = txns;

	for (uint64_t i = n / 2; i-- > 0;)
		sift_down(latencies, i, n);
	for (uint64_t end = n; end-- > 1;) {
		uint64_t t = latencies[0];

		latencies[0] = latencies[end];
		latencies[end] = t;
		sift_down(latencies, 0, end);
	}
	return 0;
}

static uint64_t percentile(unsigned int pct)
{
	return latencies[(txns - 1) * pct / 100];
}

static bool rr_report(struct result *r)
{
	uint64_t p50, p99;

	if (partner_missing)
		return false;
	run_at_cpl3(sort_latencies, NULL);
	p50 = percentile(50);
	p99 = percentile(99);
	result_add(r, "txns", "%lu", txns);
	result_add(r, "service_us", "%lu", service_us);
	if (long_pct) {
		result_add(r, "long_us", "%lu", long_us);
		result_add(r, "long_pct", "%lu", long_pct);
		result_add(r, "longs", "%lu", longs);
	}
	result_add(r, "cycles", "%lu", total_cycles);
	result_add(r, "p50_cycles", "%lu", p50);
	result_add(r, "p99_cycles", "%lu", p99);
	result_add(r, "p50_us", "%lu", tsc_to_us(p50));
	result_add(r, "p99_us", "%lu", tsc_to_us(p99));
	result_add(r, "cpu_ns", "%lu", host_cpu_ns);
	return answers == txns;
}

const struct payload payload_rr = {
	.name = "rr",
	.setup = rr_setup,
	.run = rr_run,
	.report = rr_report,
};
