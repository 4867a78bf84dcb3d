// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "core/arch.h"
#include "core/vm.h"

int vm_map_memory(struct vm *vm)
{
	uint64_t size = vm->cfg->mem;
	int r;

	if (vm->cfg->hugepages && size % (2ULL << 20))
		return hvm_set_error(
			-EINVAL,
			"--mem %llu MiB is not a multiple of the 2 MiB huge page size (--hugepages)",
			(unsigned long long)(size >> 20));
	if (vm->restore_mem_fd >= 0) {
		if (vm->cfg->hugepages)
			return hvm_set_error(
				-EINVAL,
				"--hugepages: a restored VM's memory is its snapshot's file, which is not on hugetlbfs");
		r = guest_memory_map_file(&vm->mem, size, vm->restore_mem_fd);
		if (r < 0)
			return hvm_set_error(
				r,
				"cannot map the snapshot's %llu MiB of memory: %s",
				(unsigned long long)(size >> 20), strerror(-r));
		return 0;
	}
	r = guest_memory_map(&vm->mem, size, vm->cfg->hugepages);
	if (r == -ENOMEM && vm->cfg->hugepages)
		return hvm_set_error(
			r,
			"--hugepages: cannot get %llu MiB of huge pages; reserve them first (sysctl vm.nr_hugepages)",
			(unsigned long long)(size >> 20));
	if (r < 0)
		return hvm_set_error(r, "cannot map %llu MiB of guest RAM: %s",
				     (unsigned long long)(size >> 20),
				     strerror(-r));
	return 0;
}

int vm_add_ram(struct vm *vm, uint64_t gpa, uint64_t size, uint64_t host_offset)
{
	uint8_t *hva = (uint8_t *)vm->mem.mapping + host_offset;
	int r;

	if (host_offset > vm->mem.mapping_size ||
	    size > vm->mem.mapping_size - host_offset)
		return hvm_set_error(
			-EINVAL, "RAM region at 0x%llx is outside the mapping",
			(unsigned long long)gpa);
	r = guest_memory_add_region(&vm->mem, gpa, size, hva);
	if (r < 0)
		return hvm_set_error(r, "cannot add RAM region at 0x%llx: %s",
				     (unsigned long long)gpa, strerror(-r));
	return vm_add_memslot(vm, gpa, size, hva, "guest RAM");
}

int vm_add_memslot(struct vm *vm, uint64_t gpa, uint64_t size, void *hva,
		   const char *what)
{
	struct kvm_userspace_memory_region region = {
		.slot = vm->nr_memslots,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return hvm_set_errno_error(
			"KVM_SET_USER_MEMORY_REGION for %s (slot %u, %llu KiB at 0x%llx) failed",
			what, vm->nr_memslots, (unsigned long long)(size >> 10),
			(unsigned long long)gpa);
	vm->nr_memslots++;
	return 0;
}

static int vm_register(struct vm *vm, struct bus *bus, const char *space,
		       uint64_t base, uint64_t len, const struct bus_ops *ops,
		       void *dev, const char *name)
{
	int r = bus_register(bus, base, len, ops, dev, name);

	if (r < 0)
		return hvm_set_error(
			r, "cannot place device %s at %s 0x%llx+0x%llx: %s",
			name, space, (unsigned long long)base,
			(unsigned long long)len,
			r == -EEXIST ? "overlaps another device"
				     : strerror(-r));
	return 0;
}

int vm_register_pio(struct vm *vm, uint64_t port, uint64_t len,
		    const struct bus_ops *ops, void *dev, const char *name)
{
	return vm_register(vm, &vm->pio, "port", port, len, ops, dev, name);
}

int vm_register_mmio(struct vm *vm, uint64_t gpa, uint64_t len,
		     const struct bus_ops *ops, void *dev, const char *name)
{
	return vm_register(vm, &vm->mmio, "address", gpa, len, ops, dev, name);
}

int vm_irq_line_set(void *opaque, uint32_t gsi, bool level)
{
	struct vm *vm = opaque;
	struct kvm_irq_level irq = { .irq = gsi, .level = level };

	if (ioctl(vm->fd, KVM_IRQ_LINE, &irq) < 0)
		return -errno;
	return 0;
}

void vm_console_output(void *opaque)
{
	struct vm *vm = opaque;

	if (atomic_load_explicit(&vm->boot.at_ns[BOOT_FIRST_CONSOLE],
				 memory_order_relaxed) ||
	    !boot_trace_mark(&vm->boot, BOOT_FIRST_CONSOLE))
		return;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		for (unsigned int r = 0;
		     r < BOOT_EXIT_REASONS && r < VCPU_EXIT_REASONS; r++)
			vm->boot.exits_before_console[r] +=
				atomic_load(&vm->vcpus[i].exits[r]);
}

/*
 * Kicks use SIGUSR1 with an empty handler installed without SA_RESTART: the
 * signal only serves to make KVM_RUN return EINTR. kvm_run.immediate_exit
 * covers the window where the vCPU thread is about to enter KVM_RUN.
 */
static void kick_handler(int sig)
{
}

int vm_kick_signal_setup(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	sigemptyset(&sa.sa_mask);
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0)
		return hvm_set_errno_error(
			"cannot install the vCPU kick signal handler");
	return 0;
}

