// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "core/arch.h"
#include "core/stats.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "sandbox/core_sched.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

static int vcpu_create(struct vm *vm, struct vcpu *vcpu, unsigned int id)
{
	void *run;

	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, (unsigned long)id);
	if (vcpu->fd < 0) {
		vcpu->fd = -1;
		return hvm_set_errno_error("KVM_CREATE_VCPU %u failed", id);
	}
	run = mmap(NULL, vm->kvm.run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu->fd, 0);
	if (run == MAP_FAILED)
		return hvm_set_errno_error("cannot map kvm_run of vCPU %u", id);
	vcpu->run = run;
	if (id == 0 && vm->kvm.coalesced_mmio_page > 0) {
		size_t off = (size_t)vm->kvm.coalesced_mmio_page *
			     (size_t)sysconf(_SC_PAGESIZE);

		if (off + sizeof(struct kvm_coalesced_mmio_ring) <=
		    vm->kvm.run_size)
			vm->coalesced_ring = (void *)((uint8_t *)run + off);
	}
	return 0;
}

static void vcpu_destroy(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->vm->kvm.run_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
}

/*
 * KVM batches writes to coalesced regions in a ring shared by all vCPUs;
 * whoever returns from KVM_RUN first replays them, in order, under a lock.
 */
static void drain_coalesced(struct vm *vm)
{
	struct kvm_coalesced_mmio_ring *ring = vm->coalesced_ring;
	uint32_t max;

	if (!ring ||
	    ring->first == __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE))
		return;
	max = (uint32_t)((sysconf(_SC_PAGESIZE) - sizeof(*ring)) /
			 sizeof(struct kvm_coalesced_mmio));
	pthread_mutex_lock(&vm->coalesced_lock);
	while (ring->first != __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE)) {
		uint32_t first = ring->first;
		struct kvm_coalesced_mmio *m;

		if (first >= max)
			break; /* cannot happen with a sane kernel */
		m = &ring->coalesced_mmio[first];
		bus_access(m->pio ? &vm->pio : &vm->mmio, m->phys_addr, m->data,
			   m->len > 8 ? 8 : m->len, true);
		__atomic_store_n(&ring->first, (first + 1) % max,
				 __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&vm->coalesced_lock);
}

static void handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t size = run->io.size, count = run->io.count;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;

	/* The kernel fills these; check anyway, the cost is nothing. */
	if ((size != 1 && size != 2 && size != 4) ||
	    run->io.data_offset > vcpu->vm->kvm.run_size ||
	    (uint64_t)size * count >
		    vcpu->vm->kvm.run_size - run->io.data_offset)
		return;
	for (uint32_t i = 0; i < count; i++, data += size) {
		if (!bus_access(&vcpu->vm->pio, run->io.port, data, size,
				is_write))
			vcpu->pio_exits_unclaimed++;
	}
	if (is_write)
		vm_coalesce_on_write(vcpu->vm, true, run->io.port);
}

static void handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t len = run->mmio.len;

	if (len == 0 || len > sizeof(run->mmio.data))
		return;
	if (!bus_access(&vcpu->vm->mmio, run->mmio.phys_addr, run->mmio.data,
			len, run->mmio.is_write))
		vcpu->mmio_exits_unclaimed++;
	if (run->mmio.is_write)
		vm_coalesce_on_write(vcpu->vm, false, run->mmio.phys_addr);
}

static void handle_system_event(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;

	switch (vcpu->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_request_stop(vm, HVM_EXIT_POWEROFF, 0, (int)vcpu->id,
				"the guest powered off");
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vm_request_stop(vm, HVM_EXIT_REBOOT, 0, (int)vcpu->id,
				"the guest asked for a reset");
		break;
	default:
		vm_request_stop(vm, HVM_EXIT_CRASH, 0, (int)vcpu->id,
				"vCPU %u: guest crash (system event %u)",
				vcpu->id, vcpu->run->system_event.type);
		break;
	}
}

static const char *internal_error_name(uint32_t suberror)
{
	switch (suberror) {
	case KVM_INTERNAL_ERROR_EMULATION:
		return "instruction emulation failed";
	case KVM_INTERNAL_ERROR_SIMUL_EX:
		return "exception while delivering an exception";
	case KVM_INTERNAL_ERROR_DELIVERY_EV:
		return "event delivery failed";
	default:
		return "internal error";
	}
}

static const char *exit_reason_name(uint32_t reason)
{
	switch (reason) {
	case KVM_EXIT_IO:
		return "port";
	case KVM_EXIT_MMIO:
		return "mmio";
	case KVM_EXIT_HLT:
		return "hlt";
	case KVM_EXIT_INTR:
		return "signal";
	case KVM_EXIT_IRQ_WINDOW_OPEN:
		return "irq-window";
	case KVM_EXIT_SHUTDOWN:
		return "shutdown";
	case KVM_EXIT_IOAPIC_EOI:
		return "ioapic-eoi";
	case KVM_EXIT_SYSTEM_EVENT:
		return "system-event";
	default:
		return "other";
	}
}

