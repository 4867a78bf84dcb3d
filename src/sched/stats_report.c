// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The statistics a VM reports: the --stats table, the --stats-json
 * document and single values by name (hvm_vm_stats, hvm_vm_stat).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kvm.h>

#include "core/console_out.h"
#include "core/log.h"
#include "core/vm.h"
#include "sched/brain_internal.h"

/* snprintf-style text building: counts what would have been written. */
struct text {
	char *buf;
	size_t len;
	size_t used;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	size_t room = t->used < t->len ? t->len - t->used : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? t->buf + t->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n;
}

static uint64_t exits_total(const struct vcpu *v)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < VCPU_EXIT_REASONS; i++)
		sum += atomic_load(&v->exits[i]);
	return sum;
}

static uint64_t kstat(const struct vcpu_track *t, const char *name)
{
	return t->have_stats ? kvm_stats_get(&t->stats, t->values, name, 0, 0)
			     : 0;
}

static const char *halt_poll_mode(const struct sched_options *o)
{
	if (!o->settings.hints)
		return "KVM default, --sched-hints off";
	switch (o->settings.halt_poll) {
	case HALT_POLL_AUTO:
		return "auto";
	case HALT_POLL_OFF:
		return "off";
	case HALT_POLL_FIXED:
		return "fixed";
	}
	return "?";
}

