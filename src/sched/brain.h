/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduling brain of one VM: the hooks the VM lifecycle calls, the
 * sched thread that observes the host every interval and applies what the
 * policy decides, the guest hint channel's host side, and the statistics
 * (--stats, --stats-json, hvm_vm_stats()).
 *
 * Lifecycle, as called from vmm/builder.c (directly and through the
 * vm_hooks) and the arch:
 *   sched_vm_create       after KVM_CREATE_VM, before arch_vm_init: the
 *                         static decisions (exit policy, first halt-poll
 *                         value, pinning plan), made before vCPUs exist
 *   sched_pv_features     arch (x86 CPUID setup): the PV bits to expose
 *   sched_register_hints  arch: place the hint channel on its bus
 *   sched_vm_start        vCPU threads started: stats fds, sched thread
 *   sched_vm_stopped      all vCPU threads joined: final statistics
 *   sched_vm_destroy      free everything
 */
#ifndef HVM_SCHED_BRAIN_H
#define HVM_SCHED_BRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct sched_vm;

int sched_vm_create(struct vm *vm);
void sched_vm_destroy(struct vm *vm);

/*
 * The KVM PV feature bits (CPUID 0x40000001.EAX) this VM's guest sees,
 * given what KVM supports and whether the host serves hypercalls. ARCH
 * (PV_ARCH_*) says which names mean something here; the others are
 * ignored with a warning.
 */
uint32_t sched_pv_features(struct vm *vm, unsigned int arch, uint32_t supported,
			   bool hypercalls_work);

/* Register the hint channel at BASE on the PIO (x86) or MMIO bus. */
int sched_register_hints(struct vm *vm, uint64_t base, bool pio);

int sched_vm_start(struct vm *vm);
/*
 * A device model injected an MSI with address ADDR from userspace (not from
 * the target vCPU's own thread): boost the target vCPU's thread briefly
 * when the policy says the host is contended and the thread is runnable.
 */
void sched_msi_injected(struct vm *vm, uint64_t addr);

/* On the vCPU thread before its first KVM_RUN: apply the initial pinning. */
void sched_vcpu_start(struct vm *vm, unsigned int id);

/* On the vCPU thread as it ends: record its final run and wait times. */
void sched_vcpu_exit(struct vm *vm, unsigned int id);
void sched_vm_stopped(struct vm *vm);

/*
 * The control socket's requests the brain answers (src/sched/runtime.c):
 * change a run-time setting (-ENOENT: not one of the brain's run-time
 * keys; -EINVAL: bad value, reason recorded), and the settings as they are
 * now as one JSON object (snprintf-like).
 */
int sched_set_option(struct vm *vm, const char *key, const char *value);
int sched_describe(struct vm *vm, char *buf, size_t len);

#endif
