/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduling policy: every decision the brain makes, as pure functions
 * from an observation snapshot to an action. No I/O, no clocks, no KVM:
 * the brain (brain.c) gathers the snapshot and the actuators apply the
 * action, so each transition here is unit-tested in isolation.
 *
 * Decisions, and when they kick in (docs/sched.md explains them for users):
 *   - commit state: under-, balanced or overcommitted, from the run-queue
 *     wait of the vCPU threads, CPU pressure and cgroup throttling, with a
 *     Schmitt trigger (separate enter/leave thresholds) and a number of
 *     consecutive agreeing intervals before a change (no flapping);
 *   - pinning: dedicated host CPU per vCPU when undercommitted, released
 *     to the whole allowed set when overcommitted (auto), or as the user
 *     asked (dedicated, LIST, none);
 *   - halt polling: grow while polls succeed and wake-ups come soon,
 *     shrink toward 0 when polls fail or the host is overcommitted;
 *   - guest hints and boosts: whether to yield a spinning vCPU and briefly
 *     raise the lock holder (bounded duration);
 *   - at VM creation only: whether to disable HLT/PAUSE exits (only when
 *     every vCPU gets a dedicated host CPU).
 * With --sched-hints off the policy decides nothing: a plain VMM, which
 * still applies what the user set explicitly (--pin dedicated or a CPU
 * list, --halt-poll off or a fixed cap) and nothing else: no HLT/PAUSE
 * exits given up, no PLE window, no boosts, no adaptation.
 */
#ifndef HVM_SCHED_POLICY_H
#define HVM_SCHED_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/haltpoll.h"

/* vCPUs the policy makes per-vCPU decisions for (more are left alone). */
#define POLICY_MAX_VCPUS 256
#define POLICY_HALT_HIST_BUCKETS HALTPOLL_HIST_BUCKETS

/* Halt polling bounds (ns). */
#define POLICY_HALT_POLL_STEP_NS 10000u /* first step up from 0 */
#define POLICY_HALT_POLL_INITIAL_NS 50000u /* auto start, undercommitted */
#define POLICY_HALT_POLL_BALANCED_MAX_NS 100000u
#define POLICY_HALT_POLL_MAX_NS 400000u /* auto ceiling */
/*
 * Halt-poll CPU budget per vCPU, in permille of its time, by commit state:
 * generous when every vCPU has a CPU nobody else wants, none when another
 * vCPU waits for the CPU a poll would burn.
 */
#define POLICY_POLL_BUDGET_UNDER_PM 500u
#define POLICY_POLL_BUDGET_BALANCED_PM 100u
#define POLICY_POLL_BUDGET_OVER_PM 0u
#define POLICY_HALT_POLL_LIMIT_NS 10000000u /* largest --halt-poll NS */

/* Boosts (µs): short and bounded, a boosted thread always gets restored. */
#define POLICY_HINT_BOOST_US 2000u
/*
 * Boost headroom: while hints are acted on, vCPU threads rest this many
 * nice levels below the process's base priority, and a boost lifts one back
 * to the base, never above it (docs/sched.md).
 */
#define POLICY_BOOST_HEADROOM_NICE 3
/*
 * A spinner whose guest also reports releases (HINT_KIND_RELEASED) is
 * parked for at most this long, or until the lock is handed to it.
 */
#define POLICY_PARK_MAX_US 1000u
#define POLICY_IRQ_BOOST_US 1000u
#define POLICY_BOOST_MAX_US 10000u

/* Intervals a new commit state must persist before it is adopted. */
#define POLICY_STREAK_TO_OVER 2
#define POLICY_STREAK_TO_BALANCED 3
#define POLICY_STREAK_TO_UNDER 5

enum commit_state { COMMIT_UNDER, COMMIT_BALANCED, COMMIT_OVER };

enum pin_mode { PIN_AUTO, PIN_NONE, PIN_DEDICATED, PIN_LIST };

enum halt_poll_mode { HALT_POLL_AUTO, HALT_POLL_OFF, HALT_POLL_FIXED };

/* What the user asked for (--pin, --halt-poll, --sched-hints). */
struct sched_settings {
	enum pin_mode pin;
	uint16_t pin_cpus[POLICY_MAX_VCPUS]; /* PIN_LIST, distinct */
	unsigned int nr_pin_cpus;
	enum halt_poll_mode halt_poll;
	uint32_t halt_poll_ns; /* HALT_POLL_FIXED */
	bool hints; /* false: plain-VMM baseline, the policy does nothing */
};

enum pin_plan {
	PIN_PLAN_NONE, /* affinity never touched */
	PIN_PLAN_DEDICATED, /* vCPU i alone on vcpu_cpu[i] */
	PIN_PLAN_SHARED, /* every vCPU may run on all of cpu_set */
};

/* What the policy remembers between intervals. */
struct policy_state {
	enum commit_state commit;
	enum commit_state pending; /* candidate state being confirmed */
	unsigned int streak; /* consecutive intervals agreeing on pending */
	enum pin_plan pin; /* plan in effect */
	int16_t vcpu_cpu[POLICY_MAX_VCPUS]; /* PIN_PLAN_DEDICATED */
	uint32_t halt_poll_ns; /* value in effect on the VM (auto) */
	bool halt_poll_set; /* false: KVM's module default is in effect */
	struct haltpoll_window vm_poll; /* the chooser's per-VM state */
	/* Per-vCPU windows (kernel series' per-vCPU halt-poll limit). */
	bool vcpu_poll_active;
	struct haltpoll_window vcpu_poll[POLICY_MAX_VCPUS];
	bool exits_disabled; /* HLT/PAUSE exits were disabled at creation */
	/* Dynamic PLE (kernel series' per-VM PLE window), in effect. */
	bool ple_set;
	uint32_t ple_window; /* POLICY_PLE_DEFAULT: the module's */
	int rest_nice_offset; /* vCPU threads rest this far below the base */
};

