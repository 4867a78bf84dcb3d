// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The halt-poll window chooser (haltpoll.h). Pure: histograms and a
 * budget in, a window out.
 *
 * KVM records, per vCPU, how long each failed or successful poll lasted
 * and how long the vCPU then blocked. From those we rebuild how long each
 * halt lasted from its start to its wake-up (t): a successful poll's
 * length is t; a block that followed a failed poll lasted the poll plus
 * the wait. KVM does not pair them up, so the average failed poll is added
 * to the share of blocks that had one. Then, for a window W:
 *   caught(W) = halts with t < W (each saves the block and wake-up)
 *   cost(W)   = sum over halts of min(t, W) (polling CPU)
 * and the chooser takes the window that catches most halts within the
 * budget. All sums are in doubles: these are estimates from log2 buckets.
 */
#include <string.h>

#include "sched/haltpoll.h"

/* Below this share of the halts, a window is not worth its CPU. */
#define MIN_CATCH_PM 250
/* Keep the current window unless another catches 5% more halts... */
#define KEEP_CATCH_PM 50
/* ...or catches as many for less than 4/5 of the CPU. */
#define KEEP_COST_NUM 5
#define KEEP_COST_DEN 4
/* Windows catching within 1% of each other count as equal. */
#define EQUAL_CATCH_PM 10
/* Probes of a model that failed wait up to 2^6 intervals (12.8 s). */
#define MAX_BACKOFF_LOG2 6
/* A probe that caught at least half of what the model said succeeded. */
#define PROBE_OK_PM 500
#define SMALLEST_WINDOW_LOG2 10 /* 1 µs */

static double bucket_lower(unsigned int i)
{
	return i ? (double)(1ull << (i - 1)) : 0.0;
}

static double bucket_upper(unsigned int i)
{
	return (double)(1ull << i);
}

/* A value to stand for bucket I: its middle. */
static double bucket_mid(unsigned int i)
{
	return (bucket_lower(i) + bucket_upper(i)) / 2;
}

static unsigned int bucket_of(double ns)
{
	unsigned int i = 0;

	while (i + 1 < HALTPOLL_HIST_BUCKETS && ns >= bucket_upper(i))
		i++;
	return i;
}

void halt_obs_add(struct halt_obs *a, const struct halt_obs *b)
{
	a->attempted_polls += b->attempted_polls;
	a->successful_polls += b->successful_polls;
	a->poll_success_ns += b->poll_success_ns;
	a->poll_fail_ns += b->poll_fail_ns;
	a->wait_ns += b->wait_ns;
	for (unsigned int i = 0; i < HALTPOLL_HIST_BUCKETS; i++) {
		a->wait_hist[i] += b->wait_hist[i];
		a->poll_ok_hist[i] += b->poll_ok_hist[i];
		a->poll_fail_hist[i] += b->poll_fail_hist[i];
	}
}

/* The distribution of halt lengths (start to wake-up), as counts. */
static double wake_times(const struct halt_obs *h,
			 double t[HALTPOLL_HIST_BUCKETS])
{
	uint64_t blocks = 0, failed = 0;
	double polled_share = 0, mean_fail = 0, total = 0;

	for (unsigned int i = 0; i < HALTPOLL_HIST_BUCKETS; i++)
		blocks += h->wait_hist[i];
	if (h->attempted_polls > h->successful_polls)
		failed = h->attempted_polls - h->successful_polls;
	if (failed)
		mean_fail = (double)h->poll_fail_ns / (double)failed;
	if (blocks)
		polled_share = (double)(failed < blocks ? failed : blocks) /
			       (double)blocks;

	memset(t, 0, sizeof(double) * HALTPOLL_HIST_BUCKETS);
	for (unsigned int i = 0; i < HALTPOLL_HIST_BUCKETS; i++) {
		double n = (double)h->wait_hist[i];

		if (h->wait_hist[i]) {
			t[bucket_of(bucket_mid(i) + mean_fail)] +=
				n * polled_share;
			t[i] += n * (1 - polled_share);
		}
		t[i] += (double)h->poll_ok_hist[i];
		total += n + (double)h->poll_ok_hist[i];
	}
	return total;
}

/* Share of bucket I's halts a window W catches (t < W), 0..1. */
static double caught_share(unsigned int i, double w)
{
	double lo = bucket_lower(i), hi = bucket_upper(i);

	if (w >= hi)
		return 1;
	if (w <= lo)
		return 0;
	return (w - lo) / (hi - lo);
}

