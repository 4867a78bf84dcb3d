// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The scheduling policy, transition by transition: the static decisions at
 * VM creation, commit-state hysteresis, pinning plans, halt-poll adaptation
 * and its bounds, hint and interrupt boosts, and the --sched-hints off
 * baseline that must never act.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "abi/hint_abi.h"
#include "base/log.h"
#include "sched/policy.h"

#define INTERVAL_NS 100000000ull /* 100 ms */

static struct sched_settings hints_on(void)
{
	return (struct sched_settings){ .pin = PIN_AUTO,
					.halt_poll = HALT_POLL_AUTO,
					.hints = true };
}

static struct policy_create_input create_input(unsigned int vcpus,
					       unsigned int cpus)
{
	struct policy_create_input in = {
		.settings = hints_on(),
		.nr_vcpus = vcpus,
		.nr_allowed = cpus,
		.have_pressure = true,
		.host_can_disable_hlt = true,
		.host_can_disable_pause = true,
	};

	for (unsigned int i = 0; i < cpus; i++)
		in.allowed_cpus[i] = (uint16_t)(i + 2); /* CPUs 2, 3, ... */
	return in;
}

/* A snapshot continuing from a creation decision. */
static struct policy_snapshot
snapshot_after(const struct policy_create_input *in,
	       const struct policy_create_decision *d)
{
	struct policy_snapshot s = {
		.interval_ns = INTERVAL_NS,
		.nr_vcpus = in->nr_vcpus,
		.nr_allowed = in->nr_allowed,
		.have_pressure = true,
		.settings = in->settings,
		.state = d->first.next,
	};

	memcpy(s.allowed_cpus, in->allowed_cpus, sizeof(s.allowed_cpus));
	return s;
}

/* Every vCPU ran half the interval and waited so that wait/(run+wait)=PM. */
static void set_wait_share(struct policy_snapshot *s, unsigned int pm)
{
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		s->vcpus[i].run_ns = INTERVAL_NS / 2;
		s->vcpus[i].wait_ns = INTERVAL_NS / 2 * pm / (1000 - pm);
	}
}

static void step(struct policy_snapshot *s, struct policy_action *a)
{
	policy_decide(s, a);
	s->state = a->next;
	memset(&s->halt, 0, sizeof(s->halt));
	for (unsigned int i = 0; i < POLICY_MAX_VCPUS; i++)
		memset(&s->vcpus[i].halt, 0, sizeof(s->vcpus[i].halt));
}

/* Start a 2-vCPU VM on 2 CPUs in state STATE (via quiet/loaded steps). */
static struct policy_snapshot vm_in_state(enum commit_state state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	in.host_can_disable_hlt = false; /* keep halt polling in play */
	in.host_can_disable_pause = false;
	in.pressure_avg10_centi = state == COMMIT_OVER	     ? 5000
				  : state == COMMIT_BALANCED ? 2000
							     : 0;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.next.commit, state);
	s = snapshot_after(&in, &d);
	s.pressure_avg10_centi = in.pressure_avg10_centi;
	(void)a;
	return s;
}

/* ---- creation ---- */

static void test_create_hints_off_is_plain_vmm(void **state)
{
	struct policy_create_input in = create_input(2, 4);
	struct policy_create_decision d;

	/* Defaults (pin auto, halt-poll auto): nothing is touched. */
	in.settings.hints = false;
	in.pressure_avg10_centi = 9000;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_false(d.disable_hlt_exits);
	assert_false(d.disable_pause_exits);
	assert_false(d.first.apply_pin);
	assert_int_equal(d.first.pin, PIN_PLAN_NONE);
	assert_false(d.first.set_halt_poll);
	assert_false(d.first.set_ple);
	assert_false(d.first.set_rest_nice);
	assert_false(d.first.act_on_hints);
}

/*
 * A hand-tuned plain VMM (issue 35's stock baseline): an explicit pin and
 * halt-poll cap hold with hints off, but the exits stay (giving them up is
 * the brain's decision) and nothing acts on hints.
 */
static void test_create_hints_off_honours_explicit_settings(void **state)
{
	struct policy_create_input in = create_input(2, 4);
	struct policy_create_decision d;

	in.settings.hints = false;
	in.settings.pin = PIN_DEDICATED;
	in.settings.halt_poll = HALT_POLL_FIXED;
	in.settings.halt_poll_ns = 5000;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.apply_pin);
	assert_int_equal(d.first.pin, PIN_PLAN_DEDICATED);
	assert_int_equal(d.first.vcpu_cpu[0], 2);
	assert_int_equal(d.first.vcpu_cpu[1], 3);
	assert_true(d.first.set_halt_poll);
	assert_int_equal(d.first.halt_poll_ns, 5000);
	assert_false(d.disable_hlt_exits);
	assert_false(d.disable_pause_exits);
	assert_false(d.first.act_on_hints);

	/* A CPU list with fewer CPUs than vCPUs: shared, as with hints on. */
	in = create_input(2, 4);
	in.settings.hints = false;
	in.settings.pin = PIN_LIST;
	in.settings.pin_cpus[0] = 3;
	in.settings.nr_pin_cpus = 1;
	in.settings.halt_poll = HALT_POLL_OFF;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.apply_pin);
	assert_int_equal(d.first.pin, PIN_PLAN_SHARED);
	assert_int_equal(d.first.nr_cpu_set, 1);
	assert_int_equal(d.first.cpu_set[0], 3);
	assert_true(d.first.set_halt_poll);
	assert_int_equal(d.first.halt_poll_ns, 0);

	/* Explicit values are validated as with hints on. */
	in.settings.pin_cpus[0] = 40;
	assert_int_equal(policy_vm_create(&in, &d), -EINVAL);
}

