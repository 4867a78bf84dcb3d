/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a VM's start and end spend their time: the moment each boot phase
 * was first reached, from the process start (when libhintvm was loaded,
 * right after exec and the dynamic loader), and the exits the guest took
 * before its first console byte. --stats and --stats-json report them;
 * bench/run startup measures exec to exit from outside.
 */
#ifndef HVM_CORE_BOOT_TRACE_H
#define HVM_CORE_BOOT_TRACE_H

#include <stdatomic.h>
#include <stdint.h>

enum boot_phase {
	BOOT_VM_CREATED, /* hvm_vm_create() done: KVM objects, devices */
	BOOT_FIRST_RUN, /* the first KVM_RUN of any vCPU */
	BOOT_FIRST_CONSOLE, /* the guest's first console byte */
	BOOT_GUEST_STOP, /* the guest powered off (or the VM was stopped) */
	BOOT_REPORT, /* hvm_vm_wait() has every vCPU joined */
	BOOT_TORN_DOWN, /* hvm_vm_destroy(): KVM objects closed */
	BOOT_PHASES
};

/* Exit reasons kept per boot (KVM's numbers, as struct vcpu counts). */
#define BOOT_EXIT_REASONS 64

struct boot_trace {
	_Atomic uint64_t at_ns[BOOT_PHASES]; /* 0: not reached */
	/* Exits of all vCPUs by reason before the first console byte. */
	uint64_t exits_before_console[BOOT_EXIT_REASONS];
};

/* CLOCK_MONOTONIC at process start (library load). */
uint64_t boot_trace_process_start_ns(void);

/* Record PHASE now unless it was reached before; true if this was first. */
bool boot_trace_mark(struct boot_trace *t, enum boot_phase phase);

/* Milliseconds from process start to PHASE, or a negative value. */
double boot_trace_ms(const struct boot_trace *t, enum boot_phase phase);

/* "vm_created", "first_kvm_run", ... (JSON keys and table labels). */
const char *boot_phase_name(enum boot_phase phase);

#endif