struct vcpu_obs {
	uint64_t run_ns; /* schedstat run time in the interval */
	uint64_t wait_ns; /* schedstat run-queue wait in the interval */
	struct halt_obs halt; /* this vCPU's KVM halt statistics (deltas) */
};

/*
 * PLE windows the policy sets through the kernel series (x86, per VM):
 * 0 turns PAUSE exits off (every vCPU has its own CPU, spinning costs
 * nobody), a tight window makes a spinning vCPU exit early when it may be
 * waiting for a preempted one, and POLICY_PLE_DEFAULT hands the VM back to
 * the module parameter.
 */
#define POLICY_PLE_OFF 0u
#define POLICY_PLE_TIGHT 1024u
#define POLICY_PLE_DEFAULT UINT32_MAX

struct policy_snapshot {
	uint64_t interval_ns;
	unsigned int nr_vcpus;
	struct vcpu_obs vcpus[POLICY_MAX_VCPUS];
	uint16_t allowed_cpus[POLICY_MAX_VCPUS]; /* sorted, distinct */
	unsigned int nr_allowed;
	bool have_pressure;
	uint32_t pressure_avg10_centi; /* /proc/pressure/cpu some avg10 */
	uint64_t throttled_ns; /* cgroup throttling in the interval */
	struct halt_obs halt; /* summed over the vCPUs */
	bool per_vcpu_halt_poll; /* KVM takes a halt-poll limit per vCPU */
	bool ple_control; /* KVM takes a PLE window per VM */
	struct sched_settings settings;
	struct policy_state state; /* from the previous action */
};

struct policy_action {
	struct policy_state next; /* feed into the next snapshot */
	bool commit_changed;
	bool apply_pin; /* the pin plan below differs from the one in effect */
	enum pin_plan pin;
	int16_t vcpu_cpu[POLICY_MAX_VCPUS]; /* PIN_PLAN_DEDICATED */
	uint16_t cpu_set[POLICY_MAX_VCPUS]; /* PIN_PLAN_SHARED */
	unsigned int nr_cpu_set;
	bool set_halt_poll; /* KVM_CAP_HALT_POLL to halt_poll_ns */
	uint32_t halt_poll_ns;
	/* Per-vCPU halt-poll limits (only with per_vcpu_halt_poll). */
	bool reset_vcpu_halt_poll; /* every vCPU follows the VM's value again */
	bool set_vcpu_halt_poll[POLICY_MAX_VCPUS];
	uint32_t vcpu_halt_poll_ns[POLICY_MAX_VCPUS];
	bool set_ple; /* the VM's PLE window to ple_window */
	uint32_t ple_window;
	bool set_rest_nice; /* vCPU threads rest at base + rest_nice_offset */
	bool act_on_hints; /* guest hints lead to yields and boosts */
};

/* ---- at VM creation ---- */

struct policy_create_input {
	struct sched_settings settings;
	unsigned int nr_vcpus;
	uint16_t allowed_cpus[POLICY_MAX_VCPUS]; /* sorted, distinct */
	unsigned int nr_allowed;
	bool have_pressure;
	uint32_t pressure_avg10_centi;
	bool host_can_disable_hlt; /* KVM_CAP_X86_DISABLE_EXITS offers HLT */
	bool host_can_disable_pause;
	bool ple_control; /* KVM takes a PLE window per VM */
};

struct policy_create_decision {
	bool disable_hlt_exits;
	bool disable_pause_exits;
	struct policy_action first; /* pinning and halt polling to apply */
};

/*
 * The static decisions, made once before any vCPU exists. Returns 0, or
 * -EINVAL when the settings cannot be honoured (PIN_DEDICATED with more
 * vCPUs than allowed CPUs; a pin list naming a CPU outside the allowed
 * set): the caller reports that as a configuration error.
 */
int policy_vm_create(const struct policy_create_input *in,
		     struct policy_create_decision *out);

/* ---- every interval ---- */

void policy_decide(const struct policy_snapshot *snap,
		   struct policy_action *act);

/* ---- on events between intervals ---- */

struct hint_decision {
	int wake_vcpu; /* vCPU whose park ends first (or is cancelled), -1 */
	int boost_vcpu; /* vCPU whose thread is raised, or -1 */
	uint32_t boost_us; /* for this long, <= POLICY_BOOST_MAX_US */
	uint32_t park_us; /* park the writer this long at most (0: don't) */
	bool yield_self; /* else the writing vCPU's thread yields its CPU */
};

/*
 * A guest hint (HINT_KIND_*) from vCPU FROM naming TARGET (validated).
 * GUEST_RELEASES: this VM's guest has sent HINT_KIND_RELEASED, so a parked
 * spinner will be woken when the lock is handed to it.
 */
struct hint_decision policy_on_hint(const struct policy_state *state,
				    const struct sched_settings *settings,
				    bool guest_releases, unsigned int kind,
				    unsigned int from, unsigned int target);

/*
 * hintvm injected an interrupt from userspace into vCPU TARGET whose
 * thread is runnable but not on a CPU: how long to boost it (0: don't).
 */
uint32_t policy_on_irq_inject(const struct policy_state *state,
			      const struct sched_settings *settings);

const char *commit_state_name(enum commit_state state);
const char *pin_plan_name(enum pin_plan plan);

#endif
