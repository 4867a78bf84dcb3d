/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A virtual machine: the KVM VM fd, guest memory, the buses, the vCPUs and
 * the single answer to "why did it stop". Everything a VM owns hangs off
 * struct vm, so several VMs can live in one process.
 */
#ifndef HVM_CORE_VM_H
#define HVM_CORE_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/bus.h"
#include "core/console.h"
#include "core/config.h"
#include "core/guest_memory.h"
#include "core/kvm_host.h"
#include "core/power.h"
#include "hintvm/hintvm.h"

struct kvm_run;
struct kvm_coalesced_mmio_ring;
struct console;
struct console_out;
struct virtio_vm;
struct sched_vm;

/* Exit reasons are counted per vCPU; KVM's numbers are below this. */
#define VCPU_EXIT_REASONS 64

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool thread_started; /* joinable; owned by the starting thread */
	pthread_t self; /* set by the vCPU thread itself */
	atomic_bool kickable; /* self is valid and SIGUSR1 unblocked */
	_Atomic pid_t tid; /* for the scheduling brain; 0 until running */
	_Atomic uint64_t exits[VCPU_EXIT_REASONS];
	_Atomic uint64_t pio_exits_unclaimed;
	_Atomic uint64_t mmio_exits_unclaimed;
};

struct vm {
	struct hvm_config *cfg; /* private copy */
	struct kvm_host kvm;
	int fd;
	struct guest_memory mem;
	unsigned int nr_memslots;
	struct bus pio;
	struct bus mmio;
	struct vcpu *vcpus;
	unsigned int nr_vcpus;
	struct kvm_coalesced_mmio_ring *coalesced_ring; /* in vCPU 0's page */
	pthread_mutex_t coalesced_lock;
	struct power_sink power;
	struct console *console;
	struct console_out *console_out; /* guest output, for every device */
	struct control *control;
	struct console_sink
		console_sink; /* set by whoever owns the console device */
	void *arch; /* owned by src/arch/<arch> */
	struct virtio_vm *virtio; /* src/devices/virtio/virtio_vm.c */
	struct sched_vm *sched; /* owned by src/sched/brain.c */

	/* Lifecycle: the first stop request wins and is what wait reports. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stopping;
	atomic_bool paused;
	unsigned int parked_vcpus; /* vCPUs waiting in vcpu_park() */
	bool started;
	unsigned int running_vcpus;
	struct hvm_exit exit;
	bool exit_recorded;
};

/* Allocate guest RAM of cfg->mem bytes (call once, from the arch). */
int vm_map_memory(struct vm *vm);

/* Make [GPA, GPA + SIZE) of the mapping at HOST_OFFSET guest RAM. */
int vm_add_ram(struct vm *vm, uint64_t gpa, uint64_t size,
	       uint64_t host_offset);

/* Register a device on the PIO or MMIO bus; errors name the device. */
int vm_register_pio(struct vm *vm, uint64_t port, uint64_t len,
		    const struct bus_ops *ops, void *dev, const char *name);
int vm_register_mmio(struct vm *vm, uint64_t gpa, uint64_t len,
		     const struct bus_ops *ops, void *dev, const char *name);

/* Drive an interrupt line of the in-kernel irqchip (struct irq_line). */
int vm_irq_line_set(void *vm, uint32_t gsi, bool level);

/*
 * End the VM for REASON (first caller wins) and kick every vCPU out of
 * KVM_RUN. Callable from any thread, including vCPU threads.
 */
void vm_request_stop(struct vm *vm, enum hvm_exit_reason reason, uint32_t code,
		     int vcpu, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * Stop every vCPU outside KVM_RUN and return once all are parked, or let
 * them run again. Not for signal handlers. Returns -EINVAL unless running.
 */
int vm_pause(struct vm *vm);
/* Wait on vm->cond (vm->lock held) for at most a short while. */
void vm_wait_locked(struct vm *vm);
int vm_resume(struct vm *vm);

/* The vCPU whose exit this thread is handling, or -1. */
extern _Thread_local int current_vcpu_id;

/* vcpu.c */
int vcpu_create(struct vm *vm, struct vcpu *vcpu, unsigned int id);
void vcpu_destroy(struct vcpu *vcpu);
int vcpu_start(struct vcpu *vcpu);
void vcpu_kick(struct vcpu *vcpu);
int vcpu_signal_setup(void);

#endif
