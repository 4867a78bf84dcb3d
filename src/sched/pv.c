// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "abi/kvm_para_bits.h"
#include "base/log.h"
#include "sched/pv.h"

const struct pv_feature pv_features[] = {
	{ "clocksource", KVM_FEATURE_CLOCKSOURCE, false, PV_ARCH_X86,
	  "kvm-clock at the legacy MSRs", 0 },
	{ "nop-io-delay", KVM_FEATURE_NOP_IO_DELAY, false, PV_ARCH_X86,
	  "no port 0x80 delays needed", 0 },
	{ "mmu-op", KVM_FEATURE_MMU_OP, false, PV_ARCH_X86,
	  "obsolete MMU hypercalls (never offered by KVM)", 0 },
	{ "clocksource2", KVM_FEATURE_CLOCKSOURCE2, false, PV_ARCH_X86,
	  "kvm-clock at the new MSRs", 0 },
	{ "async-pf", KVM_FEATURE_ASYNC_PF, false, PV_ARCH_X86,
	  "asynchronous page faults", 0 },
	{ "steal-time", KVM_FEATURE_STEAL_TIME, false,
	  PV_ARCH_X86 | PV_ARCH_ARM64,
	  "time the vCPU was runnable but not running (arm64: PV time)", 0 },
	{ "eoi", KVM_FEATURE_PV_EOI, false, PV_ARCH_X86,
	  "paravirtual end of interrupt", 0 },
	{ "unhalt", KVM_FEATURE_PV_UNHALT, true, PV_ARCH_X86,
	  "PV spinlocks: kick a halted vCPU (KVM_HC_KICK_CPU)", 0 },
	{ "tlb-flush", KVM_FEATURE_PV_TLB_FLUSH, false,
	  PV_ARCH_X86 | PV_ARCH_ARM64,
	  "skip TLB-flush IPIs to preempted vCPUs (arm64: a hypercall that defers the flush)",
	  0 },
	{ "async-pf-vmexit", KVM_FEATURE_ASYNC_PF_VMEXIT, false, PV_ARCH_X86,
	  "async page faults while in guest mode of a nested guest", 0 },
	{ "send-ipi", KVM_FEATURE_PV_SEND_IPI, true, PV_ARCH_X86,
	  "IPIs to many vCPUs in one hypercall", 0 },
	{ "poll-control", KVM_FEATURE_POLL_CONTROL, false, PV_ARCH_X86,
	  "guest may turn host halt polling off", 0 },
	{ "sched-yield", KVM_FEATURE_PV_SCHED_YIELD, true, PV_ARCH_X86,
	  "yield to the preempted target of an IPI (KVM_HC_SCHED_YIELD)", 0 },
	{ "async-pf-int", KVM_FEATURE_ASYNC_PF_INT, false, PV_ARCH_X86,
	  "async page fault 'page ready' as an interrupt", 0 },
	{ "msi-ext-dest-id", KVM_FEATURE_MSI_EXT_DEST_ID, false, PV_ARCH_X86,
	  "15-bit APIC IDs in MSI addresses", 0 },
	{ "map-gpa-range", KVM_FEATURE_HC_MAP_GPA_RANGE, true, PV_ARCH_X86,
	  "KVM_HC_MAP_GPA_RANGE (encrypted guests)", 0 },
	{ "migration-control", KVM_FEATURE_MIGRATION_CONTROL, false,
	  PV_ARCH_X86, "guest tells whether it can be migrated", 0 },
	{ "stable-bit", KVM_FEATURE_CLOCKSOURCE_STABLE_BIT, false, PV_ARCH_X86,
	  "kvm-clock is stable across vCPUs", 0 },
	/* x86 guests get this flag with steal-time, in the same record. */
	{ "preempted", PV_BIT_PREEMPTED, false, PV_ARCH_ARM64,
	  "the preempted flag in the PV time record",
	  1u << KVM_FEATURE_STEAL_TIME },
};

const size_t pv_nr_features = sizeof(pv_features) / sizeof(pv_features[0]);

const struct pv_feature *pv_feature_by_name(const char *name)
{
	for (size_t i = 0; i < pv_nr_features; i++)
		if (strcmp(pv_features[i].name, name) == 0)
			return &pv_features[i];
	return NULL;
}

uint32_t pv_hypercall_mask(void)
{
	uint32_t mask = 0;

	for (size_t i = 0; i < pv_nr_features; i++)
		if (pv_features[i].hypercall)
			mask |= 1u << pv_features[i].bit;
	return mask;
}