static void format_table(struct sched_vm *s, struct text *t)
{
	struct vm *vm = s->vm;
	uint64_t end = s->end_ns ? s->end_ns : brain_now_ns();
	char cpus[128], pv[256], masked[256];
	cpu_set_t set;

	CPU_ZERO(&set);
	for (unsigned int i = 0; i < s->nr_allowed; i++)
		CPU_SET(s->allowed[i], &set);
	put(t, "hintvm stats after %.3f s\n",
	    (double)(end - s->start_ns) / 1e9);
	put(t,
	    "  host: %u CPUs allowed (%s), cpu pressure %s%u.%02u%%, throttled %llu ms, %s\n",
	    s->nr_allowed, observe_format_cpulist(&set, cpus, sizeof(cpus)),
	    s->have_pressure ? "" : "n/a ", s->pressure.avg10_centi / 100,
	    s->pressure.avg10_centi % 100,
	    (unsigned long long)(s->throttled_ns_total / 1000000),
	    s->kernel_path);
	put(t, "  console: %llu bytes out, %llu dropped (reader too slow)\n",
	    (unsigned long long)console_out_written(vm->console_out),
	    (unsigned long long)console_out_dropped(vm->console_out));
	if (s->kernel.yield_to)
		put(t, "  kernel directed yields: %llu issued, %llu yielded\n",
		    (unsigned long long)atomic_load(&s->kernel_yield_calls),
		    (unsigned long long)atomic_load(&s->kernel_yields));
	put(t,
	    "  policy: %s (%u changes), pin %s, HLT exits %s, PAUSE exits %s, halt-poll %s (%llu changes), hints %s\n",
	    s->opt.settings.hints ? commit_state_name(s->state.commit)
				  : "not managed",
	    s->commit_changes, pin_plan_name(s->state.pin),
	    !s->exits_hlt_disabled ? "kept"
	    : s->state.exits_disabled
		    ? "disabled"
		    : "disabled but KVM still blocks (polling)",
	    s->exits_pause_disabled ? "disabled" : "kept",
	    halt_poll_mode(&s->opt), (unsigned long long)s->halt_poll_changes,
	    !s->opt.settings.hints	      ? "off"
	    : s->state.commit == COMMIT_UNDER ? "received, not acted on"
					      : "acted on");
	if (s->state.halt_poll_set)
		put(t, "  halt-poll value: %u ns\n", s->state.halt_poll_ns);
	else
		put(t, "  halt-poll value: KVM module default\n");
	if (s->pv_known) {
		put(t, "  pv: %s\n", pv_format(s->pv.enabled, pv, sizeof(pv)));
		if (s->pv.masked_hypercall)
			put(t,
			    "  pv masked, this host cannot serve hypercalls: %s\n",
			    pv_format(s->pv.masked_hypercall, masked,
				      sizeof(masked)));
		if (s->pv.masked_unsupported)
			put(t, "  pv masked, not offered by KVM: %s\n",
			    pv_format(s->pv.masked_unsupported, masked,
				      sizeof(masked)));
		if (s->pv.masked_hlt)
			put(t, "  pv masked, HLT exits disabled: unhalt\n");
		if (s->pv.masked_needs)
			put(t, "  pv masked, a feature it needs is off: %s\n",
			    pv_format(s->pv.masked_needs, masked,
				      sizeof(masked)));
	}
	if (s->actuator_errors)
		put(t, "  actuator errors: %llu (last: %s)\n",
		    (unsigned long long)s->actuator_errors,
		    strerror(-s->last_actuator_error));
	if (atomic_load(&s->boost_failures))
		put(t, "  boosts failed: %llu (no CAP_SYS_NICE?)\n",
		    (unsigned long long)atomic_load(&s->boost_failures));

	put(t,
	    "  %4s %8s %7s %7s %10s %10s %13s %11s %11s %10s %9s %9s %6s %6s %15s\n",
	    "vcpu", "exits", "io", "mmio", "kvm_exits", "halt_exits",
	    "polls ok/try", "poll_ok_us", "poll_bad_us", "halt_wait", "run_ms",
	    "steal_ms", "yield", "boost", "hints ok/dr/bad");
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		const struct vcpu_track *tr = &s->vcpus[i];
		const struct vcpu *v = &vm->vcpus[i];
		struct hint_vcpu_stats h = { 0 };
		char polls[32], hints[40];

		if (s->hints_registered)
			hint_channel_stats(&s->hints, i, &h);
		snprintf(polls, sizeof(polls), "%llu/%llu",
			 (unsigned long long)kstat(tr, "halt_successful_poll"),
			 (unsigned long long)kstat(tr, "halt_attempted_poll"));
		snprintf(hints, sizeof(hints), "%llu/%llu/%llu",
			 (unsigned long long)h.accepted,
			 (unsigned long long)h.dropped,
			 (unsigned long long)h.invalid);
		put(t,
		    "  %4u %8llu %7llu %7llu %10llu %10llu %13s %11llu %11llu %8llums %9llu %9llu %6llu %6llu %15s\n",
		    i, (unsigned long long)exits_total(v),
		    (unsigned long long)atomic_load(&v->exits[KVM_EXIT_IO]),
		    (unsigned long long)atomic_load(&v->exits[KVM_EXIT_MMIO]),
		    (unsigned long long)kstat(tr, "exits"),
		    (unsigned long long)kstat(tr, "halt_exits"), polls,
		    (unsigned long long)kstat(tr, "halt_poll_success_ns") /
			    1000,
		    (unsigned long long)kstat(tr, "halt_poll_fail_ns") / 1000,
		    (unsigned long long)kstat(tr, "halt_wait_ns") / 1000000,
		    (unsigned long long)tr->sched.run_ns / 1000000,
		    (unsigned long long)tr->sched.wait_ns / 1000000,
		    (unsigned long long)atomic_load(&tr->yields),
		    (unsigned long long)atomic_load(&tr->boosts), hints);
	}
}

static void json_kvm_stats(struct text *t, const struct kvm_stats *st,
			   const uint64_t *values)
{
	put(t, "{");
	for (size_t i = 0; i < st->nr_descs; i++) {
		const struct kvm_stat_desc *d = &st->descs[i];

		/* Names were validated as printable without quotes/escapes. */
		put(t, "%s\"%s\":", i ? "," : "", d->name);
		if (d->type == KVM_STAT_LINEAR_HIST ||
		    d->type == KVM_STAT_LOG_HIST) {
			put(t, "[");
			for (size_t b = 0; b < d->size; b++)
				put(t, "%s%llu", b ? "," : "",
				    (unsigned long long)values[d->index + b]);
			put(t, "]");
		} else {
			put(t, "%llu", (unsigned long long)values[d->index]);
		}
	}
	put(t, "}");
}