static void kick(struct vcpu *vcpu)
{
	if (!vcpu->run)
		return;
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	/*
	 * Not thread_started: the parent sets that after pthread_create()
	 * returns, by which time the vCPU may already sleep in KVM_RUN (an AP
	 * waiting for INIT), and a kick that skips the signal then is lost.
	 * The vCPU publishes itself before its first look at ->stopping.
	 */
	if (atomic_load(&vcpu->kickable))
		pthread_kill(vcpu->self, VCPU_KICK_SIGNAL);
}

void vm_kick_vcpus(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		kick(&vm->vcpus[i]);
}

void vm_request_stop(struct vm *vm, enum hvm_exit_reason reason, uint32_t code,
		     int vcpu, const char *fmt, ...)
{
	bool first = false;
	va_list ap;

	pthread_mutex_lock(&vm->lock);
	if (!vm->exit_recorded) {
		boot_trace_mark(&vm->boot, BOOT_GUEST_STOP);
		first = true;
		vm->exit_recorded = true;
		vm->exit.reason = reason;
		vm->exit.debug_code = code;
		vm->exit.vcpu = vcpu;
		va_start(ap, fmt);
		vsnprintf(vm->exit.detail, sizeof(vm->exit.detail), fmt, ap);
		va_end(ap);
	}
	atomic_store(&vm->stopping, true);
	pthread_cond_broadcast(&vm->cond); /* pause waiters */
	pthread_mutex_unlock(&vm->lock);
	vm_park_wake(vm);
	vm_kick_vcpus(vm);
	if (first)
		event_post(&vm->events, VM_EVENT_STATE, -1, 0, "stopping",
			   NULL);
}

/* The vCPU that is handling the current exit on this thread, or -1. */
_Thread_local int current_vcpu_id = -1;

static void vm_power_event(void *ctx, enum power_event event, uint32_t code)
{
	struct vm *vm = ctx;

	switch (event) {
	case POWER_OFF:
		vm_request_stop(vm, HVM_EXIT_POWEROFF, 0, current_vcpu_id,
				"the guest powered off");
		break;
	case POWER_RESET:
		vm_request_stop(vm, HVM_EXIT_REBOOT, 0, current_vcpu_id,
				"the guest asked for a reset");
		break;
	case POWER_DEBUG_EXIT:
		vm_request_stop(vm, HVM_EXIT_DEBUG, code, current_vcpu_id,
				"the guest wrote %u to the debug-exit port",
				code);
		break;
	case POWER_GUEST_PANIC:
		vm_request_stop(vm, HVM_EXIT_CRASH, 0, current_vcpu_id,
				"the guest kernel panicked (pvpanic)");
		break;
	}
}

int vm_check_config(const struct hvm_config *cfg)
{
	uint64_t host = host_memory_bytes();

	if (cfg->mem > host && !cfg->mem_overcommit)
		return hvm_set_error(
			-EINVAL,
			"--mem %llu MiB is more than this host's %llu MiB of RAM; use --mem-overcommit to allow it",
			(unsigned long long)(cfg->mem >> 20),
			(unsigned long long)(host >> 20));
	return 0;
}

