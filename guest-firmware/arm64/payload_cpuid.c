// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cpuid, the arm64 way: what the hypervisor tells the guest through SMCCC.
 * Reports the SMCCC version and whether PV time (steal time, DEN0057A) is
 * offered; when it is, every CPU's record must have its own 64-byte
 * aligned address and revision 0. Also reports MIDR_EL1 and which
 * optional features the ID registers show (hintvm --cpu-features): SVE,
 * pointer authentication, PMUv3; and whether the scheduling-hint page
 * the tree names answers with its magic and this machine's vCPU count.
 * On KVM (its vendor hypervisor UID) it also reports the vendor services'
 * FEATURES bits of the kernel/ series: pv_preempted (function 66, the
 * vCPU-state structure with the preempted flag) and pv_tlb_flush (function
 * 67), which hintvm's --pv turns off per VM.
 */
#include "machine.h"
#include "payload.h"
#include "abi/hint_abi.h"
#include "abi/kvm_hint_uapi.h"

#define SMCCC_VERSION 0x80000000
#define SMCCC_ARCH_FEATURES 0x80000001
#define PV_TIME_FEATURES 0xc5000020
#define PV_TIME_ST 0xc5000021
#define SMCCC_NOT_SUPPORTED ((uint64_t)-1)
/* KVM vendor hypervisor services (include/linux/arm-smccc.h). */
#define VENDOR_HYP_UID 0x8600ff01
#define VENDOR_HYP_FEATURES 0x86000000
#define KVM_UID_0 0xb66fb428
#define KVM_UID_1 0xe911c52e
#define KVM_UID_2 0x564bcaa9
#define KVM_UID_3 0x743a004d

static uint64_t st_ipa[MAX_CPUS];
static uint64_t smccc_version;
static bool pvtime;
static bool on_kvm; /* the vendor hypervisor UID is KVM's */
static uint64_t vendor_features[4]; /* R0-R3 of VENDOR_HYP_FEATURES */

/* An SMCCC call with all four results (smccc_call() returns only R0). */
static void smccc_call4(uint64_t fn, uint64_t res[4])
{
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = 0;
	register uint64_t x2 __asm__("x2") = 0;
	register uint64_t x3 __asm__("x3") = 0;

	/* SMCCC 1.0 may clobber x4-x17 too. */
	if (machine.psci_smc)
		__asm__ volatile("smc #0"
				 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
				 :
				 : "x4", "x5", "x6", "x7", "x8", "x9", "x10",
				   "x11", "x12", "x13", "x14", "x15", "x16",
				   "x17", "memory");
	else
		__asm__ volatile("hvc #0"
				 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
				 :
				 : "x4", "x5", "x6", "x7", "x8", "x9", "x10",
				   "x11", "x12", "x13", "x14", "x15", "x16",
				   "x17", "memory");
	res[0] = x0;
	res[1] = x1;
	res[2] = x2;
	res[3] = x3;
}

static void probe_vendor_hyp(void)
{
	uint64_t uid[4];

	if (smccc_version == SMCCC_NOT_SUPPORTED || smccc_version < 0x10001)
		return;
	smccc_call4(VENDOR_HYP_UID, uid);
	on_kvm = uid[0] == KVM_UID_0 && uid[1] == KVM_UID_1 &&
		 uid[2] == KVM_UID_2 && uid[3] == KVM_UID_3;
	if (on_kvm)
		smccc_call4(VENDOR_HYP_FEATURES, vendor_features);
}

static int vendor_feature(unsigned int func)
{
	return (vendor_features[func / 32] >> (func % 32)) & 1;
}

static bool has_sve(void)
{
	return (read_sysreg(id_aa64pfr0_el1) >> 32) & 0xf; /* SVE */
}

static bool has_pauth(void)
{
	uint64_t isar1 = read_sysreg(id_aa64isar1_el1);
	uint64_t isar2 = read_sysreg(S3_0_C0_C6_2); /* ID_AA64ISAR2_EL1 */

	/* APA, API (ISAR1) or APA3 (ISAR2): some address authentication. */
	return ((isar1 >> 4) & 0xff) || ((isar2 >> 12) & 0xf);
}

static bool has_pmu(void)
{
	uint64_t ver = (read_sysreg(id_aa64dfr0_el1) >> 8) & 0xf; /* PMUVer */

	return ver != 0 && ver != 0xf;
}

/* -1: no hint page in the tree; 0: it does not answer right; 1: it does. */
static int hint_channel(void)
{
	uint32_t info;

	if (!machine.hint)
		return -1;
	info = mmio_read32(machine.hint + HINT_REG_INFO);
	return mmio_read32(machine.hint + HINT_REG_EVENT) == HINT_MAGIC &&
	       (info & 0xffff) >= 1 && info >> 16 == smp_online_count();
}

static void cpuid_run(struct cpu *cpu)
{
	if (cpu->nr == 0) {
		smccc_version = smccc_call(SMCCC_VERSION, 0, 0, 0);
		pvtime = smccc_version != SMCCC_NOT_SUPPORTED &&
			 smccc_version >= 0x10001 &&
			 smccc_call(SMCCC_ARCH_FEATURES, PV_TIME_FEATURES, 0,
				    0) == 0 &&
			 smccc_call(PV_TIME_FEATURES, PV_TIME_ST, 0, 0) == 0;
		probe_vendor_hyp();
	}
	smp_barrier();
	if (pvtime)
		st_ipa[cpu->nr] = smccc_call(PV_TIME_ST, 0, 0, 0);
}

static bool cpuid_report(struct result *r)
{
	unsigned int n = smp_online_count();
	bool ok = true;
	int hint;

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
	if (on_kvm) {
		result_add(r, "pv_preempted", "%d",
			   vendor_feature(HVM_KVM_FUNC_PV_VCPU_STATE));
		result_add(r, "pv_tlb_flush", "%d",
			   vendor_feature(HVM_KVM_FUNC_PV_TLB_FLUSH));
	}
	result_add(r, "midr", "0x%lx", read_sysreg(midr_el1));
	result_add(r, "sve", "%d", has_sve());
	result_add(r, "pauth", "%d", has_pauth());
	result_add(r, "pmu", "%d", has_pmu());
	hint = hint_channel();
	if (hint >= 0)
		result_add(r, "hint", "%d", hint);
	return ok && hint != 0;
}

const struct payload payload_cpuid = {
	.name = "cpuid",
	.run = cpuid_run,
	.report = cpuid_report,
};