/* A JSON string of S (file names can hold anything). */
static void json_string(struct text *t, const char *s)
{
	put(t, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(t, "\\%c", c);
		else if (c < 0x20)
			put(t, "\\u%04x", c);
		else
			put(t, "%c", c);
	}
	put(t, "\"");
}

static void format_json(struct sched_vm *s, struct text *t)
{
	struct vm *vm = s->vm;
	uint64_t end = s->end_ns ? s->end_ns : brain_now_ns();
	char buf[256];

	put(t, "{\"elapsed_ns\":%llu,\"running\":%s,",
	    (unsigned long long)(end - s->start_ns),
	    s->end_ns ? "false" : "true");
	put(t,
	    "\"host\":{\"allowed_cpus\":%u,\"pressure_avg10_centi\":%u,\"have_pressure\":%s,\"throttled_ns\":%llu,\"kernel\":",
	    s->nr_allowed, s->pressure.avg10_centi,
	    s->have_pressure ? "true" : "false",
	    (unsigned long long)s->throttled_ns_total);
	json_string(t, s->kernel_path);
	put(t, ",\"kernel_yield_calls\":%llu,\"kernel_yields\":%llu",
	    (unsigned long long)atomic_load(&s->kernel_yield_calls),
	    (unsigned long long)atomic_load(&s->kernel_yields));
	put(t, "},\"console\":{\"written\":%llu,\"dropped\":%llu",
	    (unsigned long long)console_out_written(vm->console_out),
	    (unsigned long long)console_out_dropped(vm->console_out));
	put(t,
	    "},\"policy\":{\"sched_hints\":%s,\"commit\":\"%s\",\"commit_changes\":%u,\"pin\":\"%s\",\"hlt_exits_disabled\":%s,\"pause_exits_disabled\":%s,\"halt_poll_mode\":\"%s\",\"halt_poll_ns\":",
	    s->opt.settings.hints ? "true" : "false",
	    commit_state_name(s->state.commit), s->commit_changes,
	    pin_plan_name(s->state.pin),
	    s->exits_hlt_disabled ? "true" : "false",
	    s->exits_pause_disabled ? "true" : "false",
	    halt_poll_mode(&s->opt));
	if (s->state.halt_poll_set)
		put(t, "%u", s->state.halt_poll_ns);
	else
		put(t, "null");
	put(t, ",\"pins_applied\":%llu",
	    (unsigned long long)atomic_load(&s->pins_applied));
	put(t,
	    ",\"halt_poll_changes\":%llu,\"ticks\":%llu,\"actuator_errors\":%llu,\"boost_failures\":%llu},",
	    (unsigned long long)s->halt_poll_changes,
	    (unsigned long long)s->ticks,
	    (unsigned long long)s->actuator_errors,
	    (unsigned long long)atomic_load(&s->boost_failures));
	put(t, "\"pv\":{\"enabled\":\"%s\",",
	    pv_format(s->pv.enabled, buf, sizeof(buf)));
	put(t, "\"enabled_bits\":%u,\"masked_hypercall\":\"%s\",",
	    s->pv.enabled, pv_format(s->pv.masked_hypercall, buf, sizeof(buf)));
	put(t, "\"masked_needs\":\"%s\",",
	    pv_format(s->pv.masked_needs, buf, sizeof(buf)));
	put(t, "\"masked_unsupported\":\"%s\",\"hypercalls_work\":%s},",
	    pv_format(s->pv.masked_unsupported, buf, sizeof(buf)),
	    s->hypercalls_work ? "true" : "false");
	put(t, "\"vm_kvm\":");
	if (s->have_vm_stats)
		json_kvm_stats(t, &s->vm_stats, s->vm_values);
	else
		put(t, "null");
	put(t, ",\"vcpus\":[");
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		const struct vcpu_track *tr = &s->vcpus[i];
		const struct vcpu *v = &vm->vcpus[i];
		struct hint_vcpu_stats h = { 0 };

		if (s->hints_registered)
			hint_channel_stats(&s->hints, i, &h);
		put(t,
		    "%s{\"id\":%u,\"exits\":{\"total\":%llu,\"io\":%llu,\"mmio\":%llu,\"hlt\":%llu,\"intr\":%llu},",
		    i ? "," : "", i, (unsigned long long)exits_total(v),
		    (unsigned long long)atomic_load(&v->exits[KVM_EXIT_IO]),
		    (unsigned long long)atomic_load(&v->exits[KVM_EXIT_MMIO]),
		    (unsigned long long)atomic_load(&v->exits[KVM_EXIT_HLT]),
		    (unsigned long long)atomic_load(&v->exits[KVM_EXIT_INTR]));
		put(t,
		    "\"run_ns\":%llu,\"wait_ns\":%llu,\"steal_ns\":%llu,\"yields\":%llu,\"boosts\":%llu,\"irq_boosts\":%llu,",
		    (unsigned long long)tr->sched.run_ns,
		    (unsigned long long)tr->sched.wait_ns,
		    (unsigned long long)tr->sched.wait_ns,
		    (unsigned long long)atomic_load(&tr->yields),
		    (unsigned long long)atomic_load(&tr->boosts),
		    (unsigned long long)atomic_load(&tr->irq_boosts));
		put(t,
		    "\"hints\":{\"accepted\":%llu,\"dropped\":%llu,\"invalid\":%llu,\"named_holder\":%llu},\"kvm\":",
		    (unsigned long long)h.accepted,
		    (unsigned long long)h.dropped,
		    (unsigned long long)h.invalid,
		    (unsigned long long)h.named_holder);
		if (tr->have_stats)
			json_kvm_stats(t, &tr->stats, tr->values);
		else
			put(t, "null");
		put(t, "}");
	}
	put(t, "]}\n");
}

