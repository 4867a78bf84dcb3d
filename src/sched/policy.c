// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "abi/hint_abi.h"
#include "base/log.h"
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

	/*
	 * An explicit pin (dedicated, a CPU list) is the user's decision, not
	 * the brain's: it holds with --sched-hints off too, so a hand-tuned
	 * plain VMM can be compared with the brain (issue 35).
	 */
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
		if (!set->hints)
			return; /* auto is the brain's choice: none without it */
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

static uint32_t poll_budget_pm(enum commit_state commit)
{
	switch (commit) {
	case COMMIT_UNDER:
		return POLICY_POLL_BUDGET_UNDER_PM;
	case COMMIT_BALANCED:
		return POLICY_POLL_BUDGET_BALANCED_PM;
	case COMMIT_OVER:
		break;
	}
	return POLICY_POLL_BUDGET_OVER_PM;
}

/* Whether KVM blocked or polled any halted vCPU in the interval. */
static bool halts_seen(const struct halt_obs *h)
{
	for (unsigned int i = 0; i < POLICY_HALT_HIST_BUCKETS; i++)
		if (h->wait_hist[i])
			return true;
	return h->attempted_polls;
}

/*
 * The window chooser (haltpoll.c) for the VM as a whole, or for each vCPU
 * on its own histograms when KVM takes a limit per vCPU.
 */
static uint32_t auto_poll_next(const struct policy_snapshot *s,
			       struct policy_state *st, struct policy_action *a)
{
	struct haltpoll_limits lim = {
		.max_ns = st->commit == COMMIT_UNDER
				  ? POLICY_HALT_POLL_MAX_NS
				  : POLICY_HALT_POLL_BALANCED_MAX_NS,
		.budget_pm = poll_budget_pm(st->commit),
		.interval_ns = s->interval_ns,
		.nr_vcpus = 1,
	};
	unsigned int nr = min_u(s->nr_vcpus, POLICY_MAX_VCPUS);

	if (!s->per_vcpu_halt_poll) {
		lim.nr_vcpus = s->nr_vcpus;
		st->vm_poll.window_ns = st->halt_poll_ns;
		return haltpoll_choose(&s->halt, &lim, &st->vm_poll);
	}
	if (!st->vcpu_poll_active) {
		/* Each vCPU starts from where the VM was. */
		for (unsigned int i = 0; i < nr; i++) {
			st->vcpu_poll[i] = HALTPOLL_WINDOW_INIT;
			st->vcpu_poll[i].window_ns = st->halt_poll_ns;
			a->set_vcpu_halt_poll[i] = true;
			a->vcpu_halt_poll_ns[i] = st->halt_poll_ns;
		}
		st->vcpu_poll_active = true;
	}
	for (unsigned int i = 0; i < nr; i++) {
		uint32_t before = st->vcpu_poll[i].window_ns;
		uint32_t w = haltpoll_choose(&s->vcpus[i].halt, &lim,
					     &st->vcpu_poll[i]);

		if (w != before) {
			a->set_vcpu_halt_poll[i] = true;
			a->vcpu_halt_poll_ns[i] = w;
		}
	}
	/* The VM's own value stays the ceiling a new vCPU would inherit. */
	return st->halt_poll_ns;
}

static void plan_halt_poll(const struct sched_settings *set,
			   const struct policy_snapshot *s,
			   struct policy_state *st, struct policy_action *a)
{
	const struct halt_obs *h = s ? &s->halt : NULL;
	uint32_t want;

	a->set_halt_poll = false;
	a->halt_poll_ns = st->halt_poll_ns;
	/*
	 * Off or a fixed cap is the user's decision and holds with
	 * --sched-hints off too; auto without the brain is KVM's default.
	 */
	if (!set->hints && set->halt_poll == HALT_POLL_AUTO)
		return;

	if (set->halt_poll != HALT_POLL_AUTO && st->vcpu_poll_active) {
		/* The user's value is for every vCPU: drop their own. */
		a->reset_vcpu_halt_poll = true;
		st->vcpu_poll_active = false;
	}
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
		want = s ? auto_poll_next(s, st, a)
			 : auto_poll_start(st->commit);
		break;
	}
	if (!st->halt_poll_set || want != st->halt_poll_ns) {
		a->set_halt_poll = true;
		a->halt_poll_ns = want;
		st->halt_poll_ns = want;
		st->halt_poll_set = true;
	}
}

/* ---- dynamic PLE (kernel series, x86) ---- */

static uint32_t ple_for(enum commit_state commit)
{
	switch (commit) {
	case COMMIT_UNDER:
		return POLICY_PLE_OFF; /* a spinner spins on its own CPU */
	case COMMIT_OVER:
		return POLICY_PLE_TIGHT; /* the one it waits for may be out */
	case COMMIT_BALANCED:
		break;
	}
	return POLICY_PLE_DEFAULT;
}

