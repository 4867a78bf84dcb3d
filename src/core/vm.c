// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/console.h"
#include "core/console_out.h"
#include "core/control.h"
#include "core/log.h"
#include "core/vm.h"
#include "devices/virtio/virtio_vm.h"
#include "sched/brain.h"

int vm_map_memory(struct vm *vm)
{
	uint64_t size = vm->cfg->mem;
	int r;

	if (vm->cfg->hugepages && size % (2ULL << 20))
		return hvm_set_error(
			-EINVAL,
			"--mem %llu MiB is not a multiple of the 2 MiB huge page size (--hugepages)",
			(unsigned long long)(size >> 20));
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
	struct kvm_userspace_memory_region region;
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
	region = (struct kvm_userspace_memory_region){
		.slot = vm->nr_memslots,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};
	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return hvm_set_error(
			-errno,
			"KVM_SET_USER_MEMORY_REGION (slot %u, %llu MiB at 0x%llx) failed: %s",
			vm->nr_memslots, (unsigned long long)(size >> 20),
			(unsigned long long)gpa, strerror(errno));
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

void vm_request_stop(struct vm *vm, enum hvm_exit_reason reason, uint32_t code,
		     int vcpu, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&vm->lock);
	if (!vm->exit_recorded) {
		vm->exit_recorded = true;
		vm->exit.reason = reason;
		vm->exit.debug_code = code;
		vm->exit.vcpu = vcpu;
		va_start(ap, fmt);
		vsnprintf(vm->exit.detail, sizeof(vm->exit.detail), fmt, ap);
		va_end(ap);
	}
	atomic_store(&vm->stopping, true);
	pthread_cond_broadcast(&vm->cond); /* parked vCPUs, pause waiters */
	pthread_mutex_unlock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
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

static int vm_check_config(const struct hvm_config *cfg)
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

static int vm_register_coalesced(struct vm *vm, struct bus *bus, bool pio)
{
	for (size_t i = 0; i < bus->nr; i++) {
		const struct bus_region *r = &bus->regions[i];
		struct kvm_coalesced_mmio_zone zone = {
			.addr = r->base,
			.size = (uint32_t)r->len,
			.pio = pio,
		};

		if (!r->coalesced)
			continue;
		if (!vm->kvm.coalesced_mmio_page ||
		    (pio && !vm->kvm.coalesced_pio))
			continue; /* every write exits: slower, still right */
		if (ioctl(vm->fd, KVM_REGISTER_COALESCED_MMIO, &zone) < 0)
			return hvm_set_error(
				-errno,
				"KVM_REGISTER_COALESCED_MMIO for %s failed: %s",
				r->name, strerror(errno));
	}
	return 0;
}

static void vm_free(struct vm *vm)
{
	if (vm->vcpus) {
		for (unsigned int i = 0; i < vm->nr_vcpus; i++)
			vcpu_destroy(&vm->vcpus[i]);
		free(vm->vcpus);
	}
	virtio_vm_destroy(vm); /* its I/O may point into guest RAM */
	sched_vm_destroy(vm);
	arch_vm_destroy(vm);
	bus_destroy(&vm->pio);
	bus_destroy(&vm->mmio);
	if (vm->fd >= 0)
		close(vm->fd);
	guest_memory_unmap(&vm->mem);
	console_out_destroy(vm->console_out); /* after every device */
	kvm_host_close(&vm->kvm);
	pthread_mutex_destroy(&vm->coalesced_lock);
	pthread_mutex_destroy(&vm->lock);
	pthread_cond_destroy(&vm->cond);
	hvm_config_free(vm->cfg);
	free(vm);
}

struct hvm_vm *hvm_vm_create(const struct hvm_config *cfg)
{
	struct vm *vm;
	int r;

	if (!cfg) {
		hvm_set_error(-EINVAL, "hvm_vm_create: no config");
		return NULL;
	}
	log_set_level(LOG_WARN + cfg->verbosity);
	r = vm_check_config(cfg);
	if (r < 0)
		return NULL;

	vm = calloc(1, sizeof(*vm));
	if (!vm) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	vm->fd = -1;
	vm->kvm.fd = -1;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_mutex_init(&vm->coalesced_lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	vm->power = (struct power_sink){ .event = vm_power_event, .ctx = vm };
	vm->cfg = config_dup(cfg);
	if (!vm->cfg) {
		hvm_set_error(-ENOMEM, "out of memory");
		goto fail;
	}

	vm->console_out = console_out_create(
		cfg->console == CONSOLE_NONE ? -1 : cfg->console_out_fd);
	if (!vm->console_out)
		goto fail;

	r = kvm_host_open(&vm->kvm, cfg->kvm_path ? cfg->kvm_path : "/dev/kvm");
	if (r < 0)
		goto fail;
	r = arch_check_kvm(&vm->kvm);
	if (r < 0)
		goto fail;
	if (cfg->cpus > (unsigned int)vm->kvm.max_vcpus ||
	    cfg->cpus > arch_max_vcpus()) {
		hvm_set_error(
			-EINVAL,
			"--cpus %u is more than this host supports (KVM: %d, hintvm on this architecture: %u)",
			cfg->cpus, vm->kvm.max_vcpus, arch_max_vcpus());
		goto fail;
	}

	vm->fd = ioctl(vm->kvm.fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		hvm_set_error(-errno, "KVM_CREATE_VM failed: %s",
			      strerror(errno));
		goto fail;
	}
	/* Exit policy must be fixed before vCPUs exist (src/sched). */
	r = sched_vm_create(vm);
	if (r < 0)
		goto fail;
	r = arch_vm_init(vm);
	if (r < 0)
		goto fail;
	r = virtio_vm_plug_mmio(vm); /* devices the arch did not place */
	if (r < 0)
		goto fail;

	vm->vcpus = calloc(cfg->cpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		hvm_set_error(-ENOMEM, "out of memory");
		goto fail;
	}
	for (unsigned int i = 0; i < cfg->cpus; i++) {
		r = vcpu_create(vm, &vm->vcpus[i], i);
		if (r < 0)
			goto fail;
		vm->nr_vcpus++;
		r = arch_vcpu_init(vm, &vm->vcpus[i]);
		if (r < 0)
			goto fail;
	}
	r = arch_vm_finalize(vm);
	if (r < 0)
		goto fail;
	if (vm_register_coalesced(vm, &vm->pio, true) < 0 ||
	    vm_register_coalesced(vm, &vm->mmio, false) < 0)
		goto fail;
	return (struct hvm_vm *)vm;

fail:
	vm_free(vm);
	return NULL;
}

static size_t console_deliver_nothing(void *ctx, const uint8_t *buf, size_t len)
{
	return len;
}

static void console_quit(void *ctx)
{
	struct vm *vm = ctx;

	vm_request_stop(vm, HVM_EXIT_STOPPED, 0, -1,
			"stopped from the console (Ctrl-A x)");
}

int hvm_vm_start(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;
	struct console_sink sink = vm->console_sink;
	int r;

	if (!vm || vm->started)
		return hvm_set_error(-EINVAL, "the VM is already started");
	r = vcpu_signal_setup();
	if (r < 0)
		return r;
	if (!sink.deliver)
		sink.deliver = console_deliver_nothing;
	sink.quit = console_quit;
	sink.quit_ctx = vm;
	if (vm->cfg->console != CONSOLE_NONE && vm->cfg->console_in_fd >= 0) {
		vm->console = console_start(vm->cfg->console_in_fd, sink);
		if (!vm->console)
			return hvm_set_error(-ENOMEM,
					     "cannot start the console thread");
	}

	if (vm->cfg->control_path) {
		r = control_start(vm, vm->cfg->control_path, &vm->control);
		if (r < 0) {
			console_stop(vm->console);
			vm->console = NULL;
			return r;
		}
	}

	/* Before the vCPUs run: vCPU ioctls (stats fds) wait for KVM_RUN. */
	r = sched_vm_start(vm);
	if (r < 0)
		pr_warn("%s; running without scheduling management",
			hvm_error_message());
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

int hvm_vm_wait(struct hvm_vm *handle, struct hvm_exit *exit)
{
	struct vm *vm = (struct vm *)handle;

	if (!vm || !vm->started)
		return hvm_set_error(-EINVAL, "the VM was never started");
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
	/* What the guest printed last reaches the reader, if it reads. */
	console_out_flush(vm->console_out, 250);
	control_stop(vm->control);
	vm->control = NULL;
	console_stop(vm->console);
	vm->console = NULL;
	sched_vm_stopped(vm);
	return 0;
}

void vm_wait_locked(struct vm *vm)
{
	struct timespec deadline;

	/*
	 * hvm_vm_stop() may run in a signal handler, which cannot signal a
	 * condition variable: never sleep long without re-checking.
	 */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += 50 * 1000 * 1000;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&vm->cond, &vm->lock, &deadline);
}

int vm_pause(struct vm *vm)
{
	if (!vm->started || atomic_load(&vm->stopping))
		return hvm_set_error(-EINVAL, "the VM is not running");
	if (atomic_exchange(&vm->paused, true))
		return 0;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	pthread_mutex_lock(&vm->lock);
	while (vm->parked_vcpus < vm->running_vcpus &&
	       !atomic_load(&vm->stopping))
		vm_wait_locked(vm);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

int vm_resume(struct vm *vm)
{
	if (!vm->started)
		return hvm_set_error(-EINVAL, "the VM is not running");
	pthread_mutex_lock(&vm->lock);
	atomic_store(&vm->paused, false);
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

int hvm_vm_pause(struct hvm_vm *vm)
{
	return vm ? vm_pause((struct vm *)vm) : -EINVAL;
}

int hvm_vm_resume(struct hvm_vm *vm)
{
	return vm ? vm_resume((struct vm *)vm) : -EINVAL;
}

void hvm_vm_stop(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;

	/*
	 * Async-signal-safe: no locks, no allocation. hvm_vm_wait() turns a
	 * stop without a recorded reason into HVM_EXIT_STOPPED.
	 */
	if (!vm)
		return;
	atomic_store(&vm->stopping, true);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
}

void hvm_vm_destroy(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;

	if (!vm)
		return;
	if (vm->started) {
		hvm_vm_stop(handle);
		hvm_vm_wait(handle, NULL);
	}
	vm_free(vm);
}
