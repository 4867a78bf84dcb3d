/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One VM's scheduling state, shared by brain.c (lifecycle and the sched
 * thread), boost.c,
 * hint_host.c and stats_report.c.
 */
#ifndef HVM_SCHED_SCHED_VM_H
#define HVM_SCHED_SCHED_VM_H

#include <pthread.h>
#include <stdatomic.h>

#include "sched/hint_channel.h"
#include "sched/kernel_hints.h"
#include "sched/kvm_stats.h"
#include "sched/observe.h"
#include "sched/policy.h"
#include "sched/pv.h"
#include "sched/sched_config.h"

/* How often the sched thread observes and decides. */
#define BRAIN_INTERVAL_MS 200

struct vcpu_track {
	struct kvm_stats stats;
	bool have_stats;
	uint64_t *values; /* latest snapshot */
	uint64_t *prev; /* snapshot of the previous tick */
	uint64_t *delta;
	struct thread_sched sched; /* latest absolute schedstat */
	struct thread_sched sched_prev;
	bool have_sched;
	bool final; /* the vCPU thread ended (its last schedstat is in) */

	/* Boost (under sched_vm.boost_lock). */
	bool exited; /* thread gone: its tid may be reused, never touch it */
	bool boosted;
	int saved_nice;
	uint64_t boost_start_ns;
	uint64_t boost_until_ns;
	uint64_t boost_window_ns; /* start of the current one-second window */
	unsigned int boosts_in_window; /* boosts begun in it */
	_Atomic uint64_t boosts;
	_Atomic uint64_t yields;
	_Atomic uint64_t irq_boosts; /* boosts after a userspace MSI */
	_Atomic uint64_t irq_checked_ns; /* last runnable check (rate limit) */

	/* Park (under sched_vm.park_lock): a spinner waiting for a lock. */
	pthread_cond_t park_cond;
	bool parked;
	bool wake_pending; /* handed the lock before it parked */
	_Atomic uint64_t parks;
	_Atomic uint64_t park_timeouts; /* parks that ran their full time */
	_Atomic uint64_t park_ns; /* time spent parked */
	_Atomic uint64_t wakes; /* parks ended by a hand-over or a spinner */
};

struct sched_vm {
	struct vm *vm;
	struct sched_options opt;
	/* --stats-json, opened at the start (while we may), or -1 (a FIFO). */
	int json_fd;
	unsigned int nr_vcpus;
	struct vcpu_track *vcpus;

	/* Static decisions at creation. */
	struct policy_create_decision create;
	bool can_disable_hlt, can_disable_pause;
	bool exits_hlt_disabled, exits_pause_disabled;
	bool halt_poll_supported;
	uint64_t ple_kvm; /* PLE window KVM reports after our last set */
	bool ple_read;
	uint64_t ple_changes;
	uint64_t ple_mismatches; /* KVM reported another value than we set */
	struct pv_resolved pv;
	bool pv_known;
	uint32_t pv_supported;
	bool hypercalls_work;
	struct kernel_hints kernel; /* the patch series' features, if any */
	char kernel_path[96]; /* "stock KVM" or the patch features in use */
	_Atomic uint64_t kernel_yield_calls; /* KVM_YIELD_TO_VCPU issued */
	_Atomic uint64_t kernel_yields; /* ... of which KVM yielded */
	_Atomic uint64_t pins_applied; /* successful affinity changes */

	/* Hint channel. */
	struct hint_channel hints;
	bool hints_registered;
	bool boost_unavailable; /* no CAP_SYS_NICE: boosts cannot work */
	int start_nice; /* the process's nice at creation: boosts' ceiling */
	bool headroom_ok; /* we may lower a thread's nice back to start_nice */
	int rest_nice; /* where vCPU threads rest (under boost_lock) */
	_Atomic uint64_t boost_failures;
	_Atomic bool guest_releases; /* the guest sent HINT_KIND_RELEASED */
	pthread_mutex_t park_lock;

	/* Policy state and observations (under lock). */
	pthread_mutex_t lock;
	struct policy_state state;
	_Atomic int commit; /* read by vCPU threads handling hints */
	unsigned int commit_changes;
	uint64_t halt_poll_changes;
	uint16_t allowed[POLICY_MAX_VCPUS];
	unsigned int nr_allowed;
	struct cpu_pressure pressure;
	bool have_pressure;
	struct cgroup_cpu_stat cpu_stat;
	bool have_cpu_stat;
	uint64_t throttled_ns_total;
	struct kvm_stats vm_stats;
	bool have_vm_stats;
	uint64_t *vm_values;
	uint64_t ticks;
	uint64_t actuator_errors;
	int last_actuator_error;
	uint64_t start_ns;
	uint64_t end_ns; /* 0 while running */

	/* The sched thread (boost_lock also guards cond and stop). */
	pthread_mutex_t boost_lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_started;
	bool started; /* sched_vm_start() ran */
	bool stop;
	bool stopped; /* sched_vm_stopped() ran */
};

/*
 * boost.c: raise vCPU TARGET's thread for US microseconds (bounded from
 * when the boost began), restore the boosts that ran out by NOW (or ALL)
 * and return when the next one does, forget a vCPU whose thread ended.
 */
/* CAUSE ("hint", "irq") names the boost for event subscribers. */
void brain_boost_vcpu(struct sched_vm *s, unsigned int target, uint32_t us,
		      const char *cause);
uint64_t brain_restore_boosts(struct sched_vm *s, uint64_t now, bool all);
void brain_boost_vcpu_exited(struct sched_vm *s, unsigned int id);

/*
 * boost.c: whether this process may raise a thread back to its start nice
 * (RLIMIT_NICE, or CAP_SYS_NICE when SANDBOXED will not drop it), set at
 * creation; move every vCPU thread
 * that is not boosted to start_nice + OFFSET (0 when boosts cannot undo
 * it); set the calling vCPU thread to where vCPU threads rest.
 */
void brain_boost_probe(struct sched_vm *s, bool sandboxed);
void brain_set_rest_nice(struct sched_vm *s, int offset);
void brain_rest_self(struct sched_vm *s);

/*
 * Parking a spinning vCPU thread (hint_host.c): park the calling thread of
 * vCPU ID for at most US, unless a hand-over to it already came; wake vCPU
 * ID if it is parked (true), else, for a HANDOVER of the lock to it, make
 * its next park return at once.
 */
void brain_park_self(struct sched_vm *s, unsigned int id, uint32_t us);
bool brain_wake_vcpu(struct sched_vm *s, unsigned int id, bool handover);

/* KVM_CAP_HALT_POLL to NS (caller holds s->lock); tells subscribers. */
void brain_set_halt_poll(struct sched_vm *s, uint32_t ns);

/* Every vCPU back to the VM's halt-poll value (caller holds s->lock). */
void brain_reset_vcpu_halt_poll(struct sched_vm *s);

/* The VM's PLE window (kernel series), read back into s->ple_kvm. */
void brain_set_ple(struct sched_vm *s, uint32_t window);

#endif