static void test_create_auto_undercommitted_dedicates(void **state)
{
	struct policy_create_input in = create_input(2, 4);
	struct policy_create_decision d;

	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.next.commit, COMMIT_UNDER);
	assert_true(d.first.apply_pin);
	assert_int_equal(d.first.pin, PIN_PLAN_DEDICATED);
	assert_int_equal(d.first.vcpu_cpu[0], 2);
	assert_int_equal(d.first.vcpu_cpu[1], 3);
	assert_int_equal(d.first.vcpu_cpu[2], -1);
	assert_true(d.disable_hlt_exits);
	assert_true(d.disable_pause_exits);
	/* No HLT exits: nothing to poll, KVM's value is irrelevant. */
	assert_false(d.first.set_halt_poll);
	assert_false(d.first.act_on_hints);
}

static void test_create_exits_follow_host_caps(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;

	in.host_can_disable_hlt = false;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_false(d.disable_hlt_exits);
	assert_true(d.disable_pause_exits);
	assert_true(d.first.set_halt_poll);
	assert_int_equal(d.first.halt_poll_ns, POLICY_HALT_POLL_INITIAL_NS);
}

static void test_create_auto_with_pressure(void **state)
{
	struct {
		uint32_t pressure;
		enum commit_state commit;
		enum pin_plan pin;
		uint32_t poll;
	} rows[] = {
		{ 0, COMMIT_UNDER, PIN_PLAN_DEDICATED, 0 /* exits off */ },
		{ 499, COMMIT_UNDER, PIN_PLAN_DEDICATED, 0 },
		{ 500, COMMIT_BALANCED, PIN_PLAN_NONE,
		  POLICY_HALT_POLL_STEP_NS },
		{ 3999, COMMIT_BALANCED, PIN_PLAN_NONE,
		  POLICY_HALT_POLL_STEP_NS },
		{ 4000, COMMIT_OVER, PIN_PLAN_SHARED, 0 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct policy_create_input in = create_input(2, 2);
		struct policy_create_decision d;

		in.pressure_avg10_centi = rows[i].pressure;
		assert_int_equal(policy_vm_create(&in, &d), 0);
		assert_int_equal(d.first.next.commit, rows[i].commit);
		assert_int_equal(d.first.pin, rows[i].pin);
		/* Exits are disabled only when undercommitted. */
		assert_int_equal(d.disable_hlt_exits,
				 rows[i].commit == COMMIT_UNDER);
		if (rows[i].commit != COMMIT_UNDER) {
			assert_true(d.first.set_halt_poll);
			assert_int_equal(d.first.halt_poll_ns, rows[i].poll);
			assert_true(d.first.act_on_hints);
		}
	}
}

static void test_create_no_pressure_info_counts_as_quiet(void **state)
{
	struct policy_create_input in = create_input(1, 1);
	struct policy_create_decision d;

	in.have_pressure = false;
	in.pressure_avg10_centi = 9000; /* ignored */
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.next.commit, COMMIT_UNDER);
}

static void test_create_more_vcpus_than_cpus(void **state)
{
	struct policy_create_input in = create_input(4, 2);
	struct policy_create_decision d;

	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.next.commit, COMMIT_BALANCED);
	assert_false(d.disable_hlt_exits);
	assert_false(d.disable_pause_exits);
	assert_int_equal(d.first.pin, PIN_PLAN_NONE);
}

static void test_create_dedicated(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;

	in.settings.pin = PIN_DEDICATED;
	/* Explicit dedicated pinning disables exits even under pressure. */
	in.pressure_avg10_centi = 9000;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.pin, PIN_PLAN_DEDICATED);
	assert_true(d.disable_hlt_exits);

	in = create_input(3, 2);
	in.settings.pin = PIN_DEDICATED;
	assert_int_equal(policy_vm_create(&in, &d), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "--pin dedicated"));
	assert_non_null(strstr(hvm_error_message(), "3 vCPUs"));
}

