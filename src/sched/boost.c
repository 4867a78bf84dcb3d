// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Boosts: raising a vCPU thread's priority for a bounded time, when the
 * guest names it as a lock holder (the hint channel) or a device just sent
 * it an interrupt from userspace (an MSI), and restoring it when the time
 * runs out (timed by the sched thread, brain.c). All under boost_lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "sched/actuators.h"
#include "sched/brain.h"
#include "sched/sched_vm.h"

/*
 * Boosts a vCPU may begin per second. Each lasts at most
 * POLICY_BOOST_MAX_US (10 ms), so a guest keeps a vCPU raised at most 20%
 * of the time however it sends hints or interrupts.
 */
#define BOOSTS_PER_SECOND 20

void brain_boost_vcpu(struct sched_vm *s, unsigned int target, uint32_t us,
		      const char *cause)
{
	struct vcpu_track *t = &s->vcpus[target];
	pid_t tid = vm_vcpu_tid(s->vm, target);
	uint64_t now = hvm_monotonic_ns(), limit;
	int r;

	if (!tid || s->boost_unavailable)
		return;
	pthread_mutex_lock(&s->boost_lock);
	if (t->exited) {
		pthread_mutex_unlock(&s->boost_lock);
		return;
	}
	if (!t->boosted) {
		/* A bounded share of each second, whatever the guest asks. */
		if (now - t->boost_window_ns >= 1000000000ull) {
			t->boost_window_ns = now;
			t->boosts_in_window = 0;
		}
		if (t->boosts_in_window >= BOOSTS_PER_SECOND) {
			pthread_mutex_unlock(&s->boost_lock);
			return;
		}
		t->boosts_in_window++;
		r = act_boost_thread(tid, s->start_nice, &t->saved_nice);
		/* Back to where vCPU threads rest, not to a stale value. */
		if (s->headroom_ok)
			t->saved_nice = s->rest_nice;
		if (r < 0) {
			atomic_fetch_add(&s->boost_failures, 1);
			if (r == -EPERM || r == -EACCES)
				s->boost_unavailable = true;
			pthread_mutex_unlock(&s->boost_lock);
			return;
		}
		t->boosted = true;
		t->boost_start_ns = now;
		t->boost_until_ns = 0;
	}
	/* Extend, but never past the bound from when the boost began. */
	if (now + us * 1000ull > t->boost_until_ns)
		t->boost_until_ns = now + us * 1000ull;
	limit = t->boost_start_ns + POLICY_BOOST_MAX_US * 1000ull;
	if (t->boost_until_ns > limit)
		t->boost_until_ns = limit;
	atomic_fetch_add(&t->boosts, 1);
	pthread_cond_signal(&s->cond); /* the sched thread times the restore */
	pthread_mutex_unlock(&s->boost_lock);
	event_post_boost(&s->vm->events, (int)target, cause);
}

/* Called with boost_lock held. Restores boosts that ran out (or all). */
uint64_t brain_restore_boosts(struct sched_vm *s, uint64_t now, bool all)
{
	uint64_t next = UINT64_MAX;

	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];

		if (!t->boosted)
			continue;
		if (all || t->boost_until_ns <= now) {
			pid_t tid = vm_vcpu_tid(s->vm, i);

			/* An exited thread restored itself (sched_vcpu_exit). */
			if (tid && !t->exited)
				act_unboost_thread(tid, t->saved_nice);
			t->boosted = false;
		} else if (t->boost_until_ns < next) {
			next = t->boost_until_ns;
		}
	}
	return next;
}

void brain_boost_vcpu_exited(struct sched_vm *s, unsigned int id)
{
	/* From now on nobody may touch this tid: the kernel may reuse it. */
	pthread_mutex_lock(&s->boost_lock);
	if (s->vcpus[id].boosted)
		act_unboost_thread(gettid(), s->vcpus[id].saved_nice);
	s->vcpus[id].boosted = false;
	s->vcpus[id].exited = true;
	pthread_mutex_unlock(&s->boost_lock);
}

void brain_boost_probe(struct sched_vm *s, bool sandboxed)
{
	struct rlimit rl;
	char line[256];
	FILE *f;

	s->rest_nice = s->start_nice;
	/* RLIMIT_NICE lets an unprivileged thread go down to 20 - limit. */
	if (getrlimit(RLIMIT_NICE, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY ||
	     20 - (long long)rl.rlim_cur <= s->start_nice)) {
		s->headroom_ok = true;
		return;
	}
	/*
	 * CAP_SYS_NICE counts only if we keep it: the sandbox drops every
	 * capability (and raises RLIMIT_NICE where the host lets it, which
	 * the test above sees, since it ran before us).
	 */
	if (sandboxed)
		return;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			s->headroom_ok = caps & (1ull << 23); /* CAP_SYS_NICE */
	}
	fclose(f);
}

void brain_set_rest_nice(struct sched_vm *s, int offset)
{
	int rest = s->start_nice + offset;

	if (!s->headroom_ok)
		return; /* we could not lift them back: stay at the base */
	if (rest > 19)
		rest = 19;
	pthread_mutex_lock(&s->boost_lock);
	s->rest_nice = rest;
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct vcpu_track *t = &s->vcpus[i];
		pid_t tid = vm_vcpu_tid(s->vm, i);

		if (tid && !t->exited && !t->boosted)
			act_unboost_thread(tid, rest);
		t->saved_nice = rest;
	}
	pthread_mutex_unlock(&s->boost_lock);
}

void brain_rest_self(struct sched_vm *s)
{
	pthread_mutex_lock(&s->boost_lock);
	if (s->headroom_ok && s->rest_nice != s->start_nice)
		act_unboost_thread(gettid(), s->rest_nice);
	pthread_mutex_unlock(&s->boost_lock);
}

/* Whether thread TID is runnable ('R' in /proc/self/task/TID/stat). */
static bool thread_runnable(pid_t tid)
{
	char path[64], buf[256];
	const char *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": the comm may hold spaces, find the last ')'. */
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'R';
}

/* Userspace MSIs at most this often per vCPU lead to a runnable check. */
#define IRQ_BOOST_CHECK_NS 1000000ull

void sched_msi_injected(struct vm *vm, uint64_t addr)
{
	struct sched_vm *s = vm->sched;
	struct policy_state st;
	struct vcpu_track *t;
	uint64_t now, last;
	unsigned int dest;
	int target;
	uint32_t us;
	pid_t tid;

	if (!s)
		return;
	st = (struct policy_state){ .commit = atomic_load(&s->commit) };
	us = policy_on_irq_inject(&st, &s->opt.settings);
	target = us ? arch_msi_target_vcpu(addr) : -1;
	if (target < 0 || (unsigned int)target >= s->nr_vcpus ||
	    target == current_vcpu_id)
		return;
	dest = (unsigned int)target;
	t = &s->vcpus[dest];
	now = hvm_monotonic_ns();
	last = atomic_load(&t->irq_checked_ns);
	if (now - last < IRQ_BOOST_CHECK_NS ||
	    !atomic_compare_exchange_strong(&t->irq_checked_ns, &last, now))
		return;
	tid = vm_vcpu_tid(vm, dest);
	if (!tid || !thread_runnable(tid))
		return;
	atomic_fetch_add(&t->irq_boosts, 1);
	brain_boost_vcpu(s, dest, us, "irq");
}