static double caught(const double *t, double w)
{
	double n = 0;

	for (unsigned int i = 0; i < HALTPOLL_HIST_BUCKETS; i++)
		n += t[i] * caught_share(i, w);
	return n;
}

/* Polling CPU (ns) a window W would have cost over these halts. */
static double cost(const double *t, double w)
{
	double ns = 0;

	for (unsigned int i = 0; i < HALTPOLL_HIST_BUCKETS && w > 0; i++) {
		double share = caught_share(i, w);
		double top = w < bucket_upper(i) ? w : bucket_upper(i);

		/* Caught halts poll until their wake-up, the others for W. */
		ns += t[i] *
		      (share * (bucket_lower(i) + top) / 2 + (1 - share) * w);
	}
	return ns;
}

/* Learn from the last interval how many predicted catches KVM got. */
static void update_efficiency(const struct halt_obs *h, const double *t,
			      struct haltpoll_window *st)
{
	double predicted, seen;

	if (!st->window_ns) {
		/* Not polling: look again with fresh trust after the wait. */
		if (st->efficiency_pm < 1000 &&
		    ++st->idle_intervals >= 1u << st->backoff_log2) {
			st->efficiency_pm = 1000;
			st->idle_intervals = 0;
		}
		return;
	}
	if (h->attempted_polls < HALTPOLL_MIN_HALTS)
		return;
	predicted = caught(t, st->window_ns);
	if (predicted < 1)
		return;
	seen = (double)h->successful_polls / predicted;
	if (seen > 1)
		seen = 1;
	st->efficiency_pm =
		(uint16_t)((st->efficiency_pm + (unsigned int)(seen * 1000)) /
			   2);
	if (seen * 1000 >= PROBE_OK_PM)
		st->backoff_log2 = 0;
}

uint32_t haltpoll_choose(const struct halt_obs *h,
			 const struct haltpoll_limits *lim,
			 struct haltpoll_window *st)
{
	double t[HALTPOLL_HIST_BUCKETS], total, budget, eff, best_score = 0;
	uint32_t cands[HALTPOLL_HIST_BUCKETS + 3], best = 0, cur;
	unsigned int nr = 0;

	total = wake_times(h, t);
	update_efficiency(h, t, st);
	if (!lim->budget_pm || !lim->max_ns) {
		st->window_ns = 0;
		return 0;
	}
	if (total < HALTPOLL_MIN_HALTS)
		return st->window_ns; /* nothing to learn from */
	budget = (double)lim->budget_pm / 1000 * (double)lim->interval_ns *
		 (lim->nr_vcpus ? lim->nr_vcpus : 1);
	eff = st->efficiency_pm / 1000.0;
	cur = st->window_ns < lim->max_ns ? st->window_ns : lim->max_ns;

	for (unsigned int k = SMALLEST_WINDOW_LOG2;
	     k < 32 && (1u << k) < lim->max_ns; k++)
		cands[nr++] = 1u << k;
	cands[nr++] = lim->max_ns;
	/* Ascending order: equal catches keep the smaller window. */
	for (unsigned int i = 0; i < nr; i++) {
		double score = caught(t, cands[i]) * eff;

		if (cost(t, cands[i]) > budget)
			break; /* larger windows only cost more */
		if (score > best_score + total * EQUAL_CATCH_PM / 1000) {
			best = cands[i];
			best_score = score;
		}
	}
	if (best_score < total * MIN_CATCH_PM / 1000)
		best = 0;

	if (cur && cur != best) {
		double cur_score = caught(t, cur) * eff;
		double cur_cost = cost(t, cur);

		if (cur_cost <= budget &&
		    cur_score >= total * MIN_CATCH_PM / 1000 &&
		    cur_score + total * KEEP_CATCH_PM / 1000 >= best_score &&
		    cur_cost * KEEP_COST_DEN <= cost(t, best) * KEEP_COST_NUM)
			best = cur;
	}
	/* Given up because polls did not catch: wait longer next time. */
	if (cur && !best && st->efficiency_pm < PROBE_OK_PM) {
		st->idle_intervals = 0;
		if (st->backoff_log2 < MAX_BACKOFF_LOG2)
			st->backoff_log2++;
	}
	st->window_ns = best;
	return best;
}
