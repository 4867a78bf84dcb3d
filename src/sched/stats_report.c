// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The statistics a VM reports: the --stats table, the --stats-json
 * document and single values by name (stats_report.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kvm.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/console_out.h"
#include "core/stats.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "sched/sched_vm.h"
#include "sched/stats_report.h"

/* The tracking of vCPU ID (getters never see an ID out of range). */
static const struct vcpu_track *track(const void *ctx, unsigned int id)
{
	const struct sched_vm *s = ctx;

	return &s->vcpus[id];
}

static uint64_t kstat(const struct vcpu_track *t, const char *name)
{
	return t->have_stats ? kvm_stats_get(&t->stats, t->values, name, 0, 0)
			     : 0;
}

static struct hint_vcpu_stats hints_of(const void *ctx, unsigned int id)
{
	const struct sched_vm *s = ctx;
	struct hint_vcpu_stats h = { 0 };

	if (s->hints_registered)
		hint_channel_stats(&s->hints, id, &h);
	return h;
}

/* ---- the per-vCPU table (context: struct sched_vm) ---- */

#define KSTAT_GETTER(fn, kvm_name)                           \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		return kstat(track(ctx, id), kvm_name);      \
	}
KSTAT_GETTER(v_kvm_exits, "exits")
KSTAT_GETTER(v_halt_exits, "halt_exits")
KSTAT_GETTER(v_polls_ok, "halt_successful_poll")
KSTAT_GETTER(v_polls_tried, "halt_attempted_poll")
KSTAT_GETTER(v_poll_ok_ns, "halt_poll_success_ns")
KSTAT_GETTER(v_poll_bad_ns, "halt_poll_fail_ns")
KSTAT_GETTER(v_halt_wait_ns, "halt_wait_ns")

/* VCPU_STAT(fn, expr): a getter returning EXPR of the vcpu_track T. */
#define VCPU_STAT(fn, expr)                                  \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		const struct vcpu_track *t = track(ctx, id); \
		return (uint64_t)(expr);                     \
	}

VCPU_STAT(v_run_ns, t->sched.run_ns)
/* Run-queue wait from schedstat: what the guest sees as steal time. */
VCPU_STAT(v_wait_ns, t->sched.wait_ns)
VCPU_STAT(v_yields, atomic_load(&t->yields))
VCPU_STAT(v_boosts, atomic_load(&t->boosts))
VCPU_STAT(v_irq_boosts, atomic_load(&t->irq_boosts))
VCPU_STAT(v_parks, atomic_load(&t->parks))
VCPU_STAT(v_park_timeouts, atomic_load(&t->park_timeouts))
VCPU_STAT(v_park_ns, atomic_load(&t->park_ns))
VCPU_STAT(v_park_wakes, atomic_load(&t->wakes))

/* The vCPU's own halt-poll window (kernel series), or none. */
static uint64_t v_halt_poll_window(const void *ctx, unsigned int id)
{
	const struct sched_vm *s = ctx;

	if (!s->state.vcpu_poll_active || id >= POLICY_MAX_VCPUS)
		return UINT64_MAX;
	return s->state.vcpu_poll[id].window_ns;
}

/* HINT_STAT(fn, field): a getter returning the hint channel's FIELD. */
#define HINT_STAT(fn, field)                                 \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		return hints_of(ctx, id).field;              \
	}

HINT_STAT(v_hint_accepted, accepted)
HINT_STAT(v_hint_dropped, dropped)
HINT_STAT(v_hint_invalid, invalid)
HINT_STAT(v_hint_named_holder, named_holder)

/*
 * KVM's own counters have no name or JSON key here: by name they are found
 * in the KVM statistics, and the JSON carries all of those under "kvm".
 */
