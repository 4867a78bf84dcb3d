/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpuid: what the VMM tells the guest about itself: the hypervisor bit, the
 * hypervisor signature leaf, the KVM paravirt feature bits and the
 * TSC-deadline bit. Read at CPL0 on every CPU (CPL3 cpuid returns host
 * values on the dev host); the claim is that all CPUs see the same.
 */
#include "console.h"
#include "payload.h"
#include "smp.h"
#include "x86.h"

#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define HV_LEAF_BASE 0x40000000
#define KVM_LEAF_FEATURES 0x40000001

struct cpuid_view {
	uint32_t hypervisor;
	uint32_t tsc_deadline;
	uint32_t kvm_features;
	char signature[13];
};

static struct cpuid_view views[MAX_CPUS];

static void cpuid_run(struct cpu *cpu)
{
	struct cpuid_view *v = &views[cpu->nr];
	struct cpuid_regs leaf1 = cpuid(1, 0);
	struct cpuid_regs hv = { 0, 0, 0, 0 };

	v->hypervisor = !!(leaf1.ecx & CPUID1_ECX_HYPERVISOR);
	v->tsc_deadline = !!(leaf1.ecx & CPUID1_ECX_TSC_DEADLINE);
	if (v->hypervisor)
		hv = cpuid(HV_LEAF_BASE, 0);
	memcpy(v->signature, &hv.ebx, 4);
	memcpy(v->signature + 4, &hv.ecx, 4);
	memcpy(v->signature + 8, &hv.edx, 4);
	v->signature[12] = '\0';
	if (!strcmp(v->signature, "KVMKVMKVM") && hv.eax >= KVM_LEAF_FEATURES)
		v->kvm_features = cpuid(KVM_LEAF_FEATURES, 0).eax;
}

/* The signature as a RESULT value: alphanumerics only, "none" if empty. */
static void printable_signature(const char *sig, char *out)
{
	size_t n = 0;

	for (; *sig; sig++) {
		char c = *sig;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9'))
			out[n++] = c;
		else
			out[n++] = '_';
	}
	out[n] = '\0';
	if (!n)
		memcpy(out, "none", 5);
}

static bool cpuid_report(struct result *r)
{
	const struct cpuid_view *bsp = &views[0];
	unsigned int differ = 0;
	char sig[13];

	for (unsigned int i = 1; i < smp_online_count(); i++) {
		if (memcmp(&views[i], bsp, sizeof(*bsp))) {
			printk("cpuid: cpu %u sees other values than cpu 0", i);
			differ++;
		}
	}
	printable_signature(bsp->signature, sig);
	result_add(r, "hypervisor", "%u", bsp->hypervisor);
	result_add(r, "signature", "%s", sig);
	result_add(r, "kvm_features", "0x%x", bsp->kvm_features);
	result_add(r, "tsc_deadline", "%u", bsp->tsc_deadline);
	if (differ)
		result_add(r, "differ", "%u", differ);
	return !differ;
}

const struct payload payload_cpuid = {
	.name = "cpuid",
	.run = cpuid_run,
	.report = cpuid_report,
};