/*
 * Coalesced zones are registered with KVM on the first write that exits
 * to them, not at creation: each registration is an io-bus update whose
 * SRCU grace period KVM must see completed when the VM is destroyed,
 * which kept a VM that lives a few ms alive ~15 ms longer on these hosts
 * (docs/benchmarks.md, startup). A guest that never writes the region
 * (Linux with kvm's NOP_IO_DELAY never writes port 0x80) never pays.
 */
static bool coalescing_possible(const struct vm *vm, bool pio)
{
	return vm->kvm.coalesced_mmio_page && (!pio || vm->kvm.coalesced_pio);
}

static void vm_count_coalesced(struct vm *vm, const struct bus *bus, bool pio)
{
	for (size_t i = 0; i < bus->nr; i++)
		if (bus->regions[i].coalesced && coalescing_possible(vm, pio))
			atomic_fetch_add(&vm->coalesced_pending, 1);
}

int vm_register_coalesced(struct vm *vm)
{
	vm_count_coalesced(vm, &vm->pio, true);
	vm_count_coalesced(vm, &vm->mmio, false);
	return 0;
}

void vm_coalesce_on_write(struct vm *vm, bool pio, uint64_t addr)
{
	const struct bus *bus = pio ? &vm->pio : &vm->mmio;
	const struct bus_region *r;
	struct kvm_coalesced_mmio_zone zone;
	bool done = false;

	if (!atomic_load_explicit(&vm->coalesced_pending, memory_order_relaxed))
		return;
	r = bus_lookup(bus, addr, 1);
	if (!r || !r->coalesced || !coalescing_possible(vm, pio))
		return;
	zone = (struct kvm_coalesced_mmio_zone){ .addr = r->base,
						 .size = (uint32_t)r->len,
						 .pio = pio };
	pthread_mutex_lock(&vm->coalesced_lock);
	for (unsigned int i = 0; i < vm->nr_coalesced_live; i++)
		done |= vm->coalesced_live[i] == r;
	if (!done && vm->nr_coalesced_live < VM_MAX_COALESCED) {
		/* Failing costs speed (every write exits), not correctness. */
		if (ioctl(vm->fd, KVM_REGISTER_COALESCED_MMIO, &zone) < 0)
			pr_warn("KVM_REGISTER_COALESCED_MMIO for %s failed: %s",
				r->name, strerror(errno));
		vm->coalesced_live[vm->nr_coalesced_live++] = r;
		atomic_fetch_sub(&vm->coalesced_pending, 1);
	}
	pthread_mutex_unlock(&vm->coalesced_lock);
}

struct vm *vm_alloc(const struct hvm_config *cfg, const struct vm_hooks *hooks)
{
	struct vm *vm = calloc(1, sizeof(*vm));