static const struct stat_desc vcpu_stats[] = {
	{ .column = "kvm_exits", .width = 10, .get = v_kvm_exits },
	{ .column = "halt_exits", .width = 10, .get = v_halt_exits },
	{ .column = "polls ok/try",
	  .width = 13,
	  .join_next = true,
	  .get = v_polls_ok },
	{ .get = v_polls_tried },
	{ .column = "poll_ok_us",
	  .width = 11,
	  .divisor = 1000,
	  .get = v_poll_ok_ns },
	{ .column = "poll_bad_us",
	  .width = 11,
	  .divisor = 1000,
	  .get = v_poll_bad_ns },
	{ .column = "halt_wait",
	  .width = 10,
	  .divisor = 1000000,
	  .suffix = "ms",
	  .get = v_halt_wait_ns },
	{ .name = "run_ns",
	  .json = "run_ns",
	  .column = "run_ms",
	  .width = 9,
	  .divisor = 1000000,
	  .get = v_run_ns },
	{ .name = "wait_ns",
	  .json = "wait_ns",
	  .column = "wait_ms",
	  .width = 9,
	  .divisor = 1000000,
	  .get = v_wait_ns },
	{ .name = "yields",
	  .json = "yields",
	  .column = "yield",
	  .width = 6,
	  .get = v_yields },
	{ .name = "boosts",
	  .json = "boosts",
	  .column = "boost",
	  .width = 6,
	  .get = v_boosts },
	{ .name = "irq_boosts", .json = "irq_boosts", .get = v_irq_boosts },
	{ .name = "parks", .json = "park.parks", .get = v_parks },
	{ .name = "park_timeouts",
	  .json = "park.timeouts",
	  .get = v_park_timeouts },
	{ .name = "park_ns", .json = "park.ns", .get = v_park_ns },
	{ .name = "park_wakes", .json = "park.wakes", .get = v_park_wakes },
	{ .name = "halt_poll_window_ns",
	  .json = "halt_poll_window_ns",
	  .kind = STAT_OPTIONAL,
	  .get = v_halt_poll_window },
	{ .name = "hint_accepted",
	  .json = "hints.accepted",
	  .column = "hints ok/dr/bad",
	  .width = 15,
	  .join_next = true,
	  .get = v_hint_accepted },
	{ .name = "hint_dropped",
	  .json = "hints.dropped",
	  .join_next = true,
	  .get = v_hint_dropped },
	{ .name = "hint_invalid",
	  .json = "hints.invalid",
	  .get = v_hint_invalid },
	{ .name = "hint_named_holder",
	  .json = "hints.named_holder",
	  .get = v_hint_named_holder },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Core's exit counters, then the brain's: the per-vCPU scope. */
static void vcpu_tables(const struct sched_vm *s, struct stat_table tabs[2])
{
	tabs[0] = vm_vcpu_stat_table(s->vm);
	tabs[1] = (struct stat_table){ vcpu_stats, ARRAY_LEN(vcpu_stats), s };
}

static const char *halt_poll_mode(const struct sched_options *o)
{
	/* Off and fixed are the user's and hold without the brain too. */
	if (!o->settings.hints && o->settings.halt_poll == HALT_POLL_AUTO)
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

/* ---- the VM table (context: struct sched_vm) ---- */

/*
 * VM_STAT(fn, expr): a getter returning EXPR of the sched_vm S;
 * VM_TEXT(fn, expr): the same for a STAT_NAME's text (BUF, LEN at hand).
 */
#define VM_STAT(fn, expr)                                    \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		const struct sched_vm *s = ctx;              \
		return (uint64_t)(expr);                     \
	}
#define VM_TEXT(fn, expr)                                             \
	static const char *fn(const void *ctx, char *buf, size_t len) \
	{                                                             \
		const struct sched_vm *s = ctx;                       \
		return (expr);                                        \
	}

VM_STAT(m_elapsed_ns,
	(s->end_ns ? s->end_ns : hvm_monotonic_ns()) - s->start_ns)
VM_STAT(m_running, !s->end_ns)
VM_STAT(m_allowed_cpus, s->nr_allowed)
VM_STAT(m_pressure, s->pressure.avg10_centi)
VM_STAT(m_have_pressure, s->have_pressure)
VM_STAT(m_throttled_ns, s->throttled_ns_total)
VM_TEXT(m_kernel_text, s->kernel_path)
VM_STAT(m_kernel_yield_calls, atomic_load(&s->kernel_yield_calls))
VM_STAT(m_kernel_yields, atomic_load(&s->kernel_yields))
/* Guest console output (core/console_out): a stalled reader shows here. */
VM_STAT(m_console_written, console_out_written(s->vm->console_out))
VM_STAT(m_console_dropped, console_out_dropped(s->vm->console_out))
/*
 * Host input (core/console): bytes the guest's console device took, and
 * how often it could not take a read at once (its queue full: the serial
 * port holds 4 KiB typed ahead; or no receive buffers posted yet), so the
 * input waited in the host's terminal. Nothing is dropped.
 */
VM_STAT(m_console_in, atomic_load(&s->vm->console_in.bytes))
VM_STAT(m_console_in_waits, atomic_load(&s->vm->console_in.waits))
/*
 * Host memory the guest made the devices hold (--guest-objects,
 * base/budget.h): in use, the most at once, the limit, charges refused.
 */
VM_STAT(m_guest_objects, atomic_load(&s->vm->guest_objects.used))
VM_STAT(m_guest_objects_peak, atomic_load(&s->vm->guest_objects.peak))
VM_STAT(m_guest_objects_limit, s->vm->guest_objects.limit)
VM_STAT(m_guest_objects_refused, atomic_load(&s->vm->guest_objects.refused))
VM_STAT(m_share_server_deaths, atomic_load(&s->vm->share_server_deaths))
/*
 * server=process shares: the same kind of memory, held in the file-server
 * processes, each under a budget of its own of --guest-objects' size.
 */
VM_STAT(m_share_objects, atomic_load(&s->vm->share_objects.used))
VM_STAT(m_share_objects_peak, atomic_load(&s->vm->share_objects.peak))
VM_STAT(m_share_objects_refused, atomic_load(&s->vm->share_objects.refused))
/*
 * --agent: exit-report connections (host port 1025) refused because the
 * bound of pending ones was reached (agent/agent_host.c): a guest that
 * opens many of them shows here.
 */
VM_STAT(m_agent_reports_refused, atomic_load(&s->vm->agent_reports_refused))
VM_STAT(m_sched_hints, s->opt.settings.hints)
VM_STAT(m_commit, s->state.commit)
VM_TEXT(m_commit_text, commit_state_name(s->state.commit))
VM_STAT(m_commit_changes, s->commit_changes)
VM_STAT(m_pin, s->state.pin)
VM_TEXT(m_pin_text, pin_plan_name(s->state.pin))
VM_STAT(m_hlt_exits_disabled, s->exits_hlt_disabled)
VM_STAT(m_pause_exits_disabled, s->exits_pause_disabled)
VM_STAT(m_halt_poll_mode, s->opt.settings.halt_poll)
VM_TEXT(m_halt_poll_mode_text, halt_poll_mode(&s->opt))
VM_STAT(m_halt_poll_ns,
	s->state.halt_poll_set ? s->state.halt_poll_ns : UINT64_MAX)
VM_STAT(m_pins_applied, atomic_load(&s->pins_applied))
VM_STAT(m_ple_window, s->state.ple_set ? s->state.ple_window : UINT64_MAX)
VM_STAT(m_ple_window_kvm, s->ple_read ? s->ple_kvm : UINT64_MAX)
VM_STAT(m_ple_changes, s->ple_changes)
VM_STAT(m_ple_mismatches, s->ple_mismatches)
VM_STAT(m_rest_nice, s->rest_nice - s->start_nice)
VM_STAT(m_guest_releases, atomic_load(&s->guest_releases))
VM_STAT(m_halt_poll_changes, s->halt_poll_changes)
VM_STAT(m_ticks, s->ticks)
VM_STAT(m_actuator_errors, s->actuator_errors)
VM_STAT(m_boost_failures, atomic_load(&s->boost_failures))
VM_STAT(m_pv_enabled, s->pv.enabled)
VM_TEXT(m_pv_enabled_text, pv_format(s->pv.enabled, buf, len))
VM_STAT(m_pv_masked_hypercall, s->pv.masked_hypercall)
VM_TEXT(m_pv_masked_hypercall_text, pv_format(s->pv.masked_hypercall, buf, len))
VM_STAT(m_pv_masked_needs, s->pv.masked_needs)
VM_TEXT(m_pv_masked_needs_text, pv_format(s->pv.masked_needs, buf, len))
VM_STAT(m_pv_masked_unsupported, s->pv.masked_unsupported)
VM_TEXT(m_pv_masked_unsupported_text,
	pv_format(s->pv.masked_unsupported, buf, len))
VM_STAT(m_hypercalls_work, s->hypercalls_work)
VM_STAT(m_hint_foreign, s->hints_registered ? s->hints.foreign_writes : 0)

/* For a text-only entry: no number behind it. */
static uint64_t m_none(const void *ctx, unsigned int id)
{
	return 0;
}

/* The VM scope: "vm.NAME" by name, the top of the JSON document. */
/* The boot phases (core/boot_trace.h): ns from process start. */
static uint64_t boot_phase_ns(const void *ctx, enum boot_phase phase)
{
	uint64_t at = atomic_load(
		&((const struct sched_vm *)ctx)->vm->boot.at_ns[phase]);

	return at ? at - boot_trace_process_start_ns() : UINT64_MAX;
}

#define BOOT_PHASE_GETTER(fn, phase)                         \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		return boot_phase_ns(ctx, phase);            \
	}
