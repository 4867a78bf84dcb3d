// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "sched/hint_abi.h"
#include "sched/policy.h"

/*
 * Commit thresholds. Run-queue wait is measured as a share of the time the
 * vCPU threads wanted a CPU (run + wait), in permille; pressure is
 * /proc/pressure/cpu "some avg10" in hundredths of a percent. Enter and
 * leave thresholds differ (a Schmitt trigger) so a value hovering at one
 * threshold does not toggle the state.
 */
#define OVER_ENTER_WAIT_PM 200
#define OVER_LEAVE_WAIT_PM 100
#define UNDER_ENTER_WAIT_PM 20
#define UNDER_LEAVE_WAIT_PM 50
#define OVER_ENTER_PRESSURE 4000
#define OVER_LEAVE_PRESSURE 2000
#define UNDER_ENTER_PRESSURE 500
#define UNDER_LEAVE_PRESSURE 1000
/* Waiting below 1% of the interval per vCPU is noise, not contention. */
#define WAIT_SIGNIFICANT_PCT 1
/* Throttled for 5% of the interval: the cgroup quota is the bottleneck. */
#define THROTTLE_OVER_PCT 5

/* Halt polling. */
#define POLL_GROW_SUCCESS_PM 500 /* grow at >= 50% successful polls */
#define POLL_SHRINK_SUCCESS_PM 250 /* shrink below 25% */
#define POLL_SHRINK_FAIL_RATIO 4 /* or when failed polls cost 4x more */
/* Waits shorter than 2^15 ns (~33 µs) would have been caught by polling. */
#define SHORT_WAIT_NS (1u << 15) /* ~33 µs: halt_wait_hist buckets 0-15 */
#define PROBE_MIN_HALTS 16
#define PROBE_BACKOFF_INTERVALS 10

const char *commit_state_name(enum commit_state state)
{
	switch (state) {
	case COMMIT_UNDER:
		return "undercommitted";
	case COMMIT_BALANCED:
		return "balanced";
	case COMMIT_OVER:
		return "overcommitted";
	}
	return "?";
}

const char *pin_plan_name(enum pin_plan plan)
{
	switch (plan) {
	case PIN_PLAN_NONE:
		return "none";
	case PIN_PLAN_DEDICATED:
		return "dedicated";
	case PIN_PLAN_SHARED:
		return "shared";
	}
	return "?";
}

