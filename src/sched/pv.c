// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "sched/kvm_para_bits.h"
#include "sched/pv.h"

const struct pv_feature pv_features[] = {
	{ "clocksource", KVM_FEATURE_CLOCKSOURCE, false,
	  "kvm-clock at the legacy MSRs" },
	{ "nop-io-delay", KVM_FEATURE_NOP_IO_DELAY, false,
	  "no port 0x80 delays needed" },
	{ "mmu-op", KVM_FEATURE_MMU_OP, false,
	  "obsolete MMU hypercalls (never offered by KVM)" },
	{ "clocksource2", KVM_FEATURE_CLOCKSOURCE2, false,
	  "kvm-clock at the new MSRs" },
	{ "async-pf", KVM_FEATURE_ASYNC_PF, false, "asynchronous page faults" },
	{ "steal-time", KVM_FEATURE_STEAL_TIME, false,
	  "time the vCPU was runnable but not running" },
	{ "eoi", KVM_FEATURE_PV_EOI, false, "paravirtual end of interrupt" },
	{ "unhalt", KVM_FEATURE_PV_UNHALT, true,
	  "PV spinlocks: kick a halted vCPU (KVM_HC_KICK_CPU)" },
	{ "tlb-flush", KVM_FEATURE_PV_TLB_FLUSH, false,
	  "skip TLB-flush IPIs to preempted vCPUs" },
	{ "async-pf-vmexit", KVM_FEATURE_ASYNC_PF_VMEXIT, false,
	  "async page faults while in guest mode of a nested guest" },
	{ "send-ipi", KVM_FEATURE_PV_SEND_IPI, true,
	  "IPIs to many vCPUs in one hypercall" },
	{ "poll-control", KVM_FEATURE_POLL_CONTROL, false,
	  "guest may turn host halt polling off" },
	{ "sched-yield", KVM_FEATURE_PV_SCHED_YIELD, true,
	  "yield to the preempted target of an IPI (KVM_HC_SCHED_YIELD)" },
	{ "async-pf-int", KVM_FEATURE_ASYNC_PF_INT, false,
	  "async page fault 'page ready' as an interrupt" },
	{ "msi-ext-dest-id", KVM_FEATURE_MSI_EXT_DEST_ID, false,
	  "15-bit APIC IDs in MSI addresses" },
	{ "map-gpa-range", KVM_FEATURE_HC_MAP_GPA_RANGE, true,
	  "KVM_HC_MAP_GPA_RANGE (encrypted guests)" },
	{ "migration-control", KVM_FEATURE_MIGRATION_CONTROL, false,
	  "guest tells whether it can be migrated" },
	{ "stable-bit", KVM_FEATURE_CLOCKSOURCE_STABLE_BIT, false,
	  "kvm-clock is stable across vCPUs" },
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
			EINVAL,
			"--pv: empty value, expected host, none or a comma-separated list of PV feature names");
	for (unsigned int pos = 0;; pos++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const struct pv_feature *f;
		const char *name = item;
		bool remove = false;

		if (len == 0 || len >= sizeof(item))
			return hvm_set_error(
				EINVAL,
				"--pv '%s': empty or overlong item at position %u",
				spec, pos + 1);
		memcpy(item, p, len);
		item[len] = '\0';

		if (strcmp(item, "host") == 0 || strcmp(item, "none") == 0) {
			/* Only as the first item: they set the starting point. */
			if (pos != 0)
				return hvm_set_error(
					EINVAL,
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
					EINVAL,
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
	return 0;
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
