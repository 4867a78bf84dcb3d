// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "sched/hint_channel.h"

/*
 * Per-vCPU state. The bucket is only touched by the vCPU's own thread; the
 * counters are read by the stats thread (and named_holder is bumped by
 * other vCPUs), hence atomics.
 */
struct hint_vcpu {
	uint64_t credit_ns;
	uint64_t last_ns;
	uint64_t accepted;
	uint64_t dropped;
	uint64_t invalid;
	uint64_t named_holder;
};

static uint64_t monotonic_ns(void *ctx)
{
	(void)ctx;
	return hvm_monotonic_ns();
}

int hint_channel_init(struct hint_channel *hc,
		      const struct hint_channel_config *cfg)
{
	uint32_t rate, burst;
	uint64_t now;

	if (cfg->nr_vcpus == 0 || cfg->nr_vcpus > HINT_TARGET_MASK + 1 ||
	    !cfg->current_vcpu)
		return -EINVAL;
	memset(hc, 0, sizeof(*hc));
	hc->cfg = *cfg;
	if (!hc->cfg.now_ns)
		hc->cfg.now_ns = monotonic_ns;
	rate = cfg->rate_per_sec ? cfg->rate_per_sec : HINT_DEFAULT_RATE;
	burst = cfg->burst ? cfg->burst : HINT_DEFAULT_BURST;
	hc->cfg.rate_per_sec = rate;
	hc->cfg.burst = burst;
	hc->cost_ns = 1000000000u / rate;
	if (hc->cost_ns == 0)
		hc->cost_ns = 1;
	hc->capacity_ns = hc->cost_ns * burst;

	hc->vcpus = calloc(cfg->nr_vcpus, sizeof(*hc->vcpus));
	if (!hc->vcpus)
		return -ENOMEM;
	now = hc->cfg.now_ns(hc->cfg.now_ctx);
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++) {
		hc->vcpus[i].credit_ns = hc->capacity_ns; /* start full */
		hc->vcpus[i].last_ns = now;
	}
	return 0;
}

void hint_channel_destroy(struct hint_channel *hc)
{
	free(hc->vcpus);
	hc->vcpus = NULL;
}

static void count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static uint64_t load(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

void hint_channel_stats(const struct hint_channel *hc, unsigned int vcpu,
			struct hint_vcpu_stats *out)
{
	const struct hint_vcpu *v;

	memset(out, 0, sizeof(*out));
	if (vcpu >= hc->cfg.nr_vcpus)
		return;
	v = &hc->vcpus[vcpu];
	out->accepted = load(&v->accepted);
	out->dropped = load(&v->dropped);
	out->invalid = load(&v->invalid);
	out->named_holder = load(&v->named_holder);
}

/* The calling vCPU, or NULL when the caller is not one of ours. */
static struct hint_vcpu *caller(struct hint_channel *hc, unsigned int *index)
{
	int i = hc->cfg.current_vcpu(hc->cfg.current_vcpu_ctx);

	if (i < 0 || (unsigned int)i >= hc->cfg.nr_vcpus)
		return NULL;
	*index = (unsigned int)i;
	return &hc->vcpus[i];
}

/* Take one event's credit from V's bucket; false when it is empty. */
static bool take_token(struct hint_channel *hc, struct hint_vcpu *v)
{
	uint64_t now = hc->cfg.now_ns(hc->cfg.now_ctx);

	/* A clock that went backwards refills nothing. */
	if (now > v->last_ns) {
		uint64_t refill = now - v->last_ns;

		v->credit_ns = refill >= hc->capacity_ns - v->credit_ns
				       ? hc->capacity_ns
				       : v->credit_ns + refill;
		v->last_ns = now;
	}
	if (v->credit_ns < hc->cost_ns)
		return false;
	v->credit_ns -= hc->cost_ns;
	return true;
}

static bool valid_event(const struct hint_channel *hc, uint32_t word,
			unsigned int from, struct hint_event *ev)
{
	ev->kind = word >> HINT_KIND_SHIFT;
	ev->target = (word >> HINT_TARGET_SHIFT) & HINT_TARGET_MASK;
	ev->from = from;
	if (word & HINT_RESERVED_MASK)
		return false;
	switch (ev->kind) {
	case HINT_KIND_SPIN_ON_HOLDER:
		return ev->target < hc->cfg.nr_vcpus && ev->target != from;
	case HINT_KIND_IDLE_POLL:
		return ev->target == 0;
	case HINT_KIND_RELEASED:
		return ev->target < hc->cfg.nr_vcpus && ev->target != from;
	}
	return false;
}

static void hint_write(void *dev, uint64_t offset, const uint8_t *data,
		       uint32_t len)
{
	struct hint_channel *hc = dev;
	struct hint_event ev;
	struct hint_vcpu *v;
	unsigned int from;
	uint32_t word;

	v = caller(hc, &from);
	if (!v) {
		count(&hc->foreign_writes);
		return;
	}
	if (offset != HINT_REG_EVENT || len != 4) {
		count(&v->invalid);
		return;
	}
	memcpy(&word, data, 4); /* guest order is little-endian, as is ours */
	if (!valid_event(hc, word, from, &ev)) {
		count(&v->invalid);
		return;
	}
	/* A release only ends a park, and parks are rate-limited. */
	if (ev.kind != HINT_KIND_RELEASED && !take_token(hc, v)) {
		count(&v->dropped);
		return;
	}
	count(&v->accepted);
	if (ev.kind == HINT_KIND_SPIN_ON_HOLDER)
		count(&hc->vcpus[ev.target].named_holder);
	if (hc->cfg.deliver)
		hc->cfg.deliver(hc->cfg.deliver_ctx, &ev);
}

static void hint_read(void *dev, uint64_t offset, uint8_t *data, uint32_t len)
{
	struct hint_channel *hc = dev;
	struct hint_vcpu *v;
	unsigned int from;
	uint32_t value = 0;

	if (len != 4 || offset % 4) {
		memset(data, 0xff, len);
		return;
	}
	v = caller(hc, &from);
	switch (offset) {
	case HINT_REG_EVENT:
		value = HINT_MAGIC;
		break;
	case HINT_REG_INFO:
		value = HINT_VERSION | hc->cfg.nr_vcpus << 16;
		break;
	case HINT_REG_ACCEPTED:
		value = v ? (uint32_t)load(&v->accepted) : 0;
		break;
	case HINT_REG_DROPPED:
		value = v ? (uint32_t)load(&v->dropped) : 0;
		break;
	}
	memcpy(data, &value, 4);
}

const struct bus_ops hint_channel_bus_ops = {
	.read = hint_read,
	.write = hint_write,
};
