// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The brain's lifecycle (sched_vm_create ... sched_vm_destroy, called by
 * the builder and through the vm_hooks) and the sched thread: every
 * interval it observes the host and KVM's statistics, asks the pure policy
 * (policy.c) and applies the decision. Boosts are in boost.c, the hint
 * channel's host side in hint_host.c, the reports in stats_report.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "abi/kvm_hint_uapi.h"
#include "base/clock.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"
#include "sched/actuators.h"
#include "sched/brain.h"
#include "sched/sched_vm.h"
#include "sched/stats_report.h"

/* ---- creation: the static decisions ---- */

static void read_allowed(struct sched_vm *s)
{
	cpu_set_t set;
	unsigned int n = 0;

	if (observe_allowed_cpus(&set) <= 0) {
		/* Cannot tell: assume CPU 0 only rather than guess high. */
		s->allowed[0] = 0;
		s->nr_allowed = 1;
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && n < POLICY_MAX_VCPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			s->allowed[n++] = (uint16_t)cpu;
	s->nr_allowed = n;
}

void brain_set_halt_poll(struct sched_vm *s, uint32_t ns)
{
	int r;

	if (!s->halt_poll_supported)
		return;
	r = act_set_halt_poll(s->vm->fd, ns);
	if (r < 0) {
		s->actuator_errors++;
		s->last_actuator_error = r;
		return;
	}
	s->halt_poll_changes++;
	event_post(&s->vm->events, VM_EVENT_HALT_POLL, -1, ns, NULL, NULL);
}

void brain_set_ple(struct sched_vm *s, uint32_t window)
{
	int r = kernel_hints_set_ple(s->vm->fd, &s->kernel, window);

	if (r < 0) {
		s->actuator_errors++;
		s->last_actuator_error = r;
		return;
	}
	s->ple_changes++;
	/*
	 * What KVM reports now: --stats shows it beside what we set, in the
	 * policy's terms (the module's default is POLICY_PLE_DEFAULT on both
	 * sides, as docs/sched.md says), and counts each disagreement.
	 */
	s->ple_read =
		kernel_hints_get_ple(s->vm->fd, &s->kernel, &s->ple_kvm) == 0;
	if (!s->ple_read)
		return;
	if (s->ple_kvm == HVM_KVM_X86_PLE_DEFAULT)
		s->ple_kvm = POLICY_PLE_DEFAULT;
	if (s->ple_kvm != window)
		s->ple_mismatches++;
}

/* Per-vCPU halt-poll limits, or all back to the VM's value. */
static void apply_vcpu_halt_poll(struct sched_vm *s,
				 const struct policy_action *a)
{
	for (unsigned int i = 0; i < s->nr_vcpus && i < POLICY_MAX_VCPUS; i++) {
		int fd = vm_vcpu_fd(s->vm, i), r = 0;

		if (a->reset_vcpu_halt_poll)
			r = kernel_hints_inherit_vcpu_halt_poll(fd, &s->kernel);
		else if (a->set_vcpu_halt_poll[i])
			r = kernel_hints_set_vcpu_halt_poll(
				fd, &s->kernel, a->vcpu_halt_poll_ns[i]);
		else
			continue;
		if (r < 0) {
			s->actuator_errors++;
			s->last_actuator_error = r;
		} else {
			s->halt_poll_changes++;
		}
	}
}

void brain_reset_vcpu_halt_poll(struct sched_vm *s)
{
	struct policy_action *a = calloc(1, sizeof(*a));

	if (!a || !s->state.vcpu_poll_active) {
		free(a);
		return;
	}
	a->reset_vcpu_halt_poll = true;
	apply_vcpu_halt_poll(s, a);
	s->state.vcpu_poll_active = false;
	free(a);
}

int sched_vm_create(struct vm *vm)
{
	struct policy_create_input in = { 0 };
	struct sched_vm *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->sched = s;
	s->vm = vm;
	s->opt = *vm->cfg->sched;
	s->json_fd = -1;
	s->nr_vcpus = vm->cfg->cpus;
	/* Threads the VM starts inherit this nice; no boost goes above it. */
	errno = 0;
	s->start_nice = getpriority(PRIO_PROCESS, 0);
	if (s->start_nice == -1 && errno)
		s->start_nice = 0;
	brain_boost_probe(s, vm->cfg->sandbox);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->boost_lock, NULL);
	pthread_mutex_init(&s->park_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	s->vcpus = calloc(s->nr_vcpus, sizeof(*s->vcpus));
	if (!s->vcpus) {
		pthread_condattr_destroy(&ca);
		return hvm_set_error(-ENOMEM, "out of memory");
	}
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		pthread_cond_init(&s->vcpus[i].park_cond, &ca);
	pthread_condattr_destroy(&ca);
	s->start_ns = hvm_monotonic_ns();
	kernel_hints_probe(vm->fd, &s->kernel);
	r = kernel_hints_apply(vm->fd, &s->kernel, &s->opt.kvm_control);
	if (r < 0)
		return r;
	kernel_hints_describe(&s->kernel, s->kernel_path,
			      sizeof(s->kernel_path));

	read_allowed(s);
	s->have_pressure = observe_read_pressure(&s->pressure) == 0;
	s->have_cpu_stat = observe_read_cpu_stat(&s->cpu_stat) == 0;
	arch_idle_exits_query(vm->fd, &s->can_disable_hlt,
			      &s->can_disable_pause);
	s->halt_poll_supported = kvm_check_cap(vm->fd, KVM_CAP_HALT_POLL) > 0;

	in.settings = s->opt.settings;
	in.nr_vcpus = s->nr_vcpus;
	memcpy(in.allowed_cpus, s->allowed, sizeof(in.allowed_cpus));
	in.nr_allowed = s->nr_allowed;
	in.have_pressure = s->have_pressure;
	in.pressure_avg10_centi = s->pressure.avg10_centi;
	in.host_can_disable_hlt = s->can_disable_hlt;
	in.host_can_disable_pause = s->can_disable_pause;
	in.ple_control = s->kernel.ple_control && !s->kernel.ple_user;
	r = policy_vm_create(&in, &s->create);
	if (r < 0)
		return r;
	s->state = s->create.first.next;
	if (s->create.first.set_rest_nice)
		brain_set_rest_nice(s, s->state.rest_nice_offset);
	if (s->create.first.set_ple)
		brain_set_ple(s, s->create.first.ple_window);

	if (s->create.disable_hlt_exits || s->create.disable_pause_exits) {
		r = arch_idle_exits_disable(vm->fd, s->create.disable_hlt_exits,
					    s->create.disable_pause_exits);
		if (r < 0) {
			pr_warn("cannot disable HLT/PAUSE exits: %s; keeping them",
				strerror(-r));
			s->state.exits_disabled = false;
			s->state.halt_poll_set = false;
		} else {
			s->exits_hlt_disabled = s->create.disable_hlt_exits;
			s->exits_pause_disabled = s->create.disable_pause_exits;
		}
	}
	if (s->create.first.set_halt_poll && s->state.halt_poll_set)
		brain_set_halt_poll(s, s->create.first.halt_poll_ns);
	atomic_store(&s->commit, (int)s->state.commit);
	pr_info("sched: %u vCPUs on %u host CPUs, %s, pin %s, HLT exits %s, halt-poll %s",
		s->nr_vcpus, s->nr_allowed, commit_state_name(s->state.commit),
		pin_plan_name(s->create.first.pin),
		s->exits_hlt_disabled ? "disabled" : "kept",
		s->state.halt_poll_set ? "set" : "KVM default");
	return 0;
}

uint32_t sched_pv_features(struct vm *vm, unsigned int arch, uint32_t supported,
			   bool hypercalls_work)
{
	struct sched_vm *s = vm->sched;
	struct pv_host host = { .arch = arch,
				.supported = supported,
				.hypercalls_work = hypercalls_work };
	char names[256];
	uint32_t asked;

	if (!s)
		return supported & ~pv_hypercall_mask();
	host.hlt_exits_disabled = s->exits_hlt_disabled;
	pv_resolve(&s->opt.pv, &host, &s->pv);
	s->pv_known = true;
	s->pv_supported = supported;
	s->hypercalls_work = hypercalls_work;
	/* Tell the user when something they named explicitly is missing. */
	asked = s->opt.pv.add;
	if (asked & s->pv.ignored_arch)
		pr_warn("--pv: %s: no meaning on %s; ignored",
			pv_format(asked & s->pv.ignored_arch, names,
				  sizeof(names)),
			arch == PV_ARCH_ARM64 ? "arm64" : "x86");
	if (asked & s->pv.masked_unsupported)
		pr_warn("--pv: this host's KVM does not offer %s; not enabled",
			pv_format(asked & s->pv.masked_unsupported, names,
				  sizeof(names)));
	if (asked & s->pv.masked_hypercall)
		pr_warn("--pv: this host cannot serve hypercalls; %s not enabled",
			pv_format(asked & s->pv.masked_hypercall, names,
				  sizeof(names)));
	if (asked & s->pv.masked_hlt)
		pr_warn("--pv: unhalt needs HLT exits, which are disabled; not enabled");
	if (asked & s->pv.masked_needs)
		pr_warn("--pv: %s needs a feature this host does not offer; not enabled",
			pv_format(asked & s->pv.masked_needs, names,
				  sizeof(names)));
	return s->pv.enabled;
}

/* ---- the sched thread ---- */

static int open_stats(int fd, struct kvm_stats *stats, uint64_t **values,
		      uint64_t **prev, uint64_t **delta)
{
	int sfd = ioctl(fd, KVM_GET_STATS_FD, NULL);
	int r;

	if (sfd < 0)
		return -errno;
	r = kvm_stats_open(stats, sfd);
	if (r < 0)
		return r;
	*values = calloc(stats->nr_values + 1, sizeof(uint64_t));
	if (prev)
		*prev = calloc(stats->nr_values + 1, sizeof(uint64_t));
	if (delta)
		*delta = calloc(stats->nr_values + 1, sizeof(uint64_t));
	r = -ENOMEM;
	if (*values && (!prev || *prev) && (!delta || *delta))
		r = kvm_stats_read(stats, *values);
	if (r < 0)
		kvm_stats_close(stats); /* the arrays are freed by the caller */
	return r;
}

static void read_schedstats(struct sched_vm *s)
{
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];
		pid_t tid = vm_vcpu_tid(s->vm, i);
		struct thread_sched now;

		if (t->final || !tid || observe_read_thread(tid, &now) < 0)
			continue;
		t->sched = now;
		t->have_sched = true;
	}
}