static void test_create_pin_list(void **state)
{
	struct policy_create_input in = create_input(2, 4); /* CPUs 2-5 */
	struct policy_create_decision d;

	in.settings.pin = PIN_LIST;
	in.settings.pin_cpus[0] = 5;
	in.settings.pin_cpus[1] = 3;
	in.settings.nr_pin_cpus = 2;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.pin, PIN_PLAN_DEDICATED);
	assert_int_equal(d.first.vcpu_cpu[0], 5);
	assert_int_equal(d.first.vcpu_cpu[1], 3);
	assert_true(d.disable_hlt_exits);

	/* Fewer CPUs than vCPUs: all vCPUs share the list, exits stay. */
	in.settings.nr_pin_cpus = 1;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.pin, PIN_PLAN_SHARED);
	assert_int_equal(d.first.nr_cpu_set, 1);
	assert_int_equal(d.first.cpu_set[0], 5);
	assert_false(d.disable_hlt_exits);

	/* A CPU outside the allowed set is a configuration error. */
	in.settings.pin_cpus[1] = 7;
	in.settings.nr_pin_cpus = 2;
	assert_int_equal(policy_vm_create(&in, &d), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "host CPU 7"));

	in.settings.nr_pin_cpus = 0;
	assert_int_equal(policy_vm_create(&in, &d), -EINVAL);
}

static void test_create_pin_none(void **state)
{
	struct policy_create_input in = create_input(1, 4);
	struct policy_create_decision d;

	in.settings.pin = PIN_NONE;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.next.commit, COMMIT_UNDER);
	assert_false(d.first.apply_pin);
	assert_false(d.disable_hlt_exits);
	assert_true(d.first.set_halt_poll);
}

static void test_create_halt_poll_modes(void **state)
{
	struct policy_create_input in = create_input(1, 1);
	struct policy_create_decision d;

	in.settings.pin = PIN_NONE;
	in.settings.halt_poll = HALT_POLL_OFF;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.set_halt_poll);
	assert_int_equal(d.first.halt_poll_ns, 0);

	in.settings.halt_poll = HALT_POLL_FIXED;
	in.settings.halt_poll_ns = 123456;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.set_halt_poll);
	assert_int_equal(d.first.halt_poll_ns, 123456);
}

/* ---- the baseline ---- */

static void test_hints_off_never_acts(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	in.settings.hints = false;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	s = snapshot_after(&in, &d);
	for (unsigned int i = 0; i < 20; i++) {
		set_wait_share(&s, i % 2 ? 900 : 0);
		s.pressure_avg10_centi = i % 2 ? 9000 : 0;
		s.throttled_ns = i % 3 ? INTERVAL_NS : 0;
		s.halt.attempted_polls = 100;
		s.halt.successful_polls = i % 2 ? 100 : 0;
		step(&s, &a);
		assert_false(a.apply_pin);
		assert_false(a.set_halt_poll);
		assert_false(a.act_on_hints);
		assert_false(a.commit_changed);
	}
	struct hint_decision h = policy_on_hint(&s.state, &s.settings, true,
						HINT_KIND_SPIN_ON_HOLDER, 0, 1);
	assert_false(h.yield_self);
	assert_int_equal(h.park_us, 0);
	assert_int_equal(h.boost_vcpu, -1);
	h = policy_on_hint(&s.state, &s.settings, true, HINT_KIND_RELEASED, 0,
			   1);
	assert_int_equal(h.wake_vcpu, -1);
	assert_false(a.set_rest_nice);
	assert_int_equal(s.state.rest_nice_offset, 0);
	assert_int_equal(policy_on_irq_inject(&s.state, &s.settings), 0);
}

/* ---- commit state ---- */

static void test_under_to_over_needs_two_intervals(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;

	set_wait_share(&s, 300);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);
	assert_false(a.commit_changed);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);
	assert_true(a.commit_changed);
}

static void test_single_spike_does_not_flap(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;

	for (unsigned int i = 0; i < 30; i++) {
		set_wait_share(&s, i % 2 ? 300 : 0);
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_UNDER);
	}
}

static void test_over_to_under_needs_five_quiet_intervals(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_OVER);
	struct policy_action a;

	s.pressure_avg10_centi = 0;
	set_wait_share(&s, 0);
	for (unsigned int i = 0; i < POLICY_STREAK_TO_UNDER - 1; i++) {
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_OVER);
	}
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);
	assert_true(a.commit_changed);
}

static void test_over_alternating_stays_over(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_OVER);
	struct policy_action a;

	s.pressure_avg10_centi = 0;
	for (unsigned int i = 0; i < 30; i++) {
		set_wait_share(&s, i % 2 ? 300 : 0);
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_OVER);
	}
}

static void test_schmitt_trigger_band(void **state)
{
	struct policy_snapshot s;
	struct policy_action a;

	/* 15% wait: above "leave over" (10%), below "enter over" (20%). */
	s = vm_in_state(COMMIT_OVER);
	s.pressure_avg10_centi = 0;
	set_wait_share(&s, 150);
	for (unsigned int i = 0; i < 10; i++) {
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_OVER);
	}
	s = vm_in_state(COMMIT_BALANCED);
	s.pressure_avg10_centi = 0;
	set_wait_share(&s, 150);
	for (unsigned int i = 0; i < 10; i++) {
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_BALANCED);
	}
	/* 3% wait: below "leave under" (5%), above "enter under" (2%). */
	s = vm_in_state(COMMIT_UNDER);
	set_wait_share(&s, 30);
	for (unsigned int i = 0; i < 10; i++) {
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_UNDER);
	}
	s = vm_in_state(COMMIT_BALANCED);
	s.pressure_avg10_centi = 0;
	set_wait_share(&s, 30);
	for (unsigned int i = 0; i < 10; i++) {
		step(&s, &a);
		assert_int_equal(s.state.commit, COMMIT_BALANCED);
	}
}