	if (!vm) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	vm->fd = -1;
	vm->kvm.fd = -1;
	vm->restore_mem_fd = -1;
	vm->events.wake_fd = -1;
	vm->hooks = hooks;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_mutex_init(&vm->coalesced_lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	vm->power = (struct power_sink){ .event = vm_power_event, .ctx = vm };
	vm->cfg = config_dup(cfg);
	vm->guest_objects.limit = cfg->guest_objects;
	if (!vm->cfg || event_ring_init(&vm->events) < 0) {
		hvm_set_error(-ENOMEM, "out of memory");
		vm_free(vm);
		return NULL;
	}
	return vm;
}

/* vm_open_kvm_early()'s: taken by the next vm_open_kvm(). */
static struct kvm_host early_kvm = { .fd = -1 };
static int early_vm_fd = -1;

int vm_open_kvm_early(const char *path)
{
	int r = kvm_host_open(&early_kvm, path);

	if (r < 0)
		return r;
	early_vm_fd = ioctl(early_kvm.fd, KVM_CREATE_VM, 0);
	if (early_vm_fd < 0) {
		r = hvm_set_errno_error("KVM_CREATE_VM failed");
		kvm_host_close(&early_kvm);
	}
	return r;
}

int vm_open_kvm(struct vm *vm)
{
	const struct hvm_config *cfg = vm->cfg;
	int r;

	if (early_kvm.fd >= 0) {
		vm->kvm = early_kvm;
		vm->fd = early_vm_fd;
		early_kvm.fd = early_vm_fd = -1;
	} else {
		r = kvm_host_open(&vm->kvm,
				  cfg->kvm_path ? cfg->kvm_path : "/dev/kvm");
		if (r < 0)
			return r;
	}
	r = arch_check_kvm(&vm->kvm);
	if (r < 0)
		return r;
	if (cfg->cpus > (unsigned int)vm->kvm.max_vcpus ||
	    cfg->cpus > arch_max_vcpus())
		return hvm_set_error(
			-EINVAL,
			"--cpus %u is more than this host supports (KVM: %d, hintvm on this architecture: %u)",
			cfg->cpus, vm->kvm.max_vcpus, arch_max_vcpus());
	if (vm->fd < 0)
		vm->fd = ioctl(vm->kvm.fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0)
		return hvm_set_errno_error("KVM_CREATE_VM failed");
	return 0;
}

void vm_free(struct vm *vm)
{
	bus_destroy(&vm->pio);
	bus_destroy(&vm->mmio);
	if (vm->fd >= 0)
		close(vm->fd);
	guest_memory_unmap(&vm->mem);
	if (vm->restore_mem_fd >= 0)
		close(vm->restore_mem_fd);
	kvm_host_close(&vm->kvm);
	pthread_mutex_destroy(&vm->coalesced_lock);
	pthread_mutex_destroy(&vm->lock);
	pthread_cond_destroy(&vm->cond);
	event_ring_destroy(&vm->events);
	hvm_config_free(vm->cfg);
	free(vm);
}

void vm_stop_async(struct vm *vm)
{
	/*
	 * Async-signal-safe: no locks, no allocation. vm_wait_vcpus() turns a
	 * stop without a recorded reason into HVM_EXIT_STOPPED.
	 */
	atomic_store(&vm->stopping, true);
	vm_park_wake(vm);
	vm_kick_vcpus(vm);
}

void vm_msi_injected(struct vm *vm, uint64_t addr)
{
	if (vm->hooks && vm->hooks->msi_injected)
		vm->hooks->msi_injected(vm, addr);
}

/*
 * Every waiter on vm->cond is woken by an event: a vCPU thread that parks
 * or ends, a resume, a stop request. A stop from a signal handler
 * (hvm_vm_stop) kicks the vCPUs and wakes parked ones through the futex;
 * their ending then wakes the rest. No timed polling.
 */
void vm_wait_locked(struct vm *vm)
{
	pthread_cond_wait(&vm->cond, &vm->lock);
}

void vm_park_wait(struct vm *vm)
{
	for (;;) {
		uint32_t seq = atomic_load(&vm->park_seq);

		if (!atomic_load(&vm->paused) || atomic_load(&vm->stopping))
			return;
		/* EAGAIN: bumped since the load; EINTR: a kick. Look again. */
		syscall(SYS_futex, &vm->park_seq, FUTEX_WAIT_PRIVATE, seq, NULL,
			NULL, 0);
	}
}

void vm_park_wake(struct vm *vm)
{
	atomic_fetch_add(&vm->park_seq, 1);
	syscall(SYS_futex, &vm->park_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL,
		NULL, 0);
}

int vm_pause(struct vm *vm)
{
	if (!vm->started || atomic_load(&vm->stopping))
		return hvm_set_error(-EINVAL, "the VM is not running");
	if (atomic_exchange(&vm->paused, true))
		return 0;
	vm_kick_vcpus(vm);
	pthread_mutex_lock(&vm->lock);
	while (vm->parked_vcpus < vm->running_vcpus &&
	       !atomic_load(&vm->stopping))
		vm_wait_locked(vm);
	pthread_mutex_unlock(&vm->lock);
	event_post(&vm->events, VM_EVENT_STATE, -1, 0, "paused", NULL);
	return 0;
}

int vm_resume(struct vm *vm)
{
	bool was_paused;

	if (!vm->started)
		return hvm_set_error(-EINVAL, "the VM is not running");
	/* Running again mid-snapshot would save a moving guest. */
	if (atomic_load(&vm->snapshotting))
		return hvm_set_error(
			-EBUSY, "a snapshot is being written; resume after it");
	if (atomic_load(&vm->paused) && vm->hooks && vm->hooks->resuming)
		vm->hooks->resuming(vm);
	pthread_mutex_lock(&vm->lock);
	was_paused = atomic_exchange(&vm->paused, false);
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	vm_park_wake(vm);
	if (was_paused)
		event_post(&vm->events, VM_EVENT_STATE, -1, 0, "running", NULL);
	return 0;
}