BOOT_PHASE_GETTER(m_boot_vm_created, BOOT_VM_CREATED)
BOOT_PHASE_GETTER(m_boot_first_run, BOOT_FIRST_RUN)
BOOT_PHASE_GETTER(m_boot_first_console, BOOT_FIRST_CONSOLE)
BOOT_PHASE_GETTER(m_boot_guest_stop, BOOT_GUEST_STOP)
BOOT_PHASE_GETTER(m_boot_vcpus_joined, BOOT_REPORT)

/* Exits of all vCPUs before the guest's first console byte, by kind. */
static uint64_t boot_exits(const void *ctx, unsigned int reason)
{
	return ((const struct sched_vm *)ctx)
		->vm->boot.exits_before_console[reason];
}

#define BOOT_EXITS_GETTER(fn, reason)                        \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		return boot_exits(ctx, reason);              \
	}
BOOT_EXITS_GETTER(m_boot_exits_io, KVM_EXIT_IO)
BOOT_EXITS_GETTER(m_boot_exits_mmio, KVM_EXIT_MMIO)
BOOT_EXITS_GETTER(m_boot_exits_hlt, KVM_EXIT_HLT)
BOOT_EXITS_GETTER(m_boot_exits_intr, KVM_EXIT_INTR)
BOOT_EXITS_GETTER(m_boot_exits_ioapic_eoi, KVM_EXIT_IOAPIC_EOI)

