// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/cpuid.h"
#include "base/log.h"

#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_1_EDX_HTT (1u << 28)
#define TOPO_LEVEL_SMT 1
#define TOPO_LEVEL_CORE 2

int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out)
{
	for (unsigned int nent = 128; nent <= 4096; nent *= 2) {
		struct kvm_cpuid2 *c =
			calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));

		if (!c)
			return hvm_set_error(-ENOMEM, "out of memory");
		c->nent = nent;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			*out = c;
			return 0;
		}
		free(c);
		if (errno != E2BIG)
			return hvm_set_errno_error(
				"KVM_GET_SUPPORTED_CPUID failed");
	}
	return hvm_set_error(-E2BIG,
			     "KVM_GET_SUPPORTED_CPUID: table too large");
}

bool cpuid_entry_is_padding(const struct kvm_cpuid_entry2 *e)
{
	static const struct kvm_cpuid_entry2 zero;

	return !memcmp(e, &zero, sizeof(zero));
}

void cpuid_trim_padding(struct kvm_cpuid2 *c)
{
	while (c->nent && cpuid_entry_is_padding(&c->entries[c->nent - 1]))
		c->nent--;
}

int cpuid_get_vcpu(int vcpu_fd, struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *c = calloc(
		1, sizeof(*c) + CPUID_VCPU_MAX_ENTRIES * sizeof(c->entries[0]));

	if (!c)
		return hvm_set_error(-ENOMEM, "out of memory");
	c->nent = CPUID_VCPU_MAX_ENTRIES;
	if (ioctl(vcpu_fd, KVM_GET_CPUID2, c) < 0) {
		free(c);
		return hvm_set_errno_error("KVM_GET_CPUID2");
	}
	cpuid_trim_padding(c);
	*out = c;
	return 0;
}

struct kvm_cpuid_entry2 *cpuid_find(struct kvm_cpuid2 *table, uint32_t function,
				    uint32_t index)
{
	for (uint32_t i = 0; i < table->nent; i++) {
		struct kvm_cpuid_entry2 *e = &table->entries[i];

		if (e->function != function)
			continue;
		if (!(e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) ||
		    e->index == index)
			return e;
	}
	return NULL;
}

static unsigned int order_base_2(unsigned int n)
{
	unsigned int bits = 0;

	while ((1u << bits) < n)
		bits++;
	return bits;
}

/* One package, one core per vCPU, no SMT: the simplest true topology. */
static void set_topology(struct kvm_cpuid_entry2 *e, unsigned int apic_id,
			 unsigned int nr_cpus)
{
	unsigned int core_shift = order_base_2(nr_cpus);

	switch (e->index) {
	case 0:
		e->eax = 0;
		e->ebx = 1;
		e->ecx = (TOPO_LEVEL_SMT << 8) | e->index;
		break;
	case 1:
		e->eax = core_shift;
		e->ebx = nr_cpus;
		e->ecx = (TOPO_LEVEL_CORE << 8) | e->index;
		break;
	default:
		e->eax = 0;
		e->ebx = 0;
		e->ecx = e->index;
		break;
	}
	e->edx = apic_id;
}

void cpuid_for_vcpu(const struct kvm_cpuid2 *src, struct kvm_cpuid2 *dst,
		    unsigned int apic_id, const struct cpuid_vm_params *params)
{
	unsigned int n = params->nr_cpus;

	dst->nent = src->nent;
	memcpy(dst->entries, src->entries, src->nent * sizeof(src->entries[0]));
	for (uint32_t i = 0; i < dst->nent; i++) {
		struct kvm_cpuid_entry2 *e = &dst->entries[i];

		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & 0x0000ffff) | (apic_id << 24) |
				 ((n > 255 ? 255 : n) << 16);
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
			if (params->tsc_deadline)
				e->ecx |= CPUID_1_ECX_TSC_DEADLINE;
			else
				e->ecx &= ~CPUID_1_ECX_TSC_DEADLINE;
			if (n > 1)
				e->edx |= CPUID_1_EDX_HTT;
			else
				e->edx &= ~CPUID_1_EDX_HTT;
			break;
		case 4:
			/* Cores per package - 1 in EAX[31:26]. */
			e->eax =
				(e->eax & 0x03ffffff) |
				((uint32_t)((1u << order_base_2(n)) - 1) << 26);
			break;
		case 0xb:
		case 0x1f:
			set_topology(e, apic_id, n);
			break;
		case KVM_CPUID_SIGNATURE_LEAF:
			/* "KVMKVMKVM\0\0\0" and the highest leaf offered. */
			e->eax = params->tsc_khz ? HV_CPUID_TIMING_LEAF
						 : KVM_CPUID_FEATURES_LEAF;
			e->ebx = 0x4b4d564b;
			e->ecx = 0x564b4d56;
			e->edx = 0x4d;
			break;
		case KVM_CPUID_FEATURES_LEAF:
			e->eax = params->kvm_features;
			break;
		case 0x80000008:
			/* AMD: number of cores - 1 in ECX[7:0]. */
			e->ecx = (e->ecx & ~0xffu) | ((n - 1) & 0xff);
			break;
		}
	}
	/*
	 * Guests (and the test kernel's timeouts) learn the TSC frequency
	 * without calibrating against a timer that costs exits.
	 */
	if (params->tsc_khz && !cpuid_find(dst, HV_CPUID_TIMING_LEAF, 0)) {
		dst->entries[dst->nent++] = (struct kvm_cpuid_entry2){
			.function = HV_CPUID_TIMING_LEAF,
			.eax = params->tsc_khz,
			.ebx = 1000000, /* KVM's local APIC timer runs at 1 GHz */
		};
	}
}