static void test_balanced_transitions(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_BALANCED);
	struct policy_action a;

	s.pressure_avg10_centi = 0;
	set_wait_share(&s, 0);
	for (unsigned int i = 0; i < POLICY_STREAK_TO_UNDER - 1; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);

	/* Under -> balanced after three moderately loaded intervals. */
	set_wait_share(&s, 80);
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);

	/* Balanced -> over after two heavily loaded intervals. */
	set_wait_share(&s, 500);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);

	/* Over -> balanced after three moderate ones. */
	set_wait_share(&s, 40);
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
}

static void test_mixed_evidence_adopts_mildest(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;
	unsigned int pm[] = { 300, 80, 300 }; /* over, balanced, over */

	for (unsigned int i = 0; i < 3; i++) {
		set_wait_share(&s, pm[i]);
		step(&s, &a);
	}
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
}

static void test_pressure_and_throttling(void **state)
{
	struct policy_snapshot s;
	struct policy_action a;

	s = vm_in_state(COMMIT_UNDER);
	s.pressure_avg10_centi = 4500;
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);

	/* Heavy throttling (>= 5% of the interval) is overcommit. */
	s = vm_in_state(COMMIT_UNDER);
	s.throttled_ns = INTERVAL_NS / 10;
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);

	/* Light throttling keeps an overcommitted VM there ... */
	s.throttled_ns = 1000;
	for (unsigned int i = 0; i < 10; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);

	/* ... and stops a balanced one from counting as undercommitted. */
	s = vm_in_state(COMMIT_BALANCED);
	s.pressure_avg10_centi = 0;
	s.throttled_ns = 1000;
	for (unsigned int i = 0; i < 10; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
}

static void test_insignificant_wait_is_ignored(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;

	/* Mostly idle vCPUs: 50% of a tiny runnable time (< 1% interval). */
	for (unsigned int i = 0; i < s.nr_vcpus; i++) {
		s.vcpus[i].run_ns = INTERVAL_NS / 1000;
		s.vcpus[i].wait_ns = INTERVAL_NS / 1000;
	}
	for (unsigned int i = 0; i < 10; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);
}

static void test_allowed_cpus_shrink_leaves_under_at_once(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	assert_int_equal(policy_vm_create(&in, &d), 0);
	s = snapshot_after(&in, &d);
	assert_int_equal(s.state.pin, PIN_PLAN_DEDICATED);
	s.nr_allowed = 1; /* the cpuset was cut to CPU 2 */
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
	assert_true(a.apply_pin);
	assert_int_equal(a.pin, PIN_PLAN_SHARED);
	assert_int_equal(a.nr_cpu_set, 1);
	assert_int_equal(a.cpu_set[0], 2);
}

/* ---- pinning ---- */

static void test_auto_pinning_follows_commit_state(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_BALANCED);
	struct policy_action a;

	s.pressure_avg10_centi = 0;
	/* Balanced from the start: affinity untouched. */
	step(&s, &a);
	assert_false(a.apply_pin);
	for (unsigned int i = 0; i < POLICY_STREAK_TO_UNDER - 1; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);
	assert_true(a.apply_pin);
	assert_int_equal(a.pin, PIN_PLAN_DEDICATED);
	assert_int_equal(a.vcpu_cpu[0], 2);
	assert_int_equal(a.vcpu_cpu[1], 3);
	/* Applied once, not every interval. */
	step(&s, &a);
	assert_false(a.apply_pin);

	/* Balanced keeps the dedicated mapping (no churn). */
	set_wait_share(&s, 80);
	for (unsigned int i = 0; i < POLICY_STREAK_TO_BALANCED; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
	assert_false(a.apply_pin);
	assert_int_equal(s.state.pin, PIN_PLAN_DEDICATED);

	/* Overcommitted releases the vCPUs to all allowed CPUs. */
	set_wait_share(&s, 500);
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);
	assert_true(a.apply_pin);
	assert_int_equal(a.pin, PIN_PLAN_SHARED);
	assert_int_equal(a.nr_cpu_set, 2);
	step(&s, &a);
	assert_false(a.apply_pin);
}

static void test_explicit_pin_modes_ignore_load(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	in.settings.pin = PIN_DEDICATED;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	s = snapshot_after(&in, &d);
	set_wait_share(&s, 600);
	for (unsigned int i = 0; i < 5; i++) {
		step(&s, &a);
		assert_false(a.apply_pin);
		assert_int_equal(s.state.pin, PIN_PLAN_DEDICATED);
	}
	assert_int_equal(s.state.commit, COMMIT_OVER);

	in.settings.pin = PIN_NONE;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	s = snapshot_after(&in, &d);
	for (unsigned int i = 0; i < 10; i++) {
		set_wait_share(&s, i < 5 ? 600 : 0);
		step(&s, &a);
		assert_false(a.apply_pin);
	}
}

