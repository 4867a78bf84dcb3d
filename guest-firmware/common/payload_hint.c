/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hint: the scheduling-hint channel (docs/hint-channel.md). Every CPU
 * floods it with events=N "I spin on a lock held by the next CPU" words (an
 * "I am idle-polling" word on a 1-CPU VM) as fast as it can, then reads
 * back from the channel how many of its own events were accepted and how
 * many the rate limit dropped. Claims: the channel identifies itself (magic,
 * version, vCPU count), each event was either accepted or dropped, and a
 * flood larger than the burst is rate-limited (some dropped) while at least
 * one event got through. With absent=1 the claim is the opposite: there is
 * no channel (--sched-hints off, or another VMM). The channel is reached
 * through hint_read()/hint_write() of each arch's payload_arch.h: port I/O
 * on x86, the device-tree page on arm64, both in kernel mode.
 */
#include "cmdline.h"
#include "payload.h"
#include "payload_arch.h"
#include "abi/hint_abi.h"

static uint64_t events, want_absent;
static uint32_t magic, info;
static volatile uint32_t accepted[MAX_CPUS], dropped[MAX_CPUS];

static bool hint_setup(void)
{
	if (!cmdline_get_u64("events", 500, 1, 1000000, &events) ||
	    !cmdline_get_u64("absent", 0, 0, 1, &want_absent))
		return false;
	magic = hint_read(HINT_REG_EVENT);
	info = hint_read(HINT_REG_INFO);
	return true;
}

static void hint_run(struct cpu *cpu)
{
	unsigned int n = smp_online_count(), me = cpu->nr;
	uint32_t word =
		n > 1 ? HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, (me + 1) % n)
		      : HINT_EVENT(HINT_KIND_IDLE_POLL, 0);

	if (magic != HINT_MAGIC)
		return;
	for (uint64_t i = 0; i < events; i++)
		hint_write(HINT_REG_EVENT, word);
	accepted[me] = hint_read(HINT_REG_ACCEPTED);
	dropped[me] = hint_read(HINT_REG_DROPPED);
}

static bool hint_report(struct result *r)
{
	unsigned int n = smp_online_count();
	uint64_t acc = 0, drop = 0, lost = 0;

	if (magic != HINT_MAGIC) {
		result_add(r, "channel", "absent");
		return want_absent;
	}
	for (unsigned int c = 0; c < n; c++) {
		acc += accepted[c];
		drop += dropped[c];
		if (accepted[c] + dropped[c] != events || !accepted[c]) {
			if (!lost)
				printk("hint: cpu %u: %u accepted + %u dropped, "
				       "sent %lu",
				       c, accepted[c], dropped[c], events);
			lost++;
		}
	}
	result_add(r, "channel", "v%u", info & 0xffff);
	result_add(r, "accepted", "%lu", acc);
	result_add(r, "dropped", "%lu", drop);
	if ((info >> 16) != n)
		printk("hint: channel says %u vCPUs, %u online", info >> 16, n);
	return !want_absent && !lost && (info & 0xffff) == HINT_VERSION &&
	       (info >> 16) == n;
}

const struct payload payload_hint = {
	.name = "hint",
	.setup = hint_setup,
	.run = hint_run,
	.report = hint_report,
};
