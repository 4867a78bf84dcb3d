// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hint channel's host side: the device the guest writes its scheduling
 * hints to (sched/hint_channel.c) is placed by the arch through
 * sched_register_hints(), and each accepted hint is turned into an action
 * here, on the writer's vCPU thread: the named holder is woken from a
 * park and raised (a directed yield with the kernel patch, else a boost),
 * then the writer is parked until the lock is handed to it (when its guest
 * reports hand-overs) or yields.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "sched/brain.h"
#include "sched/sched_vm.h"

static int hint_current_vcpu(void *ctx)
{
	return current_vcpu_id;
}

void brain_park_self(struct sched_vm *s, unsigned int id, uint32_t us)
{
	struct vcpu_track *t = &s->vcpus[id];
	uint64_t start = hvm_monotonic_ns(), deadline = start + us * 1000ull;
	struct timespec ts = { .tv_sec = (time_t)(deadline / 1000000000u),
			       .tv_nsec = (long)(deadline % 1000000000u) };
	bool timed_out = false;

	pthread_mutex_lock(&s->park_lock);
	if (t->wake_pending) {
		/* The lock came to us between the guest's hint and here. */
		t->wake_pending = false;
		pthread_mutex_unlock(&s->park_lock);
		return;
	}
	t->parked = true;
	while (t->parked && !timed_out)
		timed_out = pthread_cond_timedwait(&t->park_cond, &s->park_lock,
						   &ts) == ETIMEDOUT;
	t->parked = false;
	pthread_mutex_unlock(&s->park_lock);
	atomic_fetch_add(&t->parks, 1);
	atomic_fetch_add(&t->park_ns, hvm_monotonic_ns() - start);
	if (timed_out)
		atomic_fetch_add(&t->park_timeouts, 1);
}

bool brain_wake_vcpu(struct sched_vm *s, unsigned int id, bool handover)
{
	struct vcpu_track *t = &s->vcpus[id];
	bool was_parked;

	pthread_mutex_lock(&s->park_lock);
	was_parked = t->parked;
	if (was_parked) {
		t->parked = false;
		pthread_cond_signal(&t->park_cond);
		atomic_fetch_add(&t->wakes, 1);
	} else if (handover) {
		t->wake_pending = true;
	}
	pthread_mutex_unlock(&s->park_lock);
	return was_parked;
}

static void hint_deliver(void *ctx, const struct hint_event *ev)
{
	struct sched_vm *s = ctx;
	struct policy_state st = { .commit = atomic_load(&s->commit) };
	struct hint_decision d;

	if (ev->kind == HINT_KIND_RELEASED)
		atomic_store(&s->guest_releases, true);
	d = policy_on_hint(&st, &s->opt.settings,
			   atomic_load(&s->guest_releases), ev->kind, ev->from,
			   ev->target);
	/* The holder first: out of its own park... */
	if (d.wake_vcpu >= 0 && (unsigned int)d.wake_vcpu < s->nr_vcpus &&
	    brain_wake_vcpu(s, (unsigned int)d.wake_vcpu,
			    ev->kind == HINT_KIND_RELEASED) &&
	    ev->kind == HINT_KIND_RELEASED && d.boost_vcpu >= 0) {
		/* Handed the lock while parked: it is the holder now. */
		brain_boost_vcpu(s, (unsigned int)d.boost_vcpu, d.boost_us,
				 "handover");
		return;
	}
	if (ev->kind == HINT_KIND_RELEASED)
		return; /* the releaser keeps running */
	/*
	 * ...then on a CPU: with the kernel patch, hand ours straight to the
	 * holder's task (KVM's directed yield, as PV sched-yield does);
	 * otherwise raise the holder.
	 */
	if (d.boost_vcpu >= 0 && (unsigned int)d.boost_vcpu < s->nr_vcpus) {
		bool yielded = false;

		if (s->kernel.yield_to) {
			int r = kernel_hints_yield_to(
				vm_vcpu_fd(s->vm, ev->from), &s->kernel,
				(unsigned int)d.boost_vcpu);

			atomic_fetch_add(&s->kernel_yield_calls, 1);
			if (r > 0)
				atomic_fetch_add(&s->kernel_yields, 1);
			/* 0: the holder runs or sleeps; nothing to boost. */
			yielded = r >= 0;
		}
		if (!yielded)
			brain_boost_vcpu(s, (unsigned int)d.boost_vcpu,
					 d.boost_us, "hint");
		else if (!d.park_us)
			return;
	}
	if (d.park_us) {
		/* We are on the writer's vCPU thread: leave the CPU. */
		brain_park_self(s, ev->from, d.park_us);
	} else if (d.yield_self) {
		sched_yield();
		atomic_fetch_add(&s->vcpus[ev->from].yields, 1);
	}
}

int sched_register_hints(struct vm *vm, uint64_t base, bool pio)
{
	struct sched_vm *s = vm->sched;
	struct hint_channel_config cfg = {
		.nr_vcpus = s ? s->nr_vcpus : 0,
		.current_vcpu = hint_current_vcpu,
		.deliver = hint_deliver,
		.deliver_ctx = s,
	};
	int r;

	/* --sched-hints off: no channel at all, as on a plain VMM. */
	if (!s || !s->opt.settings.hints)
		return 0;
	r = hint_channel_init(&s->hints, &cfg);
	if (r < 0)
		return hvm_set_error(r, "cannot set up the hint channel: %s",
				     strerror(-r));
	s->hints_registered = true;
	if (pio)
		return vm_register_pio(vm, base, HINT_REGION_LEN,
				       &hint_channel_bus_ops, &s->hints,
				       "sched-hint");
	return vm_register_mmio(vm, base, 0x1000, &hint_channel_bus_ops,
				&s->hints, "sched-hint");
}