static uint64_t m_boot_exits_total(const void *ctx, unsigned int id)
{
	uint64_t sum = 0;

	for (unsigned int r = 0; r < BOOT_EXIT_REASONS; r++)
		sum += boot_exits(ctx, r);
	return sum;
}

static const struct stat_desc vm_stats[] = {
	{ .name = "elapsed_ns", .json = "elapsed_ns", .get = m_elapsed_ns },
	{ .name = "running",
	  .json = "running",
	  .kind = STAT_FLAG,
	  .get = m_running },
	{ .name = "allowed_cpus",
	  .json = "host.allowed_cpus",
	  .get = m_allowed_cpus },
	{ .name = "pressure_avg10_centi",
	  .json = "host.pressure_avg10_centi",
	  .get = m_pressure },
	{ .name = "have_pressure",
	  .json = "host.have_pressure",
	  .kind = STAT_FLAG,
	  .get = m_have_pressure },
	{ .name = "throttled_ns",
	  .json = "host.throttled_ns",
	  .get = m_throttled_ns },
	{ .json = "host.kernel",
	  .kind = STAT_NAME,
	  .get = m_none,
	  .text = m_kernel_text },
	{ .name = "kernel_yield_calls",
	  .json = "host.kernel_yield_calls",
	  .get = m_kernel_yield_calls },
	{ .name = "kernel_yields",
	  .json = "host.kernel_yields",
	  .get = m_kernel_yields },
	{ .name = "console_written",
	  .json = "console.written",
	  .get = m_console_written },
	{ .name = "console_dropped",
	  .json = "console.dropped",
	  .get = m_console_dropped },
	{ .name = "console_in", .json = "console.in", .get = m_console_in },
	{ .name = "console_in_waits",
	  .json = "console.in_waits",
	  .get = m_console_in_waits },
	{ .name = "guest_objects",
	  .json = "guest_objects.used",
	  .get = m_guest_objects },
	{ .name = "guest_objects_peak",
	  .json = "guest_objects.peak",
	  .get = m_guest_objects_peak },
	{ .name = "guest_objects_limit",
	  .json = "guest_objects.limit",
	  .get = m_guest_objects_limit },
	{ .name = "guest_objects_refused",
	  .json = "guest_objects.refused",
	  .get = m_guest_objects_refused },
	{ .name = "share_servers_died",
	  .json = "shares.servers_died",
	  .get = m_share_server_deaths },
	{ .name = "share_server_objects",
	  .json = "shares.server_objects.used",
	  .get = m_share_objects },
	{ .name = "share_server_objects_peak",
	  .json = "shares.server_objects.peak",
	  .get = m_share_objects_peak },
	{ .name = "share_server_objects_refused",
	  .json = "shares.server_objects.refused",
	  .get = m_share_objects_refused },
	{ .name = "agent_reports_refused",
	  .json = "agent.reports_refused",
	  .get = m_agent_reports_refused },
	{ .name = "sched_hints",
	  .json = "policy.sched_hints",
	  .kind = STAT_FLAG,
	  .get = m_sched_hints },
	{ .name = "commit",
	  .json = "policy.commit",
	  .kind = STAT_NAME,
	  .get = m_commit,
	  .text = m_commit_text },
	{ .name = "commit_changes",
	  .json = "policy.commit_changes",
	  .get = m_commit_changes },
	{ .name = "pin",
	  .json = "policy.pin",
	  .kind = STAT_NAME,
	  .get = m_pin,
	  .text = m_pin_text },
	{ .name = "hlt_exits_disabled",
	  .json = "policy.hlt_exits_disabled",
	  .kind = STAT_FLAG,
	  .get = m_hlt_exits_disabled },
	{ .name = "pause_exits_disabled",
	  .json = "policy.pause_exits_disabled",
	  .kind = STAT_FLAG,
	  .get = m_pause_exits_disabled },
	{ .name = "halt_poll_mode",
	  .json = "policy.halt_poll_mode",
	  .kind = STAT_NAME,
	  .get = m_halt_poll_mode,
	  .text = m_halt_poll_mode_text },
	{ .name = "halt_poll_ns",
	  .json = "policy.halt_poll_ns",
	  .kind = STAT_OPTIONAL,
	  .get = m_halt_poll_ns },
	{ .name = "pins_applied",
	  .json = "policy.pins_applied",
	  .get = m_pins_applied },
	{ .name = "ple_window",
	  .json = "policy.ple_window",
	  .kind = STAT_OPTIONAL,
	  .get = m_ple_window },
	{ .name = "ple_window_kvm",
	  .json = "policy.ple_window_kvm",
	  .kind = STAT_OPTIONAL,
	  .get = m_ple_window_kvm },
	{ .name = "ple_changes",
	  .json = "policy.ple_changes",
	  .get = m_ple_changes },
	{ .name = "ple_mismatches",
	  .json = "policy.ple_mismatches",
	  .get = m_ple_mismatches },
	{ .name = "rest_nice_offset",
	  .json = "policy.rest_nice_offset",
	  .get = m_rest_nice },
	{ .name = "guest_releases",
	  .json = "policy.guest_releases",
	  .kind = STAT_FLAG,
	  .get = m_guest_releases },
	{ .name = "halt_poll_changes",
	  .json = "policy.halt_poll_changes",
	  .get = m_halt_poll_changes },
	{ .name = "ticks", .json = "policy.ticks", .get = m_ticks },
	{ .name = "actuator_errors",
	  .json = "policy.actuator_errors",
	  .get = m_actuator_errors },
	{ .name = "boost_failures",
	  .json = "policy.boost_failures",
	  .get = m_boost_failures },
	{ .json = "pv.enabled",
	  .kind = STAT_NAME,
	  .get = m_pv_enabled,
	  .text = m_pv_enabled_text },
	{ .name = "pv_enabled",
	  .json = "pv.enabled_bits",
	  .get = m_pv_enabled },
	{ .name = "pv_masked_hypercall",
	  .json = "pv.masked_hypercall",
	  .kind = STAT_NAME,
	  .get = m_pv_masked_hypercall,
	  .text = m_pv_masked_hypercall_text },
	{ .name = "pv_masked_needs",
	  .json = "pv.masked_needs",
	  .kind = STAT_NAME,
	  .get = m_pv_masked_needs,
	  .text = m_pv_masked_needs_text },
	{ .name = "pv_masked_unsupported",
	  .json = "pv.masked_unsupported",
	  .kind = STAT_NAME,
	  .get = m_pv_masked_unsupported,
	  .text = m_pv_masked_unsupported_text },
	{ .name = "hypercalls_work",
	  .json = "pv.hypercalls_work",
	  .kind = STAT_FLAG,
	  .get = m_hypercalls_work },
	{ .name = "hint_foreign", .get = m_hint_foreign },
	{ .name = "boot.vm_created_ns",
	  .json = "boot.vm_created_ns",
	  .kind = STAT_OPTIONAL,
	  .get = m_boot_vm_created },
	{ .name = "boot.first_kvm_run_ns",
	  .json = "boot.first_kvm_run_ns",
	  .kind = STAT_OPTIONAL,
	  .get = m_boot_first_run },
	{ .name = "boot.first_console_byte_ns",
	  .json = "boot.first_console_byte_ns",
	  .kind = STAT_OPTIONAL,
	  .get = m_boot_first_console },
	{ .name = "boot.guest_stop_ns",
	  .json = "boot.guest_stop_ns",
	  .kind = STAT_OPTIONAL,
	  .get = m_boot_guest_stop },
	{ .name = "boot.vcpus_joined_ns",
	  .json = "boot.vcpus_joined_ns",
	  .kind = STAT_OPTIONAL,
	  .get = m_boot_vcpus_joined },
	{ .name = "boot.exits_before_console",
	  .json = "boot.exits_before_console",
	  .get = m_boot_exits_total },
	{ .name = "boot.exits_before_console_io",
	  .json = "boot.exits_before_console_io",
	  .get = m_boot_exits_io },
	{ .name = "boot.exits_before_console_mmio",
	  .json = "boot.exits_before_console_mmio",
	  .get = m_boot_exits_mmio },
	{ .name = "boot.exits_before_console_hlt",
	  .json = "boot.exits_before_console_hlt",
	  .get = m_boot_exits_hlt },
	{ .name = "boot.exits_before_console_intr",
	  .json = "boot.exits_before_console_intr",
	  .get = m_boot_exits_intr },
	{ .name = "boot.exits_before_console_ioapic_eoi",
	  .json = "boot.exits_before_console_ioapic_eoi",
	  .get = m_boot_exits_ioapic_eoi },
};