int sched_format_stats(struct vm *vm, bool json, char *buf, size_t len)
{
	struct sched_vm *s = vm->sched;
	struct text t = { buf, len, 0 };

	if (!s)
		return -ENOENT;
	if (len)
		buf[0] = '\0';
	pthread_mutex_lock(&s->lock);
	if (!s->end_ns)
		brain_read_kvm_stats(s);
	if (json)
		format_json(s, &t);
	else
		format_table(s, &t);
	pthread_mutex_unlock(&s->lock);
	return t.used > INT32_MAX ? -E2BIG : (int)t.used;
}

/* Per-vCPU value NAME of vCPU I; false when there is no such name. */
static bool vcpu_value(struct sched_vm *s, unsigned int i, const char *name,
		       uint64_t *out)
{
	const struct vcpu *v = &s->vm->vcpus[i];
	const struct vcpu_track *tr = &s->vcpus[i];
	const struct kvm_stat_desc *d;
	struct hint_vcpu_stats h = { 0 };

	if (s->hints_registered)
		hint_channel_stats(&s->hints, i, &h);
	if (!strcmp(name, "exits"))
		*out = exits_total(v);
	else if (!strcmp(name, "exit_io"))
		*out = atomic_load(&v->exits[KVM_EXIT_IO]);
	else if (!strcmp(name, "exit_mmio"))
		*out = atomic_load(&v->exits[KVM_EXIT_MMIO]);
	else if (!strcmp(name, "exit_hlt"))
		*out = atomic_load(&v->exits[KVM_EXIT_HLT]);
	else if (!strcmp(name, "exit_intr"))
		*out = atomic_load(&v->exits[KVM_EXIT_INTR]);
	else if (!strcmp(name, "run_ns"))
		*out = tr->sched.run_ns;
	else if (!strcmp(name, "wait_ns") || !strcmp(name, "steal_ns"))
		*out = tr->sched.wait_ns;
	else if (!strcmp(name, "yields"))
		*out = atomic_load(&tr->yields);
	else if (!strcmp(name, "boosts"))
		*out = atomic_load(&tr->boosts);
	else if (!strcmp(name, "irq_boosts"))
		*out = atomic_load(&tr->irq_boosts);
	else if (!strcmp(name, "hint_accepted"))
		*out = h.accepted;
	else if (!strcmp(name, "hint_dropped"))
		*out = h.dropped;
	else if (!strcmp(name, "hint_invalid"))
		*out = h.invalid;
	else if (!strcmp(name, "hint_named_holder"))
		*out = h.named_holder;
	else if (tr->have_stats && (d = kvm_stats_find(&tr->stats, name))) {
		*out = 0;
		for (size_t b = 0; b < d->size; b++)
			*out += tr->values[d->index + b];
	} else
		return false;
	return true;
}