static void record_exit(struct vcpu *vcpu)
{
	const struct kvm_run *run = vcpu->run;
	struct vcpu_exit_record *e =
		&vcpu->recent_exits[vcpu->nr_exits++ % VCPU_RECENT_EXITS];

	*e = (struct vcpu_exit_record){ .reason = run->exit_reason,
					.pc = arch_vcpu_exit_pc(vcpu) };
	if (run->exit_reason == KVM_EXIT_IO) {
		e->addr = run->io.port;
		e->len = run->io.size;
		e->write = run->io.direction == KVM_EXIT_IO_OUT;
	} else if (run->exit_reason == KVM_EXIT_MMIO) {
		e->addr = run->mmio.phys_addr;
		e->len = (uint8_t)run->mmio.len;
		e->write = run->mmio.is_write;
	}
}

/*
 * The exits before this one, oldest first, for a crash report: after a
 * triple fault they are all that says where the guest was.
 */
static void log_recent_exits(const struct vcpu *vcpu)
{
	uint64_t n = vcpu->nr_exits, first;

	if (n < 2)
		return;
	first = n - 1 > VCPU_RECENT_EXITS - 1 ? n - VCPU_RECENT_EXITS : 0;
	pr_err("vCPU %u: the %llu exits before this one (of %llu):", vcpu->id,
	       (unsigned long long)(n - 1 - first), (unsigned long long)n);
	for (uint64_t i = first; i < n - 1; i++) {
		const struct vcpu_exit_record *e =
			&vcpu->recent_exits[i % VCPU_RECENT_EXITS];
		char what[48] = "";

		if (e->reason == KVM_EXIT_IO || e->reason == KVM_EXIT_MMIO)
			snprintf(what, sizeof(what), " %s 0x%llx/%u",
				 e->write ? "write" : "read",
				 (unsigned long long)e->addr, e->len);
		pr_err("  exit %llu: %s (%u)%s pc 0x%llx",
		       (unsigned long long)i + 1, exit_reason_name(e->reason),
		       e->reason, what, (unsigned long long)e->pc);
	}
}

/* Handle one exit; returns false when this vCPU must stop running. */
static bool vcpu_handle_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;
	char where[96];
	int r;

	if (run->exit_reason < VCPU_EXIT_REASONS)
		atomic_fetch_add_explicit(&vcpu->exits[run->exit_reason], 1,
					  memory_order_relaxed);
	record_exit(vcpu);
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		handle_io(vcpu);
		return true;
	case KVM_EXIT_MMIO:
		handle_mmio(vcpu);
		return true;
	case KVM_EXIT_INTR:
	case KVM_EXIT_HLT:
	case KVM_EXIT_DEBUG:
		return true;
	case KVM_EXIT_SHUTDOWN:
		/* What KVM holds now may be the reset state (AMD): name the
		 * last exit before it, which is where the guest really was. */
		log_recent_exits(vcpu);
		arch_vcpu_describe(vcpu, where, sizeof(where));
		vm_request_stop(vm, HVM_EXIT_CRASH, 0, (int)vcpu->id,
				"vCPU %u: triple fault (now %s; exit %llu, the "
				"exits before it are listed above)",
				vcpu->id, where,
				(unsigned long long)vcpu->nr_exits);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		log_recent_exits(vcpu);
		arch_vcpu_describe(vcpu, where, sizeof(where));
		vm_request_stop(vm, HVM_EXIT_CRASH, 0, (int)vcpu->id,
				"vCPU %u: KVM internal error %u: %s (%s)",
				vcpu->id, run->internal.suberror,
				internal_error_name(run->internal.suberror),
				where);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		vm_request_stop(
			vm, HVM_EXIT_CRASH, 0, (int)vcpu->id,
			"vCPU %u: VM entry failed (hardware reason 0x%llx)",
			vcpu->id,
			(unsigned long long)
				run->fail_entry.hardware_entry_failure_reason);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		handle_system_event(vcpu);
		return false;
	default:
		r = arch_vcpu_exit(vcpu);
		if (r == 0)
			return true;
		if (r < 0)
			vm_request_stop(vm, HVM_EXIT_HOST_ERROR, 0,
					(int)vcpu->id,
					"vCPU %u: unhandled KVM exit reason %u",
					vcpu->id, run->exit_reason);
		return false;
	}
}