static unsigned int min_u(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/* ---- commit state ---- */

struct load {
	uint32_t wait_pm; /* 0 when the waiting was insignificant */
	uint32_t pressure;
	bool throttled; /* any throttling */
	bool heavily_throttled;
	bool structural; /* more vCPUs than allowed CPUs */
};

static struct load measure(const struct policy_snapshot *s)
{
	unsigned int nr = min_u(s->nr_vcpus, POLICY_MAX_VCPUS);
	uint64_t run = 0, wait = 0;
	struct load l = {
		.pressure = s->have_pressure ? s->pressure_avg10_centi : 0,
		.throttled = s->throttled_ns > 0,
		.heavily_throttled = s->throttled_ns * 100 >=
				     s->interval_ns * THROTTLE_OVER_PCT,
		.structural = s->nr_vcpus > s->nr_allowed,
	};

	for (unsigned int i = 0; i < nr; i++) {
		run += s->vcpus[i].run_ns;
		wait += s->vcpus[i].wait_ns;
	}
	if (run + wait > 0 &&
	    wait * 100 >= s->interval_ns * nr * WAIT_SIGNIFICANT_PCT)
		l.wait_pm = (uint32_t)(wait * 1000 / (run + wait));
	return l;
}

/* The state this interval's numbers point to, given the current state. */
static enum commit_state classify(const struct load *l, enum commit_state cur)
{
	bool over, under;

	if (cur == COMMIT_OVER)
		over = l->wait_pm >= OVER_LEAVE_WAIT_PM ||
		       l->pressure >= OVER_LEAVE_PRESSURE || l->throttled;
	else
		over = l->wait_pm >= OVER_ENTER_WAIT_PM ||
		       l->pressure >= OVER_ENTER_PRESSURE ||
		       l->heavily_throttled;
	if (over)
		return COMMIT_OVER;

	if (cur == COMMIT_UNDER)
		under = l->wait_pm < UNDER_LEAVE_WAIT_PM &&
			l->pressure < UNDER_LEAVE_PRESSURE;
	else
		under = l->wait_pm < UNDER_ENTER_WAIT_PM &&
			l->pressure < UNDER_ENTER_PRESSURE;
	if (under && !l->structural && !l->throttled)
		return COMMIT_UNDER;
	return COMMIT_BALANCED;
}

static unsigned int streak_needed(enum commit_state target)
{
	switch (target) {
	case COMMIT_OVER:
		return POLICY_STREAK_TO_OVER;
	case COMMIT_BALANCED:
		return POLICY_STREAK_TO_BALANCED;
	case COMMIT_UNDER:
		break;
	}
	return POLICY_STREAK_TO_UNDER;
}

/*
 * Adopt RAW only after it persisted. Intervals that point the same way
 * (worse, or better) count together; the state adopted is the mildest
 * change they agreed on.
 */
static void commit_step(struct policy_state *st, enum commit_state raw,
			bool structural)
{
	bool up = raw > st->commit;

	if (raw == st->commit) {
		st->pending = st->commit;
		st->streak = 0;
		return;
	}
	/* More vCPUs than CPUs is a fact, not noise: leave UNDER at once. */
	if (structural && st->commit == COMMIT_UNDER) {
		st->commit = raw;
		st->pending = raw;
		st->streak = 0;
		return;
	}
	if (st->streak > 0 && (st->pending > st->commit) == up) {
		st->streak++;
		if (up)
			st->pending = raw < st->pending ? raw : st->pending;
		else
			st->pending = raw > st->pending ? raw : st->pending;
	} else {
		st->pending = raw;
		st->streak = 1;
	}
	if (st->streak >= streak_needed(st->pending)) {
		st->commit = st->pending;
		st->streak = 0;
	}
}

/* ---- pinning ---- */

static void plan_dedicated(struct policy_action *a, const uint16_t *cpus,
			   unsigned int nr_vcpus)
{
	a->pin = PIN_PLAN_DEDICATED;
	for (unsigned int i = 0; i < POLICY_MAX_VCPUS; i++)
		a->vcpu_cpu[i] = i < nr_vcpus ? (int16_t)cpus[i] : -1;
}

static void plan_shared(struct policy_action *a, const uint16_t *cpus,
			unsigned int nr)
{
	a->pin = PIN_PLAN_SHARED;
	a->nr_cpu_set = min_u(nr, POLICY_MAX_VCPUS);
	memcpy(a->cpu_set, cpus, a->nr_cpu_set * sizeof(cpus[0]));
	for (unsigned int i = 0; i < POLICY_MAX_VCPUS; i++)
		a->vcpu_cpu[i] = -1;
}

static bool all_allowed(const int16_t *vcpu_cpu, unsigned int nr_vcpus,
			const uint16_t *allowed, unsigned int nr_allowed)
{
	for (unsigned int i = 0; i < nr_vcpus; i++) {
		bool found = false;

		for (unsigned int j = 0; j < nr_allowed && !found; j++)
			found = vcpu_cpu[i] == allowed[j];
		if (!found)
			return false;
	}
	return true;
}

static void plan_pinning(const struct sched_settings *set,
			 const struct policy_state *st, unsigned int nr_vcpus,
			 const uint16_t *allowed, unsigned int nr_allowed,
			 struct policy_action *a)
{
	unsigned int nr = min_u(nr_vcpus, POLICY_MAX_VCPUS);

	a->pin = PIN_PLAN_NONE;
	for (unsigned int i = 0; i < POLICY_MAX_VCPUS; i++)
		a->vcpu_cpu[i] = -1;
	a->nr_cpu_set = 0;
	if (!set->hints)
		return;

	switch (set->pin) {
	case PIN_NONE:
		return;
	case PIN_DEDICATED:
		if (nr_vcpus <= nr_allowed)
			plan_dedicated(a, allowed, nr);
		else
			plan_shared(a, allowed, nr_allowed);
		return;
	case PIN_LIST:
		if (set->nr_pin_cpus >= nr_vcpus)
			plan_dedicated(a, set->pin_cpus, nr);
		else
			plan_shared(a, set->pin_cpus, set->nr_pin_cpus);
		return;
	case PIN_AUTO:
		break;
	}

	if (st->commit == COMMIT_UNDER && nr_vcpus <= nr_allowed) {
		/* Keep an existing dedicated mapping: no needless migration. */
		if (st->pin == PIN_PLAN_DEDICATED &&
		    all_allowed(st->vcpu_cpu, nr, allowed, nr_allowed)) {
			a->pin = PIN_PLAN_DEDICATED;
			memcpy(a->vcpu_cpu, st->vcpu_cpu, sizeof(a->vcpu_cpu));
		} else {
			plan_dedicated(a, allowed, nr);
		}
	} else if (st->commit == COMMIT_OVER) {
		/* Let the host scheduler move vCPUs to whichever CPU frees up. */
		plan_shared(a, allowed, nr_allowed);
	} else if (st->pin == PIN_PLAN_DEDICATED && nr_vcpus <= nr_allowed &&
		   all_allowed(st->vcpu_cpu, nr, allowed, nr_allowed)) {
		/* Balanced: keep what is in effect (hysteresis). */
		a->pin = PIN_PLAN_DEDICATED;
		memcpy(a->vcpu_cpu, st->vcpu_cpu, sizeof(a->vcpu_cpu));
	} else if (st->pin != PIN_PLAN_NONE) {
		plan_shared(a, allowed, nr_allowed);
	}
}

/* Whether plan A differs from what state ST says is in effect. */
static bool pin_changed(const struct policy_action *a,
			const struct policy_state *st, unsigned int nr_vcpus)
{
	if (a->pin != st->pin)
		return true;
	if (a->pin == PIN_PLAN_DEDICATED)
		return memcmp(a->vcpu_cpu, st->vcpu_cpu,
			      min_u(nr_vcpus, POLICY_MAX_VCPUS) *
				      sizeof(a->vcpu_cpu[0])) != 0;
	return false;
}

/* ---- halt polling ---- */

static uint32_t auto_poll_start(enum commit_state commit)
{
	switch (commit) {
	case COMMIT_UNDER:
		return POLICY_HALT_POLL_INITIAL_NS;
	case COMMIT_BALANCED:
		return POLICY_HALT_POLL_STEP_NS;
	case COMMIT_OVER:
		break;
	}
	return 0;
}

/*
 * KVM halts whose block (the wait after the poll window) may have ended
 * within LIMIT_NS, judged by the histogram bucket's lower bound.
 */
static uint64_t waits_below(const struct halt_obs *h, uint64_t limit_ns)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < POLICY_HALT_HIST_BUCKETS; i++) {
		/* bucket 0 holds 0 ns, bucket i [2^(i-1), 2^i) ns */
		uint64_t lower = i ? 1ull << (i - 1) : 0;

		if (lower < limit_ns)
			n += h->wait_hist[i];
	}
	return n;
}