static bool vm_value(struct sched_vm *s, const char *name, uint64_t *out)
{
	const struct kvm_stat_desc *d;

	if (!strcmp(name, "halt_poll_ns"))
		*out = s->state.halt_poll_set ? s->state.halt_poll_ns
					      : UINT64_MAX;
	else if (!strcmp(name, "commit"))
		*out = (uint64_t)s->state.commit;
	else if (!strcmp(name, "commit_changes"))
		*out = s->commit_changes;
	else if (!strcmp(name, "halt_poll_changes"))
		*out = s->halt_poll_changes;
	else if (!strcmp(name, "hlt_exits_disabled"))
		*out = s->exits_hlt_disabled;
	else if (!strcmp(name, "pv_enabled"))
		*out = s->pv.enabled;
	else if (!strcmp(name, "pv_masked_hypercall"))
		*out = s->pv.masked_hypercall;
	else if (!strcmp(name, "pins_applied"))
		*out = atomic_load(&s->pins_applied);
	else if (!strcmp(name, "ticks"))
		*out = s->ticks;
	else if (!strcmp(name, "boost_failures"))
		*out = atomic_load(&s->boost_failures);
	else if (!strcmp(name, "console_written"))
		*out = console_out_written(s->vm->console_out);
	else if (!strcmp(name, "console_dropped"))
		*out = console_out_dropped(s->vm->console_out);
	else if (!strcmp(name, "hint_foreign"))
		*out = s->hints_registered ? s->hints.foreign_writes : 0;
	else if (s->have_vm_stats && (d = kvm_stats_find(&s->vm_stats, name)))
		*out = s->vm_values[d->index];
	else
		return false;
	return true;
}

int sched_stat(struct vm *vm, const char *name, uint64_t *value)
{
	struct sched_vm *s = vm->sched;
	bool found = false;
	uint64_t v, sum = 0;
	unsigned int id;
	int n = 0;

	if (!s)
		return -ENOENT;
	pthread_mutex_lock(&s->lock);
	if (!s->end_ns)
		brain_read_kvm_stats(s);
	if (!strncmp(name, "vm.", 3)) {
		found = vm_value(s, name + 3, &sum);
	} else if (sscanf(name, "vcpu%u.%n", &id, &n) == 1 && n > 0) {
		if (id < s->nr_vcpus)
			found = vcpu_value(s, id, name + n, &sum);
	} else {
		for (unsigned int i = 0; i < s->nr_vcpus; i++) {
			if (!vcpu_value(s, i, name, &v))
				break;
			found = true;
			sum += v;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (!found)
		return hvm_set_error(
			-ENOENT,
			"no statistic '%s'; expected a vCPU statistic (summed), vcpuN.NAME or vm.NAME",
			name);
	*value = sum;
	return 0;
}

int hvm_vm_stats(struct hvm_vm *handle, int json, char *buf, size_t len)
{
	if (!handle || (!buf && len))
		return hvm_set_error(-EINVAL, "hvm_vm_stats: no VM or buffer");
	return sched_format_stats((struct vm *)handle, json != 0, buf, len);
}

int hvm_vm_stat(struct hvm_vm *handle, const char *name, uint64_t *value)
{
	if (!handle || !name || !value)
		return hvm_set_error(-EINVAL,
				     "hvm_vm_stat: no VM, name or result");
	return sched_stat((struct vm *)handle, name, value);
}
