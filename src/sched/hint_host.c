// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hint channel's host side: the device the guest writes its scheduling
 * hints to (sched/hint_channel.c) is placed by the arch through
 * sched_register_hints(), and each accepted hint is turned into an action
 * here, on the writer's vCPU thread: a directed yield with the kernel
 * patch, else a boost of the named vCPU and/or a yield of the writer.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "core/log.h"
#include "core/vm.h"
#include "sched/brain_internal.h"

static int hint_current_vcpu(void *ctx)
{
	return current_vcpu_id;
}

static void hint_deliver(void *ctx, const struct hint_event *ev)
{
	struct sched_vm *s = ctx;
	struct policy_state st = { .commit = atomic_load(&s->commit) };
	struct hint_decision d;

	d = policy_on_hint(&st, &s->opt.settings, ev->kind, ev->from,
			   ev->target);
	/*
	 * With the kernel patch, hand our CPU straight to the holder's task
	 * (KVM's directed yield, as PV sched-yield does); otherwise raise the
	 * holder and yield to whoever the host scheduler picks.
	 */
	if (d.boost_vcpu >= 0 && s->kernel.yield_to) {
		int r = kernel_hints_yield_to(vm_vcpu_fd(s->vm, ev->from),
					      &s->kernel,
					      (unsigned int)d.boost_vcpu);

		atomic_fetch_add(&s->kernel_yield_calls, 1);
		if (r > 0)
			atomic_fetch_add(&s->kernel_yields, 1);
		/* 0: the holder runs or sleeps; nothing to boost either. */
		if (r >= 0)
			return;
	}
	if (d.boost_vcpu >= 0 && (unsigned int)d.boost_vcpu < s->nr_vcpus)
		brain_boost_vcpu(s, (unsigned int)d.boost_vcpu, d.boost_us,
				 "hint");
	if (d.yield_self) {
		/* We are on the writer's vCPU thread: give its CPU away. */
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
