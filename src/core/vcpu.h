/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vCPUs of a VM: creating them, their threads (KVM_RUN and the exit
 * dispatch, vcpu.c) and what other subsystems may know of each. vcpu.c sits
 * above vm.c: it calls the VM's machinery (stop, park, buses); vm.c reaches
 * the vCPUs only to kick them out of KVM_RUN (vm_kick_vcpus).
 */
#ifndef HVM_CORE_VCPU_H
#define HVM_CORE_VCPU_H

#include <sys/types.h>

#include "core/stats.h"
#include "hintvm/hintvm.h"

struct vm;

/* KVM_CREATE_VCPU and arch_vcpu_init for each of cfg->cpus vCPUs. */
int vm_create_vcpus(struct vm *vm);
/* Start every vCPU thread; a thread that cannot start stops the VM. */
int vm_start_vcpus(struct vm *vm);
/* Wait until every vCPU thread ended, join them, report why in EXIT. */
void vm_wait_vcpus(struct vm *vm, struct hvm_exit *exit);
/*
 * Unmap and close the vCPUs, before the subsystems that used them go and
 * before vm_free().
 */
void vm_destroy_vcpus(struct vm *vm);

/*
 * What another subsystem may know of vCPU ID: its host thread id (0 until
 * the thread runs, and after it ended as far as the subsystem is
 * concerned) and its KVM fd (for vCPU ioctls such as KVM_GET_STATS_FD).
 */
pid_t vm_vcpu_tid(const struct vm *vm, unsigned int id);
int vm_vcpu_fd(const struct vm *vm, unsigned int id);

/* Core's per-vCPU counters (exits by reason) as a statistics table. */
struct stat_table vm_vcpu_stat_table(const struct vm *vm);

#endif
