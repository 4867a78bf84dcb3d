/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Paravirtual features a guest may see in CPUID 0x40000001.EAX (x86), by
 * name (`--pv`). Names follow QEMU's kvm-* properties without the prefix.
 * Bits are the x86 KVM_FEATURE_* numbers; arm64 maps the names that have
 * an arm64 meaning (steal-time, tlb-flush, and its own preempted, a bit
 * with no x86 CPUID meaning) onto PV time and the KVM vendor hypervisor
 * services (src/arch/arm64/pv_arm64.h, docs/arm64.md).
 *
 * `--pv` grammar (docs/sched.md):
 *   host            everything the host supports and can serve (default)
 *   none            no PV features
 *   NAME[,NAME...]  exactly these
 *   host,-NAME,...  the host set without NAME; "none,NAME" works too
 * Items apply left to right; "-NAME" removes, "NAME" or "+NAME" adds.
 *
 * Resolution masks what cannot work: bits KVM does not report in
 * KVM_GET_SUPPORTED_CPUID, the hypercall-based bits (unhalt, send-ipi,
 * sched-yield, map-gpa-range) when the host cannot serve hypercalls (nested
 * kvm_pvm hosts livelock on them), and unhalt when HLT exits are disabled.
 * So are features whose prerequisite is off (preempted without
 * steal-time). What was masked, and why, is kept for --stats.
 */
#ifndef HVM_SCHED_PV_H
#define HVM_SCHED_PV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which architectures give a name a meaning. */
#define PV_ARCH_X86 (1u << 0)
#define PV_ARCH_ARM64 (1u << 1)

/* arm64's preempted flag: a bit x86's CPUID leaf does not use. */
#define PV_BIT_PREEMPTED 31

struct pv_feature {
	const char *name;
	unsigned int bit; /* KVM_FEATURE_* or PV_BIT_* */
	bool hypercall; /* x86: the guest uses it through a hypercall */
	unsigned int arches; /* PV_ARCH_* */
	const char *what;
	uint32_t needs; /* bits that must be enabled too */
};

/* The table, in bit order. */
extern const struct pv_feature pv_features[];
extern const size_t pv_nr_features;

const struct pv_feature *pv_feature_by_name(const char *name);

/* A parsed --pv value, before the host is known. */
struct pv_request {
	bool from_host; /* start from the host's set */
	uint32_t add; /* bits named explicitly */
	uint32_t remove; /* bits named with '-' */
};

/*
 * Parse SPEC (see above). Returns 0 or -EINVAL with hvm_set_error()
 * naming the offending item and listing the valid names, or naming a
 * feature asked for while the one it needs is excluded ("none,preempted").
 */
int pv_parse(const char *spec, struct pv_request *req);

struct pv_host {
	unsigned int
		arch; /* PV_ARCH_*: other arches' names are ignored; 0: none */
	uint32_t supported; /* x86: KVM_GET_SUPPORTED_CPUID 0x40000001.eax */
	bool hypercalls_work; /* vmcall/vmmcall reach KVM's handler */
	bool hlt_exits_disabled; /* KVM then cannot kick a halted vCPU */
};

struct pv_resolved {
	uint32_t enabled; /* what goes into the guest's CPUID */
	uint32_t ignored_arch; /* asked for, no meaning on this arch */
	uint32_t masked_unsupported; /* asked for, KVM does not offer */
	uint32_t masked_hypercall; /* asked for, needs hypercalls */
	uint32_t masked_hlt; /* asked for, needs HLT exits */
	uint32_t masked_needs; /* asked for, a feature it needs is off */
};

void pv_resolve(const struct pv_request *req, const struct pv_host *host,
		struct pv_resolved *out);

/* All bits whose features need hypercalls. */
uint32_t pv_hypercall_mask(void);

/* All bits whose names mean something on ARCH (PV_ARCH_*). */
uint32_t pv_arch_mask(unsigned int arch);

/* "steal-time,tlb-flush" for BITS into BUF ("none" when empty). */
char *pv_format(uint32_t bits, char *buf, size_t len);

#endif