uint32_t pv_arch_mask(unsigned int arch)
{
	uint32_t mask = 0;

	for (size_t i = 0; i < pv_nr_features; i++)
		if (pv_features[i].arches & arch)
			mask |= 1u << pv_features[i].bit;
	return mask;
}

/*
 * A feature named explicitly whose prerequisite the same request excludes
 * ("none,preempted", "host,-steal-time,preempted") can never work.
 */
static int check_needs(const char *spec, const struct pv_request *req)
{
	char needed[128];

	for (size_t i = 0; i < pv_nr_features; i++) {
		const struct pv_feature *f = &pv_features[i];
		uint32_t missing;

		if (!(req->add & (1u << f->bit)) || !f->needs)
			continue;
		missing = f->needs &
			  (req->remove | (req->from_host ? 0 : ~req->add));
		if (missing)
			return hvm_set_error(
				-EINVAL,
				"--pv '%s': %s needs %s, which this list leaves out; add %s",
				spec, f->name,
				pv_format(missing, needed, sizeof(needed)),
				needed);
	}
	return 0;
}

static void valid_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < pv_nr_features && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 pv_features[i].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int pv_parse(const char *spec, struct pv_request *req)
{
	char item[64], names[512];
	const char *p = spec;

	*req = (struct pv_request){ 0 };
	if (!spec || !*spec)
		return hvm_set_error(
			-EINVAL,
			"--pv: empty value, expected host, none or a comma-separated list of PV feature names");
	for (unsigned int pos = 0;; pos++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const struct pv_feature *f;
		const char *name = item;
		bool remove = false;

		if (len == 0 || len >= sizeof(item))
			return hvm_set_error(
				-EINVAL,
				"--pv '%s': empty or overlong item at position %u",
				spec, pos + 1);
		memcpy(item, p, len);
		item[len] = '\0';

		if (strcmp(item, "host") == 0 || strcmp(item, "none") == 0) {
			/* Only as the first item: they set the starting point. */
			if (pos != 0)
				return hvm_set_error(
					-EINVAL,
					"--pv '%s': '%s' must come first", spec,
					item);
			req->from_host = item[0] == 'h';
		} else {
			if (item[0] == '-' || item[0] == '+') {
				remove = item[0] == '-';
				name++;
			}
			f = pv_feature_by_name(name);
			if (!f) {
				valid_names(names, sizeof(names));
				return hvm_set_error(
					-EINVAL,
					"--pv: unknown PV feature '%s'; valid names are host, none, %s (prefix '-' to remove)",
					name, names);
			}
			if (remove) {
				req->remove |= 1u << f->bit;
				req->add &= ~(1u << f->bit);
			} else {
				req->add |= 1u << f->bit;
				req->remove &= ~(1u << f->bit);
			}
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return check_needs(spec, req);
}

void pv_resolve(const struct pv_request *req, const struct pv_host *host,
		struct pv_resolved *out)
{
	uint32_t known = 0, want;
	uint32_t unhalt = 1u << KVM_FEATURE_PV_UNHALT;

	for (size_t i = 0; i < pv_nr_features; i++)
		known |= 1u << pv_features[i].bit;
	want = ((req->from_host ? host->supported & known : 0) | req->add) &
	       ~req->remove;

	*out = (struct pv_resolved){ 0 };
	if (host->arch) {
		out->ignored_arch = want & ~pv_arch_mask(host->arch);
		want &= ~out->ignored_arch;
	}
	out->masked_unsupported = want & ~host->supported;
	want &= host->supported;
	if (!host->hypercalls_work) {
		out->masked_hypercall = want & pv_hypercall_mask();
		want &= ~pv_hypercall_mask();
	}
	if (host->hlt_exits_disabled) {
		/* KVM itself drops PV_UNHALT then: a kick cannot wake hlt. */
		out->masked_hlt = want & unhalt;
		want &= ~unhalt;
	}
	for (size_t i = 0; i < pv_nr_features; i++) {
		uint32_t bit = 1u << pv_features[i].bit;

		if ((want & bit) && (pv_features[i].needs & ~want)) {
			out->masked_needs |= bit;
			want &= ~bit;
		}
	}
	out->enabled = want;
}

char *pv_format(uint32_t bits, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < pv_nr_features; i++) {
		int n;

		if (!(bits & (1u << pv_features[i].bit)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
			     pv_features[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}
