/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A virtual machine: the KVM VM fd, guest memory, the buses, the vCPUs and
 * the single answer to "why did it stop". Everything a VM owns hangs off
 * struct vm, so several VMs can live in one process.
 */
#ifndef HVM_CORE_VM_H
#define HVM_CORE_VM_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/budget.h"
#include "core/boot_trace.h"
#include "core/bus.h"
#include "core/config.h"
#include "core/console.h"
#include "core/events.h"
#include "core/guest_memory.h"
#include "core/kvm_host.h"
#include "core/power.h"
#include "core/stats.h"
#include "hintvm/hintvm.h"
#include "sandbox/identity.h"

struct kvm_run;
struct kvm_coalesced_mmio_ring;
struct console;
struct console_out;
struct virtio_vm;
struct sched_vm;
struct agent_host;
struct agent_stdio;
struct vm;

/*
 * What the builder (vmm/builder.c) plugs into the machinery, so that core/
 * and the control plane name no subsystem: the calls vCPU threads,
 * interrupt injection and control requests make into whoever manages
 * scheduling and statistics. Every member may be NULL.
 */
struct vm_hooks {
	/* On the vCPU thread, before its first KVM_RUN. */
	void (*vcpu_thread_start)(struct vm *vm, unsigned int id);
	/* On the vCPU thread as it ends, after its last KVM_RUN. */
	void (*vcpu_thread_exit)(struct vm *vm, unsigned int id);
	/* A device model injected an MSI with address ADDR from userspace. */
	void (*msi_injected)(struct vm *vm, uint64_t addr);
	/*
	 * Control requests for the scheduling brain: change run-time setting
	 * KEY (-ENOENT: not one it knows), and the settings as they are now
	 * as a JSON object, snprintf-like.
	 */
	int (*set_option)(struct vm *vm, const char *key, const char *value);
	int (*describe)(struct vm *vm, char *buf, size_t len);
	/*
	 * The VM's statistics, for the control plane and hvm_vm_stats():
	 * the --stats table or (JSON) document, snprintf-like, and one
	 * value by name (-ENOENT: no such statistic, reason recorded).
	 */
	int (*format_stats)(struct vm *vm, bool json, char *buf, size_t len);
	int (*stat)(struct vm *vm, const char *name, uint64_t *value);
	/*
	 * A snapshot into two files the control client opened (vmm/
	 * snapshot_save.c); the VM stays paused after it when STAY_PAUSED.
	 */
	int (*snapshot)(struct vm *vm, int state_fd, int mem_fd,
			bool stay_paused);
	/* vm_resume() is about to wake paused vCPUs (before they run). */
	void (*resuming)(struct vm *vm);
};

/* Exit reasons are counted per vCPU; KVM's numbers are below this. */
#define VCPU_EXIT_REASONS 64

/*
 * One exit, as the vCPU thread saw it. A triple fault leaves no state to
 * report (on AMD, KVM resets the vCPU before it returns), so the last few
 * exits before it are what a crash report can say about where it happened.
 */
struct vcpu_exit_record {
	uint64_t addr; /* port or guest-physical address (IO, MMIO) */
	uint64_t pc; /* guest instruction pointer, 0 when not known cheaply */
	uint32_t reason; /* KVM_EXIT_* */
	uint8_t len;
	bool write;
};

#define VCPU_RECENT_EXITS 8

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool thread_started; /* joinable; owned by the starting thread */
	/* No exit awaits completion by KVM_RUN (vcpu.c, vcpu_settle). */
	bool settled;
	pthread_t self; /* set by the vCPU thread itself */
	atomic_bool kickable; /* self is valid and SIGUSR1 unblocked */
	_Atomic pid_t tid; /* for the scheduling brain; 0 until running */
	_Atomic uint64_t exits[VCPU_EXIT_REASONS];
	_Atomic uint64_t pio_exits_unclaimed;
	_Atomic uint64_t mmio_exits_unclaimed;
	/* Ring of the latest exits; only the vCPU's own thread touches it. */
	struct vcpu_exit_record recent_exits[VCPU_RECENT_EXITS];
	uint64_t nr_exits;
};

struct vm {
	struct hvm_config *cfg; /* private copy */
	struct vm_identity identity; /* --user: who its threads become */
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
	/* Coalesced regions KVM knows about (registered on first write). */
#define VM_MAX_COALESCED 8
	const struct bus_region *coalesced_live[VM_MAX_COALESCED];
	unsigned int nr_coalesced_live;
	atomic_uint coalesced_pending; /* regions not registered yet */
	struct power_sink power;
	struct console *console;
	struct console_in_stats console_in; /* outlives console: --stats */
	/* Host memory the guest made the devices allocate (--guest-objects). */
	struct budget guest_objects;
	/* Shares whose file-server process died (server=process, --stats). */
	_Atomic uint64_t share_server_deaths;
	/* What the file-server processes hold for the guest, summed. */
	struct budget share_objects;
	struct console_out *console_out; /* guest output, for every device */
	struct control *control;
	char name[66]; /* --name or generated; set when the VM starts */
	struct event_ring events; /* for subscribers (core/events.h) */
	struct console_sink
		console_sink; /* set by whoever owns the console device */
	const struct vm_hooks *hooks; /* filled by the builder */
	void *arch; /* owned by src/arch/<arch> */
	struct platform *platform; /* its devices: vmm/platform.c */
	struct virtio_vm *virtio; /* src/devices/virtio/virtio_vm.c */
	struct sched_vm *sched; /* owned by src/sched/brain.c */
	struct agent_host *agent; /* --agent: agent/agent_host.c */
	/* Exit-report connections over the bound, closed at once (--stats). */
	_Atomic uint64_t agent_reports_refused;
	struct agent_stdio *agent_stdio; /* agent/agent_stdio.c */
	struct boot_trace boot; /* when each start/exit phase was reached */
	/*
	 * hvm_vm_restore: guest RAM is this snapshot memory file, mapped
	 * MAP_PRIVATE (-1 for a fresh boot), and the arch loads no kernel
	 * and writes no boot tables: the memory already holds them.
	 */
	int restore_mem_fd;
	/* --core-sched vm|vcpu: the cookie the building thread took (GET). */
	uint64_t core_cookie;