/* At least half of enough halts blocked for less than LIMIT_NS. */
static bool waits_mostly_below(const struct halt_obs *h, uint64_t limit_ns)
{
	uint64_t all = waits_below(h, UINT64_MAX);

	return all >= PROBE_MIN_HALTS && waits_below(h, limit_ns) * 2 >= all;
}

/* Twice CUR (from 0: one step), at most CEILING. */
static uint32_t poll_grown(uint32_t cur, uint32_t ceiling)
{
	uint64_t grown = cur ? (uint64_t)cur * 2 : POLICY_HALT_POLL_STEP_NS;

	return grown > ceiling ? ceiling : (uint32_t)grown;
}

/* The next auto halt-poll value; updates the probe back-off in ST. */
static uint32_t auto_poll_next(const struct halt_obs *h,
			       struct policy_state *st)
{
	uint32_t cur = st->halt_poll_ns;
	uint32_t ceiling = st->commit == COMMIT_UNDER
				   ? POLICY_HALT_POLL_MAX_NS
				   : POLICY_HALT_POLL_BALANCED_MAX_NS;
	uint64_t success_pm;
	bool near_misses;

	if (st->commit == COMMIT_OVER)
		return 0; /* a polling vCPU steals the CPU another one needs */
	if (cur > ceiling)
		cur = ceiling;
	/*
	 * Wake-ups that came soon after the window closed: KVM's
	 * halt_wait_hist counts the block after the poll, so blocks no
	 * longer than CUR would have been caught by a window twice as long
	 * (KVM grows its own window on the same grounds).
	 */
	near_misses = cur && cur < ceiling && waits_mostly_below(h, cur);

	if (h->attempted_polls == 0) {
		/* Nothing polled: probe when wake-ups would have been soon. */
		if (cur == 0 && st->poll_backoff > 0) {
			st->poll_backoff--;
			return 0;
		}
		if (cur == 0 && waits_mostly_below(h, SHORT_WAIT_NS))
			return POLICY_HALT_POLL_STEP_NS;
		/*
		 * KVM grows its own window only for halts shorter than our
		 * limit, so a limit just short of the wake-ups never polls.
		 */
		return near_misses ? poll_grown(cur, ceiling) : cur;
	}