/* ---- halt polling ---- */

static void polls(struct policy_snapshot *s, uint64_t attempted,
		  uint64_t successful, uint64_t success_ns, uint64_t fail_ns)
{
	s->halt.attempted_polls = attempted;
	s->halt.successful_polls = successful;
	s->halt.poll_success_ns = success_ns;
	s->halt.poll_fail_ns = fail_ns;
}

static void test_halt_poll_zero_when_overcommitted(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;

	set_wait_share(&s, 500);
	polls(&s, 100, 100, 100000, 0); /* polls succeed, still stop */
	step(&s, &a);
	polls(&s, 100, 100, 100000, 0);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, 0);
	for (unsigned int i = 0; i < 5; i++) {
		polls(&s, 100, 100, 100000, 0);
		s.halt.wait_hist[5] = 1000;
		step(&s, &a);
		assert_int_equal(s.state.halt_poll_ns, 0);
		assert_false(a.set_halt_poll);
	}
}

static void test_halt_poll_fixed_and_off_are_left_alone(void **state)
{
	struct policy_create_input in = create_input(1, 1);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	in.host_can_disable_hlt = false;
	in.settings.halt_poll = HALT_POLL_FIXED;
	in.settings.halt_poll_ns = 77000;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	s = snapshot_after(&in, &d);
	for (unsigned int i = 0; i < 10; i++) {
		set_wait_share(&s, i < 5 ? 600 : 0);
		polls(&s, 100, i % 2 ? 100 : 0, 100, 1000000);
		step(&s, &a);
		assert_false(a.set_halt_poll);
		assert_int_equal(s.state.halt_poll_ns, 77000);
	}
	in.settings.halt_poll = HALT_POLL_OFF;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	s = snapshot_after(&in, &d);
	for (unsigned int i = 0; i < 10; i++) {
		polls(&s, 0, 0, 0, 0);
		s.halt.wait_hist[3] = 1000;
		step(&s, &a);
		assert_false(a.set_halt_poll);
		assert_int_equal(s.state.halt_poll_ns, 0);
	}
}

static void test_halt_poll_untouched_when_exits_disabled(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.disable_hlt_exits);
	s = snapshot_after(&in, &d);
	/* Halts stay in the guest: KVM neither polls nor blocks. */
	for (unsigned int i = 0; i < 10; i++) {
		set_wait_share(&s, i < 5 ? 600 : 0);
		polls(&s, 0, 0, 0, 0);
		step(&s, &a);
		assert_false(a.set_halt_poll);
	}
}

/*
 * A host may accept KVM_X86_DISABLE_EXITS_HLT and still block halted
 * vCPUs (the nested development hosts do). KVM's stats show it; auto then
 * polls after all, starting where a VM with HLT exits starts.
 */
static void test_halt_poll_when_disabled_exits_still_halt(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.disable_hlt_exits);
	s = snapshot_after(&in, &d);
	s.halt.wait_hist[17] = 100; /* ~100 µs blocks */
	step(&s, &a);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, POLICY_HALT_POLL_INITIAL_NS);
	assert_false(s.state.exits_disabled);
	/* From then on it adapts like any VM: halts of 1-2 ms are not
	 * worth polling for. */
	s.halt.wait_hist[21] = 1000;
	step(&s, &a);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, 0);
}

/* Whatever the statistics say, auto stays within its bounds. */
static void test_halt_poll_bounds_property(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;
	uint64_t x = 12345;

	for (unsigned int i = 0; i < 5000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		set_wait_share(&s, (unsigned int)(x >> 33) % 400);
		s.pressure_avg10_centi = (uint32_t)(x >> 20) % 6000;
		polls(&s, (x >> 8) % 200, (x >> 16) % 200, x >> 40,
		      (x >> 24) & 0xffffff);
		if (s.halt.successful_polls > s.halt.attempted_polls)
			s.halt.successful_polls = s.halt.attempted_polls;
		s.halt.wait_hist[(x >> 50) % POLICY_HALT_HIST_BUCKETS] =
			(x >> 4) % 100;
		step(&s, &a);
		assert_true(s.state.halt_poll_ns == 0 ||
			    (s.state.halt_poll_ns >= 1024 &&
			     s.state.halt_poll_ns <= POLICY_HALT_POLL_MAX_NS));
		if (s.state.commit == COMMIT_OVER)
			assert_int_equal(s.state.halt_poll_ns, 0);
		if (s.state.commit == COMMIT_BALANCED)
			assert_true(s.state.halt_poll_ns <=
				    POLICY_HALT_POLL_BALANCED_MAX_NS);
	}
}

/*
 * Auto polling picks its window from the distribution of block times
 * (haltpoll.c has the model's own tests): blocks of 65-131 µs on an
 * undercommitted host get a 131 µs window at once, not a doubling from
 * 50 µs that never sees a success.
 */