	/* Lifecycle: the first stop request wins and is what wait reports. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stopping;
	atomic_bool paused;
	/* A snapshot is being written: resume waits for it (vmm/snapshot). */
	atomic_bool snapshotting;
	/* A snapshot left the VM paused with its devices frozen too, so the
	 * disk stays as saved until vm_resume() (vmm/snapshot_save.c). */
	atomic_bool devices_frozen;
	unsigned int parked_vcpus; /* vCPUs waiting in vcpu_park() */
	_Atomic uint32_t park_seq; /* futex: bumped to wake parked vCPUs */
	bool started;
	unsigned int running_vcpus;
	struct hvm_exit exit;
	bool exit_recorded;
};

/*
 * The machinery the builder (vmm/builder.c) assembles a VM from, in the
 * order it calls them. Each returns -errno with the reason recorded.
 */
/* Checks of the configuration that need no KVM (memory vs. the host). */
int vm_check_config(const struct hvm_config *cfg);
/* A VM with its own copy of CFG, no KVM yet; NULL on ENOMEM. */
struct vm *vm_alloc(const struct hvm_config *cfg, const struct vm_hooks *hooks);
/* Open /dev/kvm (or cfg->kvm_path), check the host, KVM_CREATE_VM. */
int vm_open_kvm(struct vm *vm);
/*
 * --jail: open PATH and create the VM now, while the process may (before
 * its user namespace, src/vmm/jail.c); the next vm_open_kvm() takes both
 * instead of opening its own. 0 or -errno with the reason recorded.
 */
int vm_open_kvm_early(const char *path);
/* Hand the regions devices marked coalesced to KVM (all buses). */
int vm_register_coalesced(struct vm *vm);
/* Ask every vCPU to stop; async-signal-safe (hvm_vm_stop). */
void vm_stop_async(struct vm *vm);
/* Free what vm_alloc and the machinery above made. */
void vm_free(struct vm *vm);

/*
 * A device injected an MSI from userspace: tell the hooks (the scheduling
 * brain may boost the target vCPU).
 */
void vm_msi_injected(struct vm *vm, uint64_t addr);

/* Allocate guest RAM of cfg->mem bytes (call once, from the arch). */
int vm_map_memory(struct vm *vm);

/* Make [GPA, GPA + SIZE) of the mapping at HOST_OFFSET guest RAM. */
int vm_add_ram(struct vm *vm, uint64_t gpa, uint64_t size,
	       uint64_t host_offset);

/*
 * Give KVM the next memory slot: [GPA, GPA + SIZE) backed by HVA. For
 * memory the guest reaches but hintvm does not treat as RAM (arm64's PV
 * time area); guest RAM goes through vm_add_ram. WHAT names it in errors.
 */
int vm_add_memslot(struct vm *vm, uint64_t gpa, uint64_t size, void *hva,
		   const char *what);

/* Register a device on the PIO or MMIO bus; errors name the device. */
int vm_register_pio(struct vm *vm, uint64_t port, uint64_t len,
		    const struct bus_ops *ops, void *dev, const char *name);
int vm_register_mmio(struct vm *vm, uint64_t gpa, uint64_t len,
		     const struct bus_ops *ops, void *dev, const char *name);

/*
 * A write to ADDR exited to userspace: if it lies in a coalesced region
 * KVM does not batch yet, register the region now (vm.c says why).
 */
void vm_coalesce_on_write(struct vm *vm, bool pio, uint64_t addr);

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
/* Wait on vm->cond (vm->lock held) until someone broadcasts it. */
void vm_wait_locked(struct vm *vm);

/*
 * Park the calling vCPU thread until the VM is resumed or stopping, and
 * wake every parked one (async-signal-safe: hvm_vm_stop may run in a
 * signal handler, which cannot use vm->cond).
 */
void vm_park_wait(struct vm *vm);
void vm_park_wake(struct vm *vm);
int vm_resume(struct vm *vm);

/*
 * The guest wrote its first console byte (any console device): records
 * the phase and the exits taken so far. Cheap after the first call.
 */
void vm_console_output(void *vm);

/* The vCPU whose exit this thread is handling, or -1. */
extern _Thread_local int current_vcpu_id;

/*
 * Kicks use SIGUSR1 with an empty handler installed without SA_RESTART: the
 * signal only serves to make KVM_RUN return EINTR. kvm_run.immediate_exit
 * covers the window where the vCPU thread is about to enter KVM_RUN.
 */
#define VCPU_KICK_SIGNAL SIGUSR1
/* Install the kick signal's handler (once per process, before any VM runs). */
int vm_kick_signal_setup(void);
/* Make every vCPU leave KVM_RUN; async-signal-safe. */
void vm_kick_vcpus(struct vm *vm);

#endif