/* One budget's line (base/budget.h): bytes as KiB. */
static void put_budget(struct stat_text *t, const char *what, uint64_t used,
		       uint64_t peak, uint64_t limit, const char *of,
		       uint64_t refused)
{
	stat_put(
		t,
		"  %s: %llu KiB held, %llu KiB at most, of %llu KiB%s; %llu refused\n",
		what, (unsigned long long)(used >> 10),
		(unsigned long long)(peak >> 10),
		(unsigned long long)(limit >> 10), of,
		(unsigned long long)refused);
}

/*
 * The boot phases as two text lines: ms from process start, and the
 * exits before the first console byte (core/boot_trace.h).
 */
static void format_boot(const struct sched_vm *s, struct stat_text *t)
{
	const struct boot_trace *b = &s->vm->boot;
	static const struct {
		unsigned int reason;
		const char *name;
	} kinds[] = {
		{ KVM_EXIT_IO, "io" },
		{ KVM_EXIT_MMIO, "mmio" },
		{ KVM_EXIT_HLT, "hlt" },
		{ KVM_EXIT_INTR, "intr" },
		{ KVM_EXIT_IOAPIC_EOI, "ioapic_eoi" },
	};

	stat_put(t, "  boot (ms from process start):");
	for (enum boot_phase p = BOOT_VM_CREATED; p < BOOT_TORN_DOWN; p++) {
		double ms = boot_trace_ms(b, p);

		if (ms >= 0)
			stat_put(t, " %s %.2f", boot_phase_name(p), ms);
		else
			stat_put(t, " %s -", boot_phase_name(p));
	}
	stat_put(t, "\n  boot exits before the first console byte: %llu",
		 (unsigned long long)m_boot_exits_total(s, 0));
	for (size_t i = 0; i < ARRAY_LEN(kinds); i++)
		stat_put(t, ", %s %llu", kinds[i].name,
			 (unsigned long long)
				 b->exits_before_console[kinds[i].reason]);
	stat_put(t, "\n");
}