	success_pm = h->successful_polls * 1000 / h->attempted_polls;
	if ((success_pm >= POLL_GROW_SUCCESS_PM &&
	     h->poll_fail_ns <= h->poll_success_ns) ||
	    near_misses)
		return poll_grown(cur, ceiling);
	if (success_pm < POLL_SHRINK_SUCCESS_PM ||
	    h->poll_fail_ns / POLL_SHRINK_FAIL_RATIO > h->poll_success_ns) {
		uint32_t shrunk = cur / 2;

		if (shrunk < POLICY_HALT_POLL_STEP_NS) {
			/* Do not re-probe at once: that would flap 0 <-> step. */
			st->poll_backoff = PROBE_BACKOFF_INTERVALS;
			return 0;
		}
		return shrunk;
	}
	return cur;
}

/* Whether KVM blocked or polled any halted vCPU in the interval. */
static bool halts_seen(const struct halt_obs *h)
{
	return waits_below(h, UINT64_MAX) || h->attempted_polls;
}

static void plan_halt_poll(const struct sched_settings *set,
			   const struct halt_obs *h, struct policy_state *st,
			   struct policy_action *a)
{
	uint32_t want;

	a->set_halt_poll = false;
	a->halt_poll_ns = st->halt_poll_ns;
	if (!set->hints)
		return; /* KVM's default stays in effect */

	switch (set->halt_poll) {
	case HALT_POLL_OFF:
		want = 0;
		break;
	case HALT_POLL_FIXED:
		want = set->halt_poll_ns;
		break;
	case HALT_POLL_AUTO:
	default:
		if (st->exits_disabled && !(h && halts_seen(h)))
			return; /* no HLT exits, nothing to poll */
		if (st->exits_disabled) {
			/*
			 * KVM accepted KVM_X86_DISABLE_EXITS_HLT but still
			 * blocks halted vCPUs (nested hosts do): poll after
			 * all, from where a fresh VM would start.
			 */
			st->exits_disabled = false;
			want = auto_poll_start(st->commit);
			break;
		}
		want = h ? auto_poll_next(h, st) : auto_poll_start(st->commit);
		break;
	}
	if (!st->halt_poll_set || want != st->halt_poll_ns) {
		a->set_halt_poll = true;
		a->halt_poll_ns = want;
		st->halt_poll_ns = want;
		st->halt_poll_set = true;
	}
}

/* ---- putting it together ---- */

static void finish_action(struct policy_action *a, unsigned int nr_vcpus)
{
	struct policy_state *st = &a->next;

	a->apply_pin = pin_changed(a, st, nr_vcpus);
	st->pin = a->pin;
	memcpy(st->vcpu_cpu, a->vcpu_cpu, sizeof(st->vcpu_cpu));
}

void policy_decide(const struct policy_snapshot *s, struct policy_action *a)
{
	const struct sched_settings *set = &s->settings;
	struct load l;

	memset(a, 0, sizeof(*a));
	a->next = s->state;
	if (!set->hints) {
		/* The plain-VMM baseline: observe, never act. */
		a->pin = PIN_PLAN_NONE;
		a->halt_poll_ns = s->state.halt_poll_ns;
		return;
	}

	l = measure(s);
	commit_step(&a->next, classify(&l, a->next.commit), l.structural);
	a->commit_changed = a->next.commit != s->state.commit;

	plan_pinning(set, &a->next, s->nr_vcpus, s->allowed_cpus, s->nr_allowed,
		     a);
	finish_action(a, s->nr_vcpus);
	plan_halt_poll(set, &s->halt, &a->next, a);
	a->act_on_hints = a->next.commit != COMMIT_UNDER;
}

static bool in_set(uint16_t cpu, const uint16_t *set, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		if (set[i] == cpu)
			return true;
	return false;
}

/* "0,2,5" (truncated with "..." when it does not fit). */
static void format_cpus(const uint16_t *cpus, unsigned int nr, char *buf,
			size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < nr; i++) {
		int n = snprintf(buf + used, len - used, "%s%u", i ? "," : "",
				 cpus[i]);

		if (n < 0 || (size_t)n >= len - used) {
			if (len > 4)
				strcpy(buf + len - 4, "...");
			return;
		}
		used += (size_t)n;
	}
}

static enum commit_state initial_commit(const struct policy_create_input *in)
{
	uint32_t pressure = in->have_pressure ? in->pressure_avg10_centi : 0;

