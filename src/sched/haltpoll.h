/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The halt-poll window chooser: a pure function from one interval of KVM's
 * halt histograms (halt_wait_hist, halt_poll_success_hist,
 * halt_poll_fail_hist and their counters) and a CPU budget to the poll
 * window to set, with hysteresis state kept by the caller. policy.c calls
 * it once per VM (KVM_CAP_HALT_POLL on the VM) or once per vCPU (the
 * kernel series' per-vCPU halt-poll limit); docs/sched.md explains the
 * model and tests/unit/sched/test_haltpoll.c checks it on histograms
 * recorded from bench runs.
 */
#ifndef HVM_SCHED_HALTPOLL_H
#define HVM_SCHED_HALTPOLL_H

#include <stdbool.h>
#include <stdint.h>

/* KVM's log2 histograms: bucket 0 = 0 ns, bucket i = [2^(i-1), 2^i) ns. */
#define HALTPOLL_HIST_BUCKETS 32

/* One interval of halt statistics (deltas), for a vCPU or summed. */
struct halt_obs {
	uint64_t attempted_polls; /* halt_attempted_poll */
	uint64_t successful_polls; /* halt_successful_poll */
	uint64_t poll_success_ns; /* halt_poll_success_ns */
	uint64_t poll_fail_ns; /* halt_poll_fail_ns */
	uint64_t wait_ns; /* halt_wait_ns */
	uint64_t wait_hist[HALTPOLL_HIST_BUCKETS]; /* block after the poll */
	uint64_t poll_ok_hist[HALTPOLL_HIST_BUCKETS]; /* successful polls */
	uint64_t poll_fail_hist[HALTPOLL_HIST_BUCKETS]; /* failed polls */
};

/* What the chooser remembers for one scope (the VM, or one vCPU). */
struct haltpoll_window {
	uint32_t window_ns; /* in effect */
	/*
	 * Share of the halts the model said a window would catch that KVM's
	 * polls really caught, in permille (smoothed). Polls abort when
	 * another task becomes runnable on the CPU, which no histogram of
	 * wake-up times can show; this is how the chooser learns it.
	 */
	uint16_t efficiency_pm;
	/*
	 * After polling was given up for catching too little: intervals
	 * spent at 0, and log2 of how many to wait before trusting the model
	 * again (doubling with each failed probe, so a host where polls
	 * never catch costs a probe every 12.8 s at most).
	 */
	uint16_t idle_intervals;
	uint8_t backoff_log2;
};

/* The chooser's knobs: limits and the budget from the commit state. */
struct haltpoll_limits {
	uint32_t max_ns; /* largest window it may choose */
	/* Poll CPU the scope may spend: budget_pm/1000 of interval x vcpus. */
	uint32_t budget_pm;
	uint64_t interval_ns;
	unsigned int nr_vcpus; /* vCPUs the histograms summed */
};

/* A fresh scope: no window, full trust in the model. */
#define HALTPOLL_WINDOW_INIT ((struct haltpoll_window){ .efficiency_pm = 1000 })

/* Halts in an interval below which the chooser keeps what it has. */
#define HALTPOLL_MIN_HALTS 16

/*
 * The window for the next interval. Updates ST (window and efficiency).
 * The estimate of each halt's wake-up time (poll + block) is rebuilt from
 * the histograms; a window W costs min(t, W) of polling per halt and
 * catches the halts with t < W. Among the windows whose cost fits the
 * budget it picks the one catching most halts (the smallest of equals),
 * none when it would catch fewer than a quarter of them, and it keeps the
 * current window unless another catches clearly more or costs clearly
 * less.
 */
uint32_t haltpoll_choose(const struct halt_obs *h,
			 const struct haltpoll_limits *lim,
			 struct haltpoll_window *st);

/* Sum B into A (per-VM decisions from per-vCPU statistics). */
void halt_obs_add(struct halt_obs *a, const struct halt_obs *b);

#endif
