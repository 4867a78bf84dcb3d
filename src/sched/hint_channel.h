/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest scheduling-hint channel as a bus device (ABI in hint_abi.h and
 * docs/hint-channel.md). A vCPU writes an event word; the device works out
 * which vCPU wrote it (the vCPU thread that took the exit), validates it,
 * charges it to that vCPU's token bucket and hands accepted events to a
 * callback, synchronously on the writing vCPU's thread, so the callback
 * can yield that very thread.
 *
 * Everything the guest writes is hostile: unknown kinds, reserved bits,
 * targets out of range or naming the writer itself are counted as invalid
 * and dropped; a guest writing faster than the bucket refills has the
 * excess counted as dropped, and the host does no work for it.
 */
#ifndef HVM_SCHED_HINT_CHANNEL_H
#define HVM_SCHED_HINT_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/hint_abi.h"
#include "core/bus.h"

/* Default rate limit per vCPU: a burst of 32, then 2000 events/s. */
#define HINT_DEFAULT_RATE 2000u
#define HINT_DEFAULT_BURST 32u

struct hint_event {
	unsigned int kind; /* HINT_KIND_* */
	unsigned int from; /* writing vCPU */
	unsigned int target; /* vCPU named (SPIN_ON_HOLDER), else 0 */
};

struct hint_vcpu_stats {
	uint64_t accepted; /* delivered to the callback */
	uint64_t dropped; /* valid but over the rate limit */
	uint64_t invalid; /* malformed writes */
	uint64_t named_holder; /* times other vCPUs named this one */
};

struct hint_channel_config {
	unsigned int nr_vcpus;
	/* Index of the vCPU whose thread is calling, or -1 (not a vCPU). */
	int (*current_vcpu)(void *ctx);
	void *current_vcpu_ctx;
	/* Monotonic time in ns; NULL: CLOCK_MONOTONIC. Tests inject one. */
	uint64_t (*now_ns)(void *ctx);
	void *now_ctx;
	/* Receives accepted events; may be NULL (then events are counted). */
	void (*deliver)(void *ctx, const struct hint_event *ev);
	void *deliver_ctx;
	uint32_t rate_per_sec; /* 0: HINT_DEFAULT_RATE */
	uint32_t burst; /* 0: HINT_DEFAULT_BURST */
};

struct hint_vcpu;

struct hint_channel {
	struct hint_channel_config cfg;
	uint64_t cost_ns; /* bucket credit one event costs */
	uint64_t capacity_ns; /* full bucket */
	struct hint_vcpu *vcpus;
	uint64_t foreign_writes; /* from threads that are not vCPUs */
};

int hint_channel_init(struct hint_channel *hc,
		      const struct hint_channel_config *cfg);
void hint_channel_destroy(struct hint_channel *hc);

/* Counters of vCPU VCPU (safe to call while vCPUs run). */
void hint_channel_stats(const struct hint_channel *hc, unsigned int vcpu,
			struct hint_vcpu_stats *out);

/* DEV is a struct hint_channel *; register HINT_REGION_LEN bytes or more. */
extern const struct bus_ops hint_channel_bus_ops;

#endif