/* ---- the three readers ---- */

static void format_table(struct sched_vm *s, struct stat_text *t)
{
	uint64_t end = s->end_ns ? s->end_ns : hvm_monotonic_ns();
	char cpus[128], pv[256], masked[256];
	cpu_set_t set;

	CPU_ZERO(&set);
	for (unsigned int i = 0; i < s->nr_allowed; i++)
		CPU_SET(s->allowed[i], &set);
	stat_put(t, "hintvm stats after %.3f s\n",
		 (double)(end - s->start_ns) / 1e9);
	stat_put(
		t,
		"  host: %u CPUs allowed (%s), cpu pressure %s%u.%02u%%, throttled %llu ms, %s\n",
		s->nr_allowed, observe_format_cpulist(&set, cpus, sizeof(cpus)),
		s->have_pressure ? "" : "n/a ", s->pressure.avg10_centi / 100,
		s->pressure.avg10_centi % 100,
		(unsigned long long)(s->throttled_ns_total / 1000000),
		s->kernel_path);
	stat_put(t,
		 "  console: %llu bytes out, %llu dropped (reader too slow); "
		 "%llu bytes in, %llu waits (guest not taking input)\n",
		 (unsigned long long)m_console_written(s, 0),
		 (unsigned long long)m_console_dropped(s, 0),
		 (unsigned long long)m_console_in(s, 0),
		 (unsigned long long)m_console_in_waits(s, 0));
	put_budget(t, "guest objects", m_guest_objects(s, 0),
		   m_guest_objects_peak(s, 0), m_guest_objects_limit(s, 0),
		   " (--guest-objects)", m_guest_objects_refused(s, 0));
	if (m_share_objects_peak(s, 0) || m_share_objects_refused(s, 0))
		put_budget(t, "file servers", m_share_objects(s, 0),
			   m_share_objects_peak(s, 0),
			   m_guest_objects_limit(s, 0), " each",
			   m_share_objects_refused(s, 0));
	/* server=process: its requests fail with EIO since (docs/shares.md). */
	if (m_share_server_deaths(s, 0))
		stat_put(
			t,
			"  shares: %llu file-server process(es) died; their shares answer EIO\n",
			(unsigned long long)m_share_server_deaths(s, 0));
	if (s->vm->cfg->agent)
		stat_put(
			t,
			"  agent: %llu exit-report connections refused (too many pending)\n",
			(unsigned long long)m_agent_reports_refused(s, 0));
	if (s->kernel.yield_to)
		stat_put(
			t,
			"  kernel directed yields: %llu issued, %llu yielded\n",
			(unsigned long long)atomic_load(&s->kernel_yield_calls),
			(unsigned long long)atomic_load(&s->kernel_yields));
	stat_put(
		t,
		"  policy: %s (%u changes), pin %s, HLT exits %s, PAUSE exits %s, halt-poll %s (%llu changes), hints %s\n",
		s->opt.settings.hints ? commit_state_name(s->state.commit)
				      : "not managed",
		s->commit_changes, pin_plan_name(s->state.pin),
		!s->exits_hlt_disabled ? "kept"
		: s->state.exits_disabled
			? "disabled"
			: "disabled but KVM still blocks (polling)",
		s->exits_pause_disabled ? "disabled" : "kept",
		halt_poll_mode(&s->opt),
		(unsigned long long)s->halt_poll_changes,
		!s->opt.settings.hints		  ? "off"
		: s->state.commit == COMMIT_UNDER ? "received, not acted on"
						  : "acted on");
	format_boot(s, t);
	if (s->state.halt_poll_set)
		stat_put(t, "  halt-poll value: %u ns\n",
			 s->state.halt_poll_ns);
	else
		stat_put(t, "  halt-poll value: KVM module default\n");
	if (s->pv_known) {
		stat_put(t, "  pv: %s\n",
			 pv_format(s->pv.enabled, pv, sizeof(pv)));
		if (s->pv.masked_hypercall)
			stat_put(
				t,
				"  pv masked, this host cannot serve hypercalls: %s\n",
				pv_format(s->pv.masked_hypercall, masked,
					  sizeof(masked)));
		if (s->pv.masked_unsupported)
			stat_put(t, "  pv masked, not offered by KVM: %s\n",
				 pv_format(s->pv.masked_unsupported, masked,
					   sizeof(masked)));
		if (s->pv.masked_hlt)
			stat_put(t,
				 "  pv masked, HLT exits disabled: unhalt\n");
		if (s->pv.masked_needs)
			stat_put(t,
				 "  pv masked, a feature it needs is off: %s\n",
				 pv_format(s->pv.masked_needs, masked,
					   sizeof(masked)));
	}
	if (s->actuator_errors)
		stat_put(t, "  actuator errors: %llu (last: %s)\n",
			 (unsigned long long)s->actuator_errors,
			 strerror(-s->last_actuator_error));
	if (atomic_load(&s->boost_failures))
		stat_put(t, "  boosts failed: %llu (no CAP_SYS_NICE?)\n",
			 (unsigned long long)atomic_load(&s->boost_failures));

	{
		struct stat_table tabs[2];

		vcpu_tables(s, tabs);
		stat_put(t, "  %4s", "vcpu");
		stat_text_header(t, tabs, 2);
		stat_put(t, "\n");
		for (unsigned int i = 0; i < s->nr_vcpus; i++) {
			stat_put(t, "  %4u", i);
			stat_text_row(t, tabs, 2, i);
			stat_put(t, "\n");
		}
	}
}