static uint64_t sub_or_zero(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void apply_pinning(struct sched_vm *s, const struct policy_action *a)
{
	for (unsigned int i = 0; i < s->nr_vcpus && i < POLICY_MAX_VCPUS; i++) {
		pid_t tid = vm_vcpu_tid(s->vm, i);
		int r;

		if (!tid || s->vcpus[i].final)
			continue;
		if (a->pin == PIN_PLAN_DEDICATED && a->vcpu_cpu[i] >= 0)
			r = act_pin_thread(tid, a->vcpu_cpu[i]);
		else if (a->pin == PIN_PLAN_SHARED)
			r = act_spread_thread(tid, a->cpu_set, a->nr_cpu_set);
		else
			r = act_spread_thread(tid, s->allowed, s->nr_allowed);
		/* ESRCH: the vCPU thread already ended, nothing to move. */
		if (r < 0 && r != -ESRCH) {
			s->actuator_errors++;
			s->last_actuator_error = r;
		} else if (r == 0) {
			atomic_fetch_add(&s->pins_applied, 1);
		}
	}
}

static void read_hist(const struct vcpu_track *t, const char *name,
		      uint64_t *out)
{
	const struct kvm_stat_desc *hist = kvm_stats_find(&t->stats, name);

	if (hist && hist->type == KVM_STAT_LOG_HIST)
		for (unsigned int b = 0;
		     b < hist->size && b < POLICY_HALT_HIST_BUCKETS; b++)
			out[b] = t->delta[hist->index + b];
}

/* One vCPU's halt statistics of the interval (deltas). */
static void vcpu_halt(const struct vcpu_track *t, struct halt_obs *h)
{
	const struct kvm_stats *st = &t->stats;

	h->attempted_polls =
		kvm_stats_get(st, t->delta, "halt_attempted_poll", 0, 0);
	h->successful_polls =
		kvm_stats_get(st, t->delta, "halt_successful_poll", 0, 0);
	h->poll_success_ns =
		kvm_stats_get(st, t->delta, "halt_poll_success_ns", 0, 0);
	h->poll_fail_ns =
		kvm_stats_get(st, t->delta, "halt_poll_fail_ns", 0, 0);
	h->wait_ns = kvm_stats_get(st, t->delta, "halt_wait_ns", 0, 0);
	read_hist(t, "halt_wait_hist", h->wait_hist);
	read_hist(t, "halt_poll_success_hist", h->poll_ok_hist);
	read_hist(t, "halt_poll_fail_hist", h->poll_fail_hist);
}

/* One observation interval: snapshot, decide, act (holds s->lock). */
static void brain_tick(struct sched_vm *s, uint64_t interval_ns)
{
	struct policy_snapshot *snap = calloc(1, sizeof(*snap));
	struct policy_action *act = calloc(1, sizeof(*act));
	struct cgroup_cpu_stat cs;

	if (!snap || !act)
		goto out;
	pthread_mutex_lock(&s->lock);
	stats_read_kvm(s);
	read_schedstats(s);
	read_allowed(s);
	s->have_pressure = observe_read_pressure(&s->pressure) == 0;
	if (observe_read_cpu_stat(&cs) == 0) {
		if (s->have_cpu_stat)
			snap->throttled_ns = sub_or_zero(
				cs.throttled_ns, s->cpu_stat.throttled_ns);
		s->throttled_ns_total += snap->throttled_ns;
		s->cpu_stat = cs;
		s->have_cpu_stat = true;
	}

	snap->interval_ns = interval_ns;
	snap->nr_vcpus = s->nr_vcpus;
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];

		if (i < POLICY_MAX_VCPUS) {
			snap->vcpus[i].run_ns = sub_or_zero(
				t->sched.run_ns, t->sched_prev.run_ns);
			snap->vcpus[i].wait_ns = sub_or_zero(
				t->sched.wait_ns, t->sched_prev.wait_ns);
		}
		t->sched_prev = t->sched;
		if (t->have_stats) {
			kvm_stats_delta(&t->stats, t->prev, t->values,
					t->delta);
			memcpy(t->prev, t->values,
			       t->stats.nr_values * sizeof(uint64_t));
			if (i < POLICY_MAX_VCPUS) {
				vcpu_halt(t, &snap->vcpus[i].halt);
				halt_obs_add(&snap->halt, &snap->vcpus[i].halt);
			}
		}
	}
	memcpy(snap->allowed_cpus, s->allowed, sizeof(snap->allowed_cpus));
	snap->nr_allowed = s->nr_allowed;
	snap->have_pressure = s->have_pressure;
	snap->pressure_avg10_centi = s->pressure.avg10_centi;
	snap->settings = s->opt.settings;
	snap->state = s->state;
	snap->per_vcpu_halt_poll = s->kernel.halt_poll_vcpu;
	snap->ple_control = s->kernel.ple_control && !s->kernel.ple_user;

	policy_decide(snap, act);

	if (act->apply_pin)
		apply_pinning(s, act);
	if (act->set_halt_poll)
		brain_set_halt_poll(s, act->halt_poll_ns);
	apply_vcpu_halt_poll(s, act);
	if (act->set_ple)
		brain_set_ple(s, act->ple_window);
	if (act->set_rest_nice)
		brain_set_rest_nice(s, act->next.rest_nice_offset);
	if (act->commit_changed) {
		s->commit_changes++;
		pr_info("sched: host is now %s for this VM",
			commit_state_name(act->next.commit));
		event_post(&s->vm->events, VM_EVENT_COMMIT, -1, 0,
			   commit_state_name(act->next.commit), NULL);
	}
	s->state = act->next;
	atomic_store(&s->commit, (int)s->state.commit);
	s->ticks++;
	pthread_mutex_unlock(&s->lock);
