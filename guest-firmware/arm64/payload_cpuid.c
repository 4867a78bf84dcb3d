// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cpuid, the arm64 way: what the hypervisor tells the guest through SMCCC.
 * Reports the SMCCC version and whether PV time (steal time, DEN0057A) is
 * offered; when it is, every CPU's record must have its own 64-byte
 * aligned address and revision 0. Also reports MIDR_EL1.
 */
#include "console.h"
#include "payload.h"

#define SMCCC_VERSION 0x80000000
#define SMCCC_ARCH_FEATURES 0x80000001
#define PV_TIME_FEATURES 0xc5000020
#define PV_TIME_ST 0xc5000021
#define SMCCC_NOT_SUPPORTED ((uint64_t)-1)

static uint64_t st_ipa[MAX_CPUS];
static uint64_t smccc_version;
static bool pvtime;

static void cpuid_run(struct cpu *cpu)
{
	if (cpu->nr == 0) {
		smccc_version = smccc_call(SMCCC_VERSION, 0, 0, 0);
		pvtime = smccc_version != SMCCC_NOT_SUPPORTED &&
			 smccc_version >= 0x10001 &&
			 smccc_call(SMCCC_ARCH_FEATURES, PV_TIME_FEATURES, 0,
				    0) == 0 &&
			 smccc_call(PV_TIME_FEATURES, PV_TIME_ST, 0, 0) == 0;
	}
	smp_barrier();
	if (pvtime)
		st_ipa[cpu->nr] = smccc_call(PV_TIME_ST, 0, 0, 0);
}

static bool cpuid_report(struct result *r)
{
	unsigned int n = smp_online_count();
	bool ok = true;

	result_add(r, "smccc", "0x%lx", smccc_version & 0xffffffff);
	result_add(r, "pvtime", "%d", pvtime);
	for (unsigned int i = 0; pvtime && i < n; i++) {
		if (st_ipa[i] == SMCCC_NOT_SUPPORTED || st_ipa[i] % 64 ||
		    st_ipa[i] >= (1ULL << 39)) {
			printk("cpuid: cpu %u steal record at 0x%lx", i,
			       st_ipa[i]);
			ok = false;
			continue;
		}
		for (unsigned int j = 0; j < i; j++)
			ok &= st_ipa[j] != st_ipa[i];
		ok &= mmio_read32(st_ipa[i]) == 0; /* revision */
	}
	if (pvtime)
		result_add(r, "st_ipa", "0x%lx", st_ipa[0]);
	result_add(r, "midr", "0x%lx", read_sysreg(midr_el1));
	return ok;
}

const struct payload payload_cpuid = {
	.name = "cpuid",
	.run = cpuid_run,
	.report = cpuid_report,
};