static void json_kvm_stats(struct stat_text *t, const struct kvm_stats *st,
			   const uint64_t *values)
{
	stat_put(t, "{");
	for (size_t i = 0; i < st->nr_descs; i++) {
		const struct kvm_stat_desc *d = &st->descs[i];

		/* Names were validated as printable without quotes/escapes. */
		stat_put(t, "%s\"%s\":", i ? "," : "", d->name);
		if (d->type == KVM_STAT_LINEAR_HIST ||
		    d->type == KVM_STAT_LOG_HIST) {
			stat_put(t, "[");
			for (size_t b = 0; b < d->size; b++)
				stat_put(t, "%s%llu", b ? "," : "",
					 (unsigned long long)
						 values[d->index + b]);
			stat_put(t, "]");
		} else {
			stat_put(t, "%llu",
				 (unsigned long long)values[d->index]);
		}
	}
	stat_put(t, "}");
}

static void format_json(struct sched_vm *s, struct stat_text *t)
{
	struct stat_table vm_tab = { vm_stats, ARRAY_LEN(vm_stats), s };
	struct stat_table tabs[2];

	stat_put(t, "{");
	stat_json_members(t, &vm_tab, 1, 0, true);
	stat_put(t, ",\"vm_kvm\":");
	if (s->have_vm_stats)
		json_kvm_stats(t, &s->vm_stats, s->vm_values);
	else
		stat_put(t, "null");
	stat_put(t, ",\"vcpus\":[");
	vcpu_tables(s, tabs);
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		const struct vcpu_track *tr = &s->vcpus[i];

		stat_put(t, "%s{\"id\":%u", i ? "," : "", i);
		stat_json_members(t, tabs, 2, i, false);
		stat_put(t, ",\"kvm\":");
		if (tr->have_stats)
			json_kvm_stats(t, &tr->stats, tr->values);
		else
			stat_put(t, "null");
		stat_put(t, "}");
	}
	stat_put(t, "]}\n");
}