static void plan_ple(bool have_control, struct policy_state *st,
		     struct policy_action *a)
{
	uint32_t want = ple_for(st->commit);

	if (!have_control || (st->ple_set && st->ple_window == want))
		return;
	a->set_ple = true;
	a->ple_window = want;
	st->ple_set = true;
	st->ple_window = want;
}

/* ---- boost headroom ---- */

/*
 * Headroom only pays where a vCPU has siblings to be raised above: a
 * single vCPU resting lower would only lose CPU to other tenants.
 */
static void plan_rest_nice(const struct sched_settings *set,
			   unsigned int nr_vcpus, struct policy_state *st,
			   struct policy_action *a)
{
	int want = set->hints && a->act_on_hints && nr_vcpus > 1
			   ? POLICY_BOOST_HEADROOM_NICE
			   : 0;

	if (want == st->rest_nice_offset)
		return;
	a->set_rest_nice = true;
	st->rest_nice_offset = want;
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
		/*
		 * The plain-VMM baseline: no observation drives anything. What
		 * the user set explicitly (--pin dedicated or a list,
		 * --halt-poll off or a cap) stays applied, and a change of it
		 * through `ctl set` is applied as a stock VMM would.
		 */
		if (set->pin == PIN_AUTO) {
			/* `set sched-hints off`: auto's plan stays frozen. */
			a->pin = a->next.pin;
			memcpy(a->vcpu_cpu, a->next.vcpu_cpu,
			       sizeof(a->vcpu_cpu));
		} else {
			plan_pinning(set, &a->next, s->nr_vcpus,
				     s->allowed_cpus, s->nr_allowed, a);
			finish_action(a, s->nr_vcpus);
		}
		plan_halt_poll(set, s, &a->next, a);
		/* ...and the priority headroom taken for boosts goes back. */
		plan_rest_nice(set, s->nr_vcpus, &a->next, a);
		return;
	}

	l = measure(s);
	commit_step(&a->next, classify(&l, a->next.commit), l.structural);
	a->commit_changed = a->next.commit != s->state.commit;

	plan_pinning(set, &a->next, s->nr_vcpus, s->allowed_cpus, s->nr_allowed,
		     a);
	finish_action(a, s->nr_vcpus);
	plan_halt_poll(set, s, &a->next, a);
	plan_ple(s->ple_control, &a->next, a);
	a->act_on_hints = a->next.commit != COMMIT_UNDER;
	plan_rest_nice(set, s->nr_vcpus, &a->next, a);
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
	/* A plain VMM keeps its exits: giving them up is the brain's call. */
	if (!set->hints)
		every_vcpu_dedicated = false;
	out->disable_hlt_exits =
		every_vcpu_dedicated && in->host_can_disable_hlt;
	out->disable_pause_exits =
		every_vcpu_dedicated && in->host_can_disable_pause;
	st->exits_disabled = out->disable_hlt_exits;

	plan_halt_poll(set, NULL, st, a);
	plan_ple(in->ple_control && set->hints, st, a);
	st->vm_poll = HALTPOLL_WINDOW_INIT;
	st->vm_poll.window_ns = st->halt_poll_ns;
	a->act_on_hints = set->hints && st->commit != COMMIT_UNDER;
	plan_rest_nice(set, in->nr_vcpus, st, a);
	return 0;
}

struct hint_decision policy_on_hint(const struct policy_state *state,
				    const struct sched_settings *settings,
				    bool guest_releases, unsigned int kind,
				    unsigned int from, unsigned int target)
{
	struct hint_decision d = { .boost_vcpu = -1, .wake_vcpu = -1 };

	if (!settings->hints)
		return d;
	/* A hand-over ends a park whatever the state is now. */
	if (kind == HINT_KIND_RELEASED) {
		if (target == from || target >= POLICY_MAX_VCPUS)
			return d;
		d.wake_vcpu = (int)target;
		/* The new holder, when it was parked: raise it too. */
		if (state->commit != COMMIT_UNDER) {
			d.boost_vcpu = (int)target;
			d.boost_us = POLICY_HINT_BOOST_US;
		}
		return d;
	}
	/* Undercommitted: the holder has its own CPU and is running. */
	if (state->commit == COMMIT_UNDER)
		return d;
	switch (kind) {
	case HINT_KIND_SPIN_ON_HOLDER:
		if (target == from || target >= POLICY_MAX_VCPUS)
			return d;
		/* The holder first: out of a park, then raised. */
		d.wake_vcpu = (int)target;
		d.boost_vcpu = (int)target;
		d.boost_us = POLICY_HINT_BOOST_US;
		/*
		 * Parked, the spinner leaves its CPU to the holder until the
		 * lock is handed to it; a guest that never reports hand-overs
		 * would only be woken by the timeout, so it just yields.
		 */
		if (guest_releases)
			d.park_us = POLICY_PARK_MAX_US;
		else
			d.yield_self = true;
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