out:
	free(snap);
	free(act);
}

static void print_table(struct sched_vm *s)
{
	char *buf = malloc(65536);

	if (!buf)
		return;
	if (sched_format_stats(s->vm, false, buf, 65536) >= 0)
		fputs(buf, stderr);
	free(buf);
}

/*
 * The sched thread starts before the vCPU threads: wait for them. Each
 * vCPU thread wakes us once it has published its tid (sched_vcpu_start),
 * and sched_vm_stopped() does on the way out: no polling, so a VM that
 * ends at once does not wait for a sleep here.
 */
static void wait_for_tids(struct sched_vm *s)
{
	pthread_mutex_lock(&s->boost_lock);
	for (;;) {
		bool all = true;

		for (unsigned int i = 0; i < s->nr_vcpus && all; i++)
			all = vm_vcpu_tid(s->vm, i) != 0;
		if (all || s->stop)
			break;
		pthread_cond_wait(&s->cond, &s->boost_lock);
	}
	pthread_mutex_unlock(&s->boost_lock);
}

static void *brain_thread(void *arg)
{
	struct sched_vm *s = arg;
	uint64_t interval = BRAIN_INTERVAL_MS * 1000000ull;
	uint64_t print_every;
	uint64_t last_tick, last_print, next_boost = UINT64_MAX;

	pthread_setname_np(pthread_self(), "hintvm-sched");
	sandbox_thread_enter(SANDBOX_BRAIN);
	wait_for_tids(s);
	pthread_mutex_lock(&s->lock);
	read_schedstats(s);
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		s->vcpus[i].sched_prev = s->vcpus[i].sched;
	pthread_mutex_unlock(&s->lock);

	last_tick = last_print = hvm_monotonic_ns();
	pthread_mutex_lock(&s->boost_lock);
	while (!s->stop) {
		uint64_t now = hvm_monotonic_ns(), wake = last_tick + interval;
		struct timespec ts;

		/* Under boost_lock: `set stats-interval` changes it. */
		print_every = s->opt.stats_interval_ms * 1000000ull;
		if (print_every && s->opt.stats &&
		    last_print + print_every < wake)
			wake = last_print + print_every;
		if (next_boost < wake)
			wake = next_boost;
		if (wake > now) {
			ts.tv_sec = (time_t)(wake / 1000000000u);
			ts.tv_nsec = (long)(wake % 1000000000u);
			pthread_cond_timedwait(&s->cond, &s->boost_lock, &ts);
			if (s->stop)
				break;
		}
		now = hvm_monotonic_ns();
		next_boost = brain_restore_boosts(s, now, false);
		if (now >= last_tick + interval) {
			pthread_mutex_unlock(&s->boost_lock);
			brain_tick(s, now - last_tick);
			pthread_mutex_lock(&s->boost_lock);
			last_tick = now;
			next_boost = brain_restore_boosts(s, hvm_monotonic_ns(),
							  false);
		}
		if (print_every && s->opt.stats &&
		    now >= last_print + print_every) {
			pthread_mutex_unlock(&s->boost_lock);
			print_table(s);
			pthread_mutex_lock(&s->boost_lock);
			last_print = now;
		}
	}
	brain_restore_boosts(s, 0, true);
	pthread_mutex_unlock(&s->boost_lock);
	return NULL;
}