	if (pressure >= OVER_ENTER_PRESSURE)
		return COMMIT_OVER;
	if (in->nr_vcpus > in->nr_allowed)
		return COMMIT_BALANCED;
	if (pressure < UNDER_ENTER_PRESSURE)
		return COMMIT_UNDER;
	return COMMIT_BALANCED;
}

int policy_vm_create(const struct policy_create_input *in,
		     struct policy_create_decision *out)
{
	const struct sched_settings *set = &in->settings;
	struct policy_action *a = &out->first;
	struct policy_state *st = &a->next;
	bool every_vcpu_dedicated;

	memset(out, 0, sizeof(*out));
	st->commit = initial_commit(in);
	st->pending = st->commit;
	st->pin = PIN_PLAN_NONE;
	for (unsigned int i = 0; i < POLICY_MAX_VCPUS; i++)
		st->vcpu_cpu[i] = -1;
	if (!set->hints) {
		a->pin = PIN_PLAN_NONE;
		for (unsigned int i = 0; i < POLICY_MAX_VCPUS; i++)
			a->vcpu_cpu[i] = -1;
		return 0;
	}

	if (in->nr_vcpus > POLICY_MAX_VCPUS && set->pin != PIN_NONE)
		return hvm_set_error(
			-EINVAL, "--pin: %u vCPUs, at most %u can be pinned",
			in->nr_vcpus, POLICY_MAX_VCPUS);
	if (set->pin == PIN_DEDICATED && in->nr_vcpus > in->nr_allowed)
		return hvm_set_error(
			-EINVAL,
			"--pin dedicated: %u vCPUs but this process may use only %u host CPUs; expected at most one vCPU per CPU",
			in->nr_vcpus, in->nr_allowed);
	if (set->pin == PIN_LIST) {
		if (set->nr_pin_cpus == 0)
			return hvm_set_error(
				-EINVAL,
				"--pin: empty CPU list, expected at least one CPU");
		for (unsigned int i = 0; i < set->nr_pin_cpus; i++) {
			char allowed[256];

			if (in_set(set->pin_cpus[i], in->allowed_cpus,
				   in->nr_allowed))
				continue;
			format_cpus(in->allowed_cpus, in->nr_allowed, allowed,
				    sizeof(allowed));
			return hvm_set_error(
				-EINVAL,
				"--pin: host CPU %u is not one this process may use; expected CPUs from %s (affinity and cpuset)",
				set->pin_cpus[i], allowed);
		}
	}

	plan_pinning(set, st, in->nr_vcpus, in->allowed_cpus, in->nr_allowed,
		     a);
	finish_action(a, in->nr_vcpus);

	/*
	 * Disabling HLT/PAUSE exits hands the physical CPU to the guest even
	 * while it idles or spins; that only pays when nobody else wants the
	 * CPU. It cannot be undone later, so it needs a dedicated CPU per
	 * vCPU, and with --pin auto also no pressure right now.
	 */
	every_vcpu_dedicated =
		a->pin == PIN_PLAN_DEDICATED &&
		(set->pin != PIN_AUTO || st->commit == COMMIT_UNDER);
	out->disable_hlt_exits =
		every_vcpu_dedicated && in->host_can_disable_hlt;
	out->disable_pause_exits =
		every_vcpu_dedicated && in->host_can_disable_pause;
	st->exits_disabled = out->disable_hlt_exits;

	plan_halt_poll(set, NULL, st, a);
	a->act_on_hints = st->commit != COMMIT_UNDER;
	return 0;
}

struct hint_decision policy_on_hint(const struct policy_state *state,
				    const struct sched_settings *settings,
				    unsigned int kind, unsigned int from,
				    unsigned int target)
{
	struct hint_decision d = { .boost_vcpu = -1 };

	/* Undercommitted: the holder has its own CPU and is running. */
	if (!settings->hints || state->commit == COMMIT_UNDER)
		return d;
	switch (kind) {
	case HINT_KIND_SPIN_ON_HOLDER:
		if (target == from || target >= POLICY_MAX_VCPUS)
			return d;
		d.yield_self = true;
		d.boost_vcpu = (int)target;
		d.boost_us = POLICY_HINT_BOOST_US;
		break;
	case HINT_KIND_IDLE_POLL:
		/* Polling for work only pays when nobody waits for the CPU. */
		d.yield_self = state->commit == COMMIT_OVER;
		break;
	}
	return d;
}

uint32_t policy_on_irq_inject(const struct policy_state *state,
			      const struct sched_settings *settings)
{
	if (!settings->hints || state->commit == COMMIT_UNDER)
		return 0;
	return POLICY_IRQ_BOOST_US;
}
