/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CPUID a vCPU sees: what KVM supports on this host, made coherent for
 * a VM of N CPUs (APIC ids, topology leaves) and marked as a KVM guest
 * (hypervisor bit, KVM signature and paravirt feature leaves), because the
 * raw KVM_GET_SUPPORTED_CPUID table describes neither.
 */
#ifndef HVM_X86_CPUID_H
#define HVM_X86_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#define KVM_CPUID_SIGNATURE_LEAF 0x40000000
#define KVM_CPUID_FEATURES_LEAF 0x40000001
/* The hypervisor timing leaf QEMU, VMware and Linux agree on. */
#define HV_CPUID_TIMING_LEAF 0x40000010
/* Room cpuid_for_vcpu() needs beyond the supported table. */
#define CPUID_EXTRA_ENTRIES 1

/* KVM_GET_SUPPORTED_CPUID into a malloc'ed table (free()). */
int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out);

struct cpuid_vm_params {
	unsigned int nr_cpus;
	bool tsc_deadline; /* KVM_CAP_TSC_DEADLINE_TIMER */
	uint32_t kvm_features; /* leaf 0x40000001 EAX */
	uint32_t tsc_khz; /* leaf 0x40000010 EAX; 0: no timing leaf */
};

/*
 * Fill DST (with room for SRC->nent + CPUID_EXTRA_ENTRIES entries) with SRC adjusted for vCPU
 * APIC_ID of a VM described by PARAMS.
 */
void cpuid_for_vcpu(const struct kvm_cpuid2 *src, struct kvm_cpuid2 *dst,
		    unsigned int apic_id, const struct cpuid_vm_params *params);

/*
 * A vCPU's CPUID as KVM_GET_CPUID2 reads it back, into a malloc'ed table
 * (free()). Older kernels leave the caller's nent on success (only an
 * E2BIG sets it; the e2e tier's Debian 6.1, by its restores' failures),
 * so nent is the room given and the entries past the vCPU's are the
 * zeros of calloc: they are trimmed, else a snapshot holds zero "leaf 0"
 * entries and a restore compares the real leaf 0 with them
 * (CPUID-incompatible, every time, on such a host).
 */
#define CPUID_VCPU_MAX_ENTRIES 256
int cpuid_get_vcpu(int vcpu_fd, struct kvm_cpuid2 **out);
/* All zero: the padding above, never a real leaf (leaf 0 names a vendor). */
bool cpuid_entry_is_padding(const struct kvm_cpuid_entry2 *e);
/* Drop trailing padding entries from C's nent. */
void cpuid_trim_padding(struct kvm_cpuid2 *c);

/* The entry for FUNCTION/INDEX in TABLE, or NULL. */
struct kvm_cpuid_entry2 *cpuid_find(struct kvm_cpuid2 *table, uint32_t function,
				    uint32_t index);

#endif