int sched_vm_start(struct vm *vm)
{
	struct sched_vm *s = vm->sched;
	sigset_t all, old;
	int r;

	if (!s)
		return 0;
	/* Statistics are best effort: a host without stats fds still runs. */
	if (open_stats(vm->fd, &s->vm_stats, &s->vm_values, NULL, NULL) == 0)
		s->have_vm_stats = true;
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];

		if (open_stats(vm_vcpu_fd(vm, i), &t->stats, &t->values,
			       &t->prev, &t->delta) == 0) {
			t->have_stats = true;
			memcpy(t->prev, t->values,
			       t->stats.nr_values * sizeof(uint64_t));
		}
	}
	/*
	 * --stats-json: opened now, while we may, since by the end the VM's
	 * threads are its --user. A FIFO waits for the end: it needs a reader.
	 */
	if (s->opt.stats_json[0]) {
		struct stat st;

		if (stat(s->opt.stats_json, &st) < 0 || !S_ISFIFO(st.st_mode))
			s->json_fd = open(
				s->opt.stats_json,
				O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (s->json_fd < 0 && errno != ENOENT)
			pr_debug("--stats-json %s: %s; trying at the end",
				 s->opt.stats_json, strerror(errno));
	}
	s->start_ns = hvm_monotonic_ns();
	s->started = true;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = vm_thread_create(&s->thread, brain_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return hvm_set_error(-r, "cannot start the sched thread: %s",
				     strerror(r));
	s->thread_started = true;
	return 0;
}

void sched_vcpu_start(struct vm *vm, unsigned int id)
{
	struct sched_vm *s = vm->sched;
	const struct policy_action *a;
	int r = 0;

	if (!s)
		return;
	/* Our tid is published: the sched thread may be waiting for it. */
	pthread_mutex_lock(&s->boost_lock);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->boost_lock);
	brain_rest_self(s); /* below the base, so a boost has room */
	if (!s->create.first.apply_pin || id >= POLICY_MAX_VCPUS)
		return;
	/* Pinned before the first KVM_RUN: no migration right after start. */
	a = &s->create.first;
	if (a->pin == PIN_PLAN_DEDICATED && a->vcpu_cpu[id] >= 0)
		r = act_pin_thread(0, a->vcpu_cpu[id]);
	else if (a->pin == PIN_PLAN_SHARED)
		r = act_spread_thread(0, a->cpu_set, a->nr_cpu_set);
	else
		return;
	if (r == 0) {
		atomic_fetch_add(&s->pins_applied, 1);
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->actuator_errors++;
	s->last_actuator_error = r;
	pthread_mutex_unlock(&s->lock);
}

void sched_vcpu_exit(struct vm *vm, unsigned int id)
{
	struct sched_vm *s = vm->sched;
	struct thread_sched now;

	if (!s || id >= s->nr_vcpus)
		return;
	brain_boost_vcpu_exited(s, id);
	/* Our own last words: after the join, /proc has no task to read. */
	pthread_mutex_lock(&s->lock);
	if (observe_read_thread(gettid(), &now) == 0) {
		s->vcpus[id].sched = now;
		s->vcpus[id].have_sched = true;
	}
	s->vcpus[id].final = true; /* the brain leaves this thread alone */
	pthread_mutex_unlock(&s->lock);
}

/*
 * O_NONBLOCK for open() only: a FIFO nobody reads fails (ENXIO) instead
 * of keeping hintvm from exiting; one with a reader is written normally.
 */
static FILE *open_stats_json(const char *path, int *opened)
{
	int fd = *opened, fl;
	FILE *f;

	*opened = -1; /* emptied when opened: a VM that crashes leaves none */
	if (fd < 0)
		fd = open(path,
			  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK,
			  0644);
	fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    !(f = fdopen(fd, "w"))) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	return f;
}