/* Park this vCPU while the VM is paused; returns when resumed or stopping. */
static void vcpu_park(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;

	pthread_mutex_lock(&vm->lock);
	vm->parked_vcpus++;
	pthread_cond_broadcast(&vm->cond); /* a pause waiter counts us */
	pthread_mutex_unlock(&vm->lock);
	vm_park_wait(vm);
	pthread_mutex_lock(&vm->lock);
	vm->parked_vcpus--;
	pthread_mutex_unlock(&vm->lock);
}

/*
 * Before parking: finish the instruction whose exit was just handled. KVM
 * completes an I/O or MMIO read on the next KVM_RUN, so registers read
 * while parked (a snapshot) would be those of a half-done instruction;
 * KVM_RUN with immediate_exit set completes it and returns EINTR without
 * entering the guest (KVM's API doc, KVM_CAP_IMMEDIATE_EXIT). Returns 0
 * when settled, 1 when the completion exited again (handled: look again),
 * -1 when the VM must stop.
 */
static int vcpu_settle(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	int r, err;

	if (vcpu->settled || !vm->kvm.immediate_exit)
		return 0;
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	r = ioctl(vcpu->fd, KVM_RUN, 0);
	err = errno;
	__atomic_store_n(&vcpu->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
	drain_coalesced(vm);
	if (r < 0 && (err == EINTR || err == EAGAIN)) {
		vcpu->settled = true;
		return 0;
	}
	if (r < 0) {
		vm_request_stop(
			vm, HVM_EXIT_HOST_ERROR, 0, (int)vcpu->id,
			"vCPU %u: KVM_RUN (settling for a pause) failed: %s",
			vcpu->id, strerror(err));
		return -1;
	}
	return vcpu_handle_exit(vcpu) ? 1 : -1;
}

static void vcpu_run_loop(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	bool first_run = true;

	while (!atomic_load(&vm->stopping)) {
		if (atomic_load(&vm->paused)) {
			int s = vcpu_settle(vcpu);

			if (s < 0)
				return;
			if (s == 0)
				vcpu_park(vcpu);
			continue;
		}
		if (first_run) {
			boot_trace_mark(&vm->boot, BOOT_FIRST_RUN);
			first_run = false;
		}
		int r = ioctl(vcpu->fd, KVM_RUN, 0);
		int err = errno;

		vcpu->settled = false;

		drain_coalesced(vm);
		if (r < 0) {
			if (err == EINTR || err == EAGAIN) {
				/* A kick, or an AP leaving INIT: go again
				 * unless we are stopping (checked above). */
				__atomic_store_n(&vcpu->run->immediate_exit, 0,
						 __ATOMIC_SEQ_CST);
				continue;
			}
			vm_request_stop(vm, HVM_EXIT_HOST_ERROR, 0,
					(int)vcpu->id,
					"vCPU %u: KVM_RUN failed: %s", vcpu->id,
					strerror(err));
			return;
		}
		if (!vcpu_handle_exit(vcpu))
			return;
	}
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	char name[16];
	sigset_t set;

	snprintf(name, sizeof(name), "hintvm-vcpu-%u", vcpu->id);
	pthread_setname_np(pthread_self(), name);
	atomic_store(&vcpu->tid, gettid());
	current_vcpu_id = (int)vcpu->id;
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	vcpu->self = pthread_self();
	atomic_store(&vcpu->kickable, true);
	if (vm->hooks && vm->hooks->vcpu_thread_start)
		vm->hooks->vcpu_thread_start(vm, vcpu->id);
	/*
	 * --core-sched vcpu: a cookie of its own, while prctl is still
	 * allowed. The VM's creation proved the kernel can; should this one
	 * fail anyway, the vCPU never runs the guest unprotected.
	 */
	if (vm->cfg->core_sched == HVM_CORE_SCHED_VCPU &&
	    core_sched_create(config_core_sched_name(vm->cfg->core_sched)) < 0)
		vm_request_stop(vm, HVM_EXIT_HOST_ERROR, 0, (int)vcpu->id,
				"vCPU %u: %s", vcpu->id, hvm_error_message());
	sandbox_thread_enter(SANDBOX_VCPU);

	if (!atomic_load(&vm->stopping))
		vcpu_run_loop(vcpu);
	atomic_store(&vcpu->kickable, false);
	if (vm->hooks && vm->hooks->vcpu_thread_exit)
		vm->hooks->vcpu_thread_exit(vm, vcpu->id);

	/* When one vCPU ends, the VM ends: make sure the others follow. */
	if (!atomic_load(&vm->stopping))
		vm_request_stop(vm, HVM_EXIT_HOST_ERROR, 0, (int)vcpu->id,
				"vCPU %u stopped unexpectedly", vcpu->id);
	pthread_mutex_lock(&vm->lock);
	vm->running_vcpus--;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return NULL;
}

static int vcpu_start(struct vcpu *vcpu)
{
	sigset_t all, old;
	int r;

	/* Threads start with signals blocked; the vCPU unblocks its kick. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = vm_thread_create(&vcpu->thread, vcpu_thread, vcpu);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	vcpu->thread_started = true;
	return 0;
}

/* ---- core's per-vCPU counters, for every statistics report ---- */

static uint64_t exit_count(const void *ctx, unsigned int id, uint32_t reason)
{
	const struct vm *vm = ctx;

	return id < vm->nr_vcpus ? atomic_load(&vm->vcpus[id].exits[reason])
				 : 0;
}

static uint64_t stat_exits(const void *ctx, unsigned int id)
{
	uint64_t sum = 0;

	for (uint32_t reason = 0; reason < VCPU_EXIT_REASONS; reason++)
		sum += exit_count(ctx, id, reason);
	return sum;
}

#define EXIT_STAT(fn, reason)                                \
	static uint64_t fn(const void *ctx, unsigned int id) \
	{                                                    \
		return exit_count(ctx, id, reason);          \
	}
EXIT_STAT(stat_exit_io, KVM_EXIT_IO)
EXIT_STAT(stat_exit_mmio, KVM_EXIT_MMIO)
EXIT_STAT(stat_exit_hlt, KVM_EXIT_HLT)
EXIT_STAT(stat_exit_intr, KVM_EXIT_INTR)

/* Exits to userspace as the run loop counted them (context: the vm). */
static const struct stat_desc vcpu_stats[] = {
	{ .name = "exits",
	  .json = "exits.total",
	  .column = "exits",
	  .width = 8,
	  .get = stat_exits },
	{ .name = "exit_io",
	  .json = "exits.io",
	  .column = "io",
	  .width = 7,
	  .get = stat_exit_io },
	{ .name = "exit_mmio",
	  .json = "exits.mmio",
	  .column = "mmio",
	  .width = 7,
	  .get = stat_exit_mmio },
	{ .name = "exit_hlt", .json = "exits.hlt", .get = stat_exit_hlt },
	{ .name = "exit_intr", .json = "exits.intr", .get = stat_exit_intr },
};

struct stat_table vm_vcpu_stat_table(const struct vm *vm)
{
	return (struct stat_table){ .descs = vcpu_stats,
				    .nr = sizeof(vcpu_stats) /
					  sizeof(vcpu_stats[0]),
				    .ctx = vm };
}

int vm_create_vcpus(struct vm *vm)
{
	int r;

	vm->vcpus = calloc(vm->cfg->cpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return hvm_set_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < vm->cfg->cpus; i++) {
		r = vcpu_create(vm, &vm->vcpus[i], i);
		if (r < 0)
			return r;
		vm->nr_vcpus++;
		r = arch_vcpu_init(vm, &vm->vcpus[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

void vm_destroy_vcpus(struct vm *vm)
{
	if (!vm->vcpus)
		return;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	free(vm->vcpus);
	vm->vcpus = NULL;
	vm->nr_vcpus = 0;
}

int vm_start_vcpus(struct vm *vm)
{
	int r;

	vm->started = true;
	vm->running_vcpus = vm->nr_vcpus;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		r = vcpu_start(&vm->vcpus[i]);
		if (r < 0) {
			vm_request_stop(vm, HVM_EXIT_HOST_ERROR, 0, (int)i,
					"cannot start vCPU %u: %s", i,
					strerror(-r));
			pthread_mutex_lock(&vm->lock);
			vm->running_vcpus -= vm->nr_vcpus - i;
			pthread_cond_broadcast(&vm->cond);
			pthread_mutex_unlock(&vm->lock);
			break;
		}
	}
	return 0;
}

void vm_wait_vcpus(struct vm *vm, struct hvm_exit *exit)
{
	pthread_mutex_lock(&vm->lock);
	while (vm->running_vcpus > 0)
		vm_wait_locked(vm);
	if (!vm->exit_recorded) {
		vm->exit_recorded = true;
		vm->exit = (struct hvm_exit){ .reason = HVM_EXIT_STOPPED,
					      .vcpu = -1 };
		snprintf(vm->exit.detail, sizeof(vm->exit.detail),
			 "stopped on request");
	}
	if (exit)
		*exit = vm->exit;
	pthread_mutex_unlock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].thread_started) {
			pthread_join(vm->vcpus[i].thread, NULL);
			vm->vcpus[i].thread_started = false;
		}
	}
}

pid_t vm_vcpu_tid(const struct vm *vm, unsigned int id)
{
	return id < vm->nr_vcpus ? atomic_load(&vm->vcpus[id].tid) : 0;
}

int vm_vcpu_fd(const struct vm *vm, unsigned int id)
{
	return id < vm->nr_vcpus ? vm->vcpus[id].fd : -1;
}
