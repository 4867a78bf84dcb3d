/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exits: the cost of a port-I/O exit to the VMM. The BSP writes
 * `count` times to X86_BENCH_NOP_PORT, which no device claims, with the
 * same three-instruction loop bench/floor runs (out; dec; jnz), and times
 * it with rdtsc. cpl=0 (default) runs the loop in kernel mode like the
 * floor; cpl=3 runs it in user mode (the TSS I/O bitmap allows the port).
 * The RESULT line carries raw cycles: the benchmark converts them with the
 * host's TSC rate, since the guest may not know its own (tsc_known=0).
 *
 * hold_ms=N: afterwards print "exits: holding" and wait N ms, so a
 * benchmark can read the VMM's memory use while the VM is still alive.
 * Parameters: count=N cpl=0|3 hold_ms=N.
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "payload.h"
#include "timing.h"
#include "x86.h"

static uint64_t count, cpl, hold_ms;
static uint64_t cycles;

/* Same loop as bench/floor: out dx, al; dec ecx; jnz. */
static uint64_t exit_loop(void *arg)
{
	uint32_t n = (uint32_t)(uintptr_t)arg;
	uint64_t start = rdtsc();

	if (n) {
		__asm__ volatile("1: outb %%al, %%dx\n\t"
				 "decl %%ecx\n\t"
				 "jnz 1b"
				 : "+c"(n)
				 : "a"(0), "d"(X86_BENCH_NOP_PORT)
				 : "memory", "cc");
	}
	return rdtsc() - start;
}

static uint64_t hold_user(void *arg)
{
	uint64_t end = rdtsc() + ms_to_tsc((uint64_t)(uintptr_t)arg);

	while (rdtsc() < end)
		cpu_relax();
	return 0;
}

static bool exits_setup(void)
{
	return cmdline_get_u64("count", 10000, 0, 0xffffffff, &count) &&
	       cmdline_get_u64("cpl", 0, 0, 3, &cpl) &&
	       cmdline_get_u64("hold_ms", 0, 0, 60000, &hold_ms);
}

static void exits_run(struct cpu *cpu)
{
	void *arg = (void *)(uintptr_t)count;

	if (cpu->nr != 0)
		return;
	cycles = cpl == 3 ? run_at_cpl3(exit_loop, arg) : exit_loop(arg);
	if (hold_ms) {
		printk("exits: holding");
		run_at_cpl3(hold_user, (void *)(uintptr_t)hold_ms);
	}
}

static bool exits_report(struct result *r)
{
	result_add(r, "exits", "%lu", count);
	result_add(r, "cpl", "%lu", cpl);
	result_add(r, "cycles", "%lu", cycles);
	result_add(r, "tsc_khz", "%lu", tsc_khz());
	result_add(r, "tsc_known", "%d", tsc_khz_known());
	return true;
}

const struct payload payload_exits = {
	.name = "exits",
	.setup = exits_setup,
	.run = exits_run,
	.report = exits_report,
};