static void test_halt_poll_window_from_distribution(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;

	s.halt.wait_hist[17] = 400; /* 400 halts of ~100 µs in 100 ms */
	step(&s, &a);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, 131072);
	/* Balanced: 10% budget, 40% of a CPU would go to polling. */
	s = vm_in_state(COMMIT_BALANCED);
	s.halt.wait_hist[17] = 400;
	step(&s, &a);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, 0);
}

/*
 * With the kernel series' per-vCPU limit each vCPU gets its own window
 * from its own histograms; the VM's value stays. A fixed value set later
 * hands every vCPU back to the VM's.
 */
static void test_halt_poll_per_vcpu(void **state)
{
	struct policy_snapshot s = vm_in_state(COMMIT_UNDER);
	struct policy_action a;

	s.per_vcpu_halt_poll = true;
	s.vcpus[0].halt.wait_hist[17] = 400; /* 65-131 µs */
	s.vcpus[1].halt.wait_hist[22] = 100; /* 2-4 ms */
	step(&s, &a);
	assert_false(a.set_halt_poll);
	assert_true(s.state.vcpu_poll_active);
	assert_true(a.set_vcpu_halt_poll[0]);
	assert_int_equal(a.vcpu_halt_poll_ns[0], 131072);
	assert_true(a.set_vcpu_halt_poll[1]);
	assert_int_equal(a.vcpu_halt_poll_ns[1], 0);
	/* Same evidence: nothing to change. */
	s.vcpus[0].halt.wait_hist[17] = 400;
	s.vcpus[1].halt.wait_hist[22] = 100;
	step(&s, &a);
	assert_false(a.set_vcpu_halt_poll[0]);
	assert_false(a.set_vcpu_halt_poll[1]);
	/* Overcommitted: every vCPU's window goes to 0. */
	for (unsigned int i = 0; i < 2; i++) {
		set_wait_share(&s, 500);
		s.vcpus[0].halt.wait_hist[17] = 400;
		step(&s, &a);
	}
	assert_int_equal(s.state.commit, COMMIT_OVER);
	assert_int_equal(s.state.vcpu_poll[0].window_ns, 0);
	/* `set halt-poll 20000`: back to the VM's value for all. */
	s.settings.halt_poll = HALT_POLL_FIXED;
	s.settings.halt_poll_ns = 20000;
	step(&s, &a);
	assert_true(a.reset_vcpu_halt_poll);
	assert_false(s.state.vcpu_poll_active);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, 20000);
}

/* ---- dynamic PLE and boost headroom ---- */

static void test_ple_follows_commit_state(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	/* No per-VM control: nothing to set, ever. */
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_false(d.first.set_ple);
	s = snapshot_after(&in, &d);
	set_wait_share(&s, 500);
	step(&s, &a);
	step(&s, &a);
	assert_false(a.set_ple);

	/* Quiet host: PAUSE exits off from the start. */
	in.ple_control = true;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.set_ple);
	assert_int_equal(d.first.ple_window, POLICY_PLE_OFF);
	s = snapshot_after(&in, &d);
	s.ple_control = true;
	step(&s, &a);
	assert_false(a.set_ple); /* unchanged state, nothing to redo */
	/* Overcommitted: a tight window. */
	set_wait_share(&s, 500);
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_OVER);
	assert_true(a.set_ple);
	assert_int_equal(a.ple_window, POLICY_PLE_TIGHT);
	/* Balanced: the module's default again. */
	set_wait_share(&s, 60);
	for (unsigned int i = 0; i < POLICY_STREAK_TO_BALANCED; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_BALANCED);
	assert_true(a.set_ple);
	assert_int_equal(a.ple_window, POLICY_PLE_DEFAULT);
	/* --sched-hints off: a plain VMM never touches it. */
	s.settings.hints = false;
	set_wait_share(&s, 900);
	for (unsigned int i = 0; i < 5; i++) {
		step(&s, &a);
		assert_false(a.set_ple);
	}
}

/*
 * Hints off with an explicit pin list and halt-poll cap: applied once at
 * creation, held whatever the load does, and a `ctl set` of either is
 * applied; a VM switched off at run time with pin auto keeps its plan.
 */
