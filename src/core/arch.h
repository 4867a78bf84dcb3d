/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What common code asks of an architecture (src/arch/<arch>/). Common code
 * never includes an arch header; each hook gets the VM and reaches devices
 * and memory through src/core interfaces. Order of calls in vm.c:
 *
 *   arch_check_kvm        after /dev/kvm is open
 *   arch_vm_init          VM fd exists: irqchip, clocks, memory layout,
 *                         platform devices, kernel loading
 *   arch_vcpu_init        once per vCPU, after KVM_CREATE_VCPU
 *   arch_vm_finalize      all vCPUs exist: tables (MP/ACPI, FDT), GIC init
 *   arch_vcpu_exit        any exit reason common code does not handle
 *   arch_vm_destroy       tear-down of arch private state
 */
#ifndef HVM_CORE_ARCH_H
#define HVM_CORE_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct kvm_host;
struct vm;
struct vcpu;

int arch_check_kvm(struct kvm_host *kvm);
int arch_vm_init(struct vm *vm);
int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu);
int arch_vm_finalize(struct vm *vm);
void arch_vm_destroy(struct vm *vm);

/* The highest vCPU count this architecture's boot path supports. */
unsigned int arch_max_vcpus(void);

/*
 * Handle an exit reason common code did not; returns 0 to keep running,
 * 1 when the VM must stop (the arch has called vm_request_stop), -errno
 * for an exit it does not know.
 */
int arch_vcpu_exit(struct vcpu *vcpu);

/* A short description of where VCPU is (e.g. "rip=0x... cr0=0x..."). */
void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len);

#endif