void stats_read_kvm(struct sched_vm *s)
{
	if (s->have_vm_stats)
		kvm_stats_read(&s->vm_stats, s->vm_values);
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];

		if (t->have_stats)
			kvm_stats_read(&t->stats, t->values);
	}
}

int sched_format_stats(struct vm *vm, bool json, char *buf, size_t len)
{
	struct sched_vm *s = vm->sched;
	struct stat_text t = { buf, len, 0 };

	if (!s)
		return -ENOENT;
	if (len)
		buf[0] = '\0';
	pthread_mutex_lock(&s->lock);
	if (!s->end_ns)
		stats_read_kvm(s);
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
	const struct vcpu_track *tr = &s->vcpus[i];
	const struct kvm_stat_desc *d;
	struct stat_table tabs[2];

	vcpu_tables(s, tabs);
	if (stat_lookup(tabs, 2, name, i, out))
		return true;
	if (!tr->have_stats || !(d = kvm_stats_find(&tr->stats, name)))
		return false;
	*out = 0;
	for (size_t b = 0; b < d->size; b++)
		*out += tr->values[d->index + b];
	return true;
}

static bool vm_value(struct sched_vm *s, const char *name, uint64_t *out)
{
	struct stat_table vm_tab = { vm_stats, ARRAY_LEN(vm_stats), s };
	const struct kvm_stat_desc *d;

	if (stat_lookup(&vm_tab, 1, name, 0, out))
		return true;
	if (!s->have_vm_stats || !(d = kvm_stats_find(&s->vm_stats, name)))
		return false;
	*out = s->vm_values[d->index];
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
		stats_read_kvm(s);
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