static void test_hints_off_holds_explicit_settings(void **state)
{
	struct policy_create_input in = create_input(2, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	in.settings.hints = false;
	in.settings.pin = PIN_LIST;
	in.settings.pin_cpus[0] = 2;
	in.settings.pin_cpus[1] = 3;
	in.settings.nr_pin_cpus = 2;
	in.settings.halt_poll = HALT_POLL_FIXED;
	in.settings.halt_poll_ns = 50000;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.apply_pin);
	assert_true(d.first.set_halt_poll);
	s = snapshot_after(&in, &d);
	for (unsigned int i = 0; i < 20; i++) {
		set_wait_share(&s, i % 2 ? 900 : 0);
		s.pressure_avg10_centi = i % 2 ? 9000 : 0;
		s.halt.attempted_polls = 100;
		step(&s, &a);
		assert_false(a.apply_pin);
		assert_false(a.set_halt_poll);
		assert_false(a.act_on_hints);
		assert_int_equal(s.state.pin, PIN_PLAN_DEDICATED);
		assert_int_equal(s.state.halt_poll_ns, 50000);
	}
	/* `ctl set pin 3`: both vCPUs share CPU 3 from the next interval. */
	s.settings.pin_cpus[0] = 3;
	s.settings.nr_pin_cpus = 1;
	step(&s, &a);
	assert_true(a.apply_pin);
	assert_int_equal(a.pin, PIN_PLAN_SHARED);
	assert_int_equal(a.cpu_set[0], 3);
	/* `ctl set halt-poll 0`. */
	s.settings.halt_poll = HALT_POLL_OFF;
	s.settings.halt_poll_ns = 0;
	step(&s, &a);
	assert_true(a.set_halt_poll);
	assert_int_equal(a.halt_poll_ns, 0);

	/* Pin auto, undercommitted (dedicated), then `set sched-hints off`. */
	in = create_input(2, 2);
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_int_equal(d.first.pin, PIN_PLAN_DEDICATED);
	s = snapshot_after(&in, &d);
	s.settings.hints = false;
	for (unsigned int i = 0; i < 5; i++) {
		set_wait_share(&s, 900);
		step(&s, &a);
		assert_false(a.apply_pin);
		assert_int_equal(s.state.pin, PIN_PLAN_DEDICATED);
	}
}

/* vCPU threads rest below the base only while hints are acted on. */
static void test_rest_nice_headroom(void **state)
{
	struct policy_create_input in = create_input(4, 2);
	struct policy_create_decision d;
	struct policy_snapshot s;
	struct policy_action a;

	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.act_on_hints);
	assert_true(d.first.set_rest_nice);
	assert_int_equal(d.first.next.rest_nice_offset,
			 POLICY_BOOST_HEADROOM_NICE);
	s = vm_in_state(COMMIT_UNDER);
	assert_int_equal(s.state.rest_nice_offset, 0);
	set_wait_share(&s, 500);
	step(&s, &a);
	step(&s, &a);
	assert_true(a.set_rest_nice);
	assert_int_equal(s.state.rest_nice_offset, POLICY_BOOST_HEADROOM_NICE);
	step(&s, &a);
	assert_false(a.set_rest_nice);
	set_wait_share(&s, 0);
	s.pressure_avg10_centi = 0;
	for (unsigned int i = 0; i < 10; i++)
		step(&s, &a);
	assert_int_equal(s.state.commit, COMMIT_UNDER);
	assert_int_equal(s.state.rest_nice_offset, 0);
	/* `set sched-hints off` at run time: back to the base at once. */
	set_wait_share(&s, 500);
	step(&s, &a);
	step(&s, &a);
	assert_int_equal(s.state.rest_nice_offset, POLICY_BOOST_HEADROOM_NICE);
	s.settings.hints = false;
	step(&s, &a);
	assert_true(a.set_rest_nice);
	assert_int_equal(s.state.rest_nice_offset, 0);
	step(&s, &a);
	assert_false(a.set_rest_nice);
	/* One vCPU has nobody to be raised above: it never rests lower. */
	in = create_input(1, 1);
	in.pressure_avg10_centi = 9000;
	assert_int_equal(policy_vm_create(&in, &d), 0);
	assert_true(d.first.act_on_hints);
	assert_false(d.first.set_rest_nice);
	assert_int_equal(d.first.next.rest_nice_offset, 0);
}

/* ---- hints and boosts ---- */

static void test_act_on_hints_by_state(void **state)
{
	struct policy_snapshot s;
	struct policy_action a;

	s = vm_in_state(COMMIT_UNDER);
	step(&s, &a);
	assert_false(a.act_on_hints);
	s = vm_in_state(COMMIT_BALANCED);
	step(&s, &a);
	assert_true(a.act_on_hints);
	s = vm_in_state(COMMIT_OVER);
	step(&s, &a);
	assert_true(a.act_on_hints);
}