static void write_json(struct sched_vm *s)
{
	size_t len = 1 << 20;
	char *buf = malloc(len);
	FILE *f;
	int n;

	if (!buf)
		return;
	n = sched_format_stats(s->vm, true, buf, len);
	f = open_stats_json(s->opt.stats_json, &s->json_fd);
	if (n < 0 || !f) {
		pr_warn("--stats-json: cannot write %s: %s", s->opt.stats_json,
			f ? "statistics unavailable" : strerror(errno));
	} else {
		fputs(buf, f);
	}
	if (f)
		fclose(f);
	free(buf);
}

void sched_vm_stopped(struct vm *vm)
{
	struct sched_vm *s = vm->sched;

	if (!s || s->stopped)
		return;
	s->stopped = true;
	if (s->thread_started) {
		pthread_mutex_lock(&s->boost_lock);
		s->stop = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->boost_lock);
		pthread_join(s->thread, NULL);
		s->thread_started = false;
	}
	pthread_mutex_lock(&s->lock);
	s->end_ns = hvm_monotonic_ns();
	stats_read_kvm(s);
	pthread_mutex_unlock(&s->lock);
	if (s->opt.stats)
		print_table(s);
	if (s->opt.stats_json[0])
		write_json(s);
}

void sched_vm_destroy(struct vm *vm)
{
	struct sched_vm *s = vm->sched;

	if (!s)
		return;
	if (s->started)
		sched_vm_stopped(vm);
	for (unsigned int i = 0; s->vcpus && i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];

		if (t->have_stats)
			kvm_stats_close(&t->stats);
		free(t->values);
		free(t->prev);
		free(t->delta);
		pthread_cond_destroy(&t->park_cond);
	}
	free(s->vcpus);
	if (s->json_fd >= 0)
		close(s->json_fd);
	if (s->have_vm_stats)
		kvm_stats_close(&s->vm_stats);
	free(s->vm_values);
	if (s->hints_registered)
		hint_channel_destroy(&s->hints);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->boost_lock);
	pthread_mutex_destroy(&s->park_lock);
	pthread_cond_destroy(&s->cond);
	free(s);
	vm->sched = NULL;
}