static void test_hint_decisions(void **state)
{
	struct sched_settings on = hints_on();
	struct policy_state under = { .commit = COMMIT_UNDER };
	struct policy_state bal = { .commit = COMMIT_BALANCED };
	struct policy_state over = { .commit = COMMIT_OVER };
	struct {
		const struct policy_state *st;
		bool releases; /* the guest reports hand-overs */
		unsigned int kind, from, target;
		bool yield;
		bool park;
		int boost, wake;
	} rows[] = {
		{ &under, false, HINT_KIND_SPIN_ON_HOLDER, 0, 1, false, false,
		  -1, -1 },
		{ &under, true, HINT_KIND_SPIN_ON_HOLDER, 0, 1, false, false,
		  -1, -1 },
		{ &bal, false, HINT_KIND_SPIN_ON_HOLDER, 0, 1, true, false, 1,
		  1 },
		{ &over, false, HINT_KIND_SPIN_ON_HOLDER, 3, 2, true, false, 2,
		  2 },
		/* Hand-overs reported: park instead of yield. */
		{ &bal, true, HINT_KIND_SPIN_ON_HOLDER, 0, 1, false, true, 1,
		  1 },
		{ &over, true, HINT_KIND_SPIN_ON_HOLDER, 3, 2, false, true, 2,
		  2 },
		{ &over, true, HINT_KIND_SPIN_ON_HOLDER, 2, 2, false, false, -1,
		  -1 },
		{ &over, false, HINT_KIND_SPIN_ON_HOLDER, 0, POLICY_MAX_VCPUS,
		  false, false, -1, -1 },
		{ &under, false, HINT_KIND_IDLE_POLL, 0, 0, false, false, -1,
		  -1 },
		{ &bal, false, HINT_KIND_IDLE_POLL, 0, 0, false, false, -1,
		  -1 },
		{ &over, false, HINT_KIND_IDLE_POLL, 0, 0, true, false, -1,
		  -1 },
		/* A hand-over wakes its target in every state. */
		{ &under, true, HINT_KIND_RELEASED, 0, 3, false, false, -1, 3 },
		{ &over, true, HINT_KIND_RELEASED, 1, 0, false, false, 0, 0 },
		{ &over, true, HINT_KIND_RELEASED, 1, 1, false, false, -1, -1 },
		{ &over, false, 99, 0, 1, false, false, -1, -1 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct hint_decision d = policy_on_hint(
			rows[i].st, &on, rows[i].releases, rows[i].kind,
			rows[i].from, rows[i].target);

		assert_int_equal(d.yield_self, rows[i].yield);
		assert_int_equal(d.park_us > 0, rows[i].park);
		assert_true(d.park_us <= POLICY_PARK_MAX_US);
		assert_int_equal(d.boost_vcpu, rows[i].boost);
		assert_int_equal(d.wake_vcpu, rows[i].wake);
		if (d.boost_vcpu >= 0) {
			assert_true(d.boost_us > 0);
			assert_true(d.boost_us <= POLICY_BOOST_MAX_US);
		}
	}
}

static void test_irq_inject_boost(void **state)
{
	struct sched_settings on = hints_on(), off = hints_on();
	struct policy_state under = { .commit = COMMIT_UNDER };
	struct policy_state over = { .commit = COMMIT_OVER };
	uint32_t us;

	off.hints = false;
	assert_int_equal(policy_on_irq_inject(&under, &on), 0);
	assert_int_equal(policy_on_irq_inject(&over, &off), 0);
	us = policy_on_irq_inject(&over, &on);
	assert_true(us > 0 && us <= POLICY_BOOST_MAX_US);
}

static void test_names(void **state)
{
	assert_string_equal(commit_state_name(COMMIT_UNDER), "undercommitted");
	assert_string_equal(commit_state_name(COMMIT_OVER), "overcommitted");
	assert_string_equal(pin_plan_name(PIN_PLAN_SHARED), "shared");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_hints_off_is_plain_vmm),
		cmocka_unit_test(
			test_create_hints_off_honours_explicit_settings),
		cmocka_unit_test(test_create_auto_undercommitted_dedicates),
		cmocka_unit_test(test_create_exits_follow_host_caps),
		cmocka_unit_test(test_create_auto_with_pressure),
		cmocka_unit_test(test_create_no_pressure_info_counts_as_quiet),
		cmocka_unit_test(test_create_more_vcpus_than_cpus),
		cmocka_unit_test(test_create_dedicated),
		cmocka_unit_test(test_create_pin_list),
		cmocka_unit_test(test_create_pin_none),
		cmocka_unit_test(test_create_halt_poll_modes),
		cmocka_unit_test(test_hints_off_never_acts),
		cmocka_unit_test(test_hints_off_holds_explicit_settings),
		cmocka_unit_test(test_under_to_over_needs_two_intervals),
		cmocka_unit_test(test_single_spike_does_not_flap),
		cmocka_unit_test(test_over_to_under_needs_five_quiet_intervals),
		cmocka_unit_test(test_over_alternating_stays_over),
		cmocka_unit_test(test_schmitt_trigger_band),
		cmocka_unit_test(test_balanced_transitions),
		cmocka_unit_test(test_mixed_evidence_adopts_mildest),
		cmocka_unit_test(test_pressure_and_throttling),
		cmocka_unit_test(test_insignificant_wait_is_ignored),
		cmocka_unit_test(test_allowed_cpus_shrink_leaves_under_at_once),
		cmocka_unit_test(test_auto_pinning_follows_commit_state),
		cmocka_unit_test(test_explicit_pin_modes_ignore_load),
		cmocka_unit_test(test_halt_poll_zero_when_overcommitted),
		cmocka_unit_test(test_halt_poll_fixed_and_off_are_left_alone),
		cmocka_unit_test(test_halt_poll_untouched_when_exits_disabled),
		cmocka_unit_test(test_halt_poll_when_disabled_exits_still_halt),
		cmocka_unit_test(test_halt_poll_bounds_property),
		cmocka_unit_test(test_halt_poll_window_from_distribution),
		cmocka_unit_test(test_halt_poll_per_vcpu),
		cmocka_unit_test(test_ple_follows_commit_state),
		cmocka_unit_test(test_rest_nice_headroom),
		cmocka_unit_test(test_act_on_hints_by_state),
		cmocka_unit_test(test_hint_decisions),
		cmocka_unit_test(test_irq_inject_boost),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
