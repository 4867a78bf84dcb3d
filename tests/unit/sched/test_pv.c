// SPDX-License-Identifier: LGPL-2.1-or-later
/* The --pv feature table, its parser and the host-dependent masking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "abi/kvm_para_bits.h"

#include "base/log.h"
#include "sched/pv.h"

#define BIT(n) (1u << (n))

/* What the development hosts report: 0x01007efb. */
#define DEV_HOST_SUPPORTED 0x01007efbu

static void test_table_matches_uapi_bits(void **state)
{
	struct {
		const char *name;
		unsigned int bit;
		bool hypercall;
	} rows[] = {
		{ "clocksource", KVM_FEATURE_CLOCKSOURCE, false },
		{ "nop-io-delay", KVM_FEATURE_NOP_IO_DELAY, false },
		{ "mmu-op", KVM_FEATURE_MMU_OP, false },
		{ "clocksource2", KVM_FEATURE_CLOCKSOURCE2, false },
		{ "async-pf", KVM_FEATURE_ASYNC_PF, false },
		{ "steal-time", KVM_FEATURE_STEAL_TIME, false },
		{ "eoi", KVM_FEATURE_PV_EOI, false },
		{ "unhalt", KVM_FEATURE_PV_UNHALT, true },
		{ "tlb-flush", KVM_FEATURE_PV_TLB_FLUSH, false },
		{ "async-pf-vmexit", KVM_FEATURE_ASYNC_PF_VMEXIT, false },
		{ "send-ipi", KVM_FEATURE_PV_SEND_IPI, true },
		{ "poll-control", KVM_FEATURE_POLL_CONTROL, false },
		{ "sched-yield", KVM_FEATURE_PV_SCHED_YIELD, true },
		{ "async-pf-int", KVM_FEATURE_ASYNC_PF_INT, false },
		{ "msi-ext-dest-id", KVM_FEATURE_MSI_EXT_DEST_ID, false },
		{ "map-gpa-range", KVM_FEATURE_HC_MAP_GPA_RANGE, true },
		{ "migration-control", KVM_FEATURE_MIGRATION_CONTROL, false },
		{ "stable-bit", KVM_FEATURE_CLOCKSOURCE_STABLE_BIT, false },
		{ "preempted", PV_BIT_PREEMPTED, false },
	};

	assert_int_equal(pv_nr_features, sizeof(rows) / sizeof(rows[0]));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct pv_feature *f = pv_feature_by_name(rows[i].name);

		assert_non_null(f);
		assert_int_equal(f->bit, rows[i].bit);
		assert_int_equal(f->hypercall, rows[i].hypercall);
	}
	assert_int_equal(pv_hypercall_mask(),
			 BIT(KVM_FEATURE_PV_UNHALT) |
				 BIT(KVM_FEATURE_PV_SEND_IPI) |
				 BIT(KVM_FEATURE_PV_SCHED_YIELD) |
				 BIT(KVM_FEATURE_HC_MAP_GPA_RANGE));
	/* tlb-flush works through the steal-time page, not a hypercall. */
	assert_false(pv_feature_by_name("tlb-flush")->hypercall);
}

static void test_parse_forms(void **state)
{
	struct pv_request r;

	assert_int_equal(pv_parse("host", &r), 0);
	assert_true(r.from_host);
	assert_int_equal(r.add, 0);
	assert_int_equal(pv_parse("none", &r), 0);
	assert_false(r.from_host);
	assert_int_equal(r.add | r.remove, 0);

	assert_int_equal(pv_parse("steal-time,tlb-flush", &r), 0);
	assert_false(r.from_host);
	assert_int_equal(r.add, BIT(KVM_FEATURE_STEAL_TIME) |
					BIT(KVM_FEATURE_PV_TLB_FLUSH));

	assert_int_equal(pv_parse("host,-steal-time,-eoi", &r), 0);
	assert_true(r.from_host);
	assert_int_equal(r.remove,
			 BIT(KVM_FEATURE_STEAL_TIME) | BIT(KVM_FEATURE_PV_EOI));

	/* Left to right: a later item wins. */
	assert_int_equal(pv_parse("none,eoi,-eoi,+steal-time", &r), 0);
	assert_int_equal(r.add, BIT(KVM_FEATURE_STEAL_TIME));
	assert_int_equal(r.remove, BIT(KVM_FEATURE_PV_EOI));
	assert_int_equal(pv_parse("host,-eoi,eoi", &r), 0);
	assert_int_equal(r.remove, 0);
}

static void test_parse_errors(void **state)
{
	struct pv_request r;

	assert_int_equal(pv_parse("steal-time,bogus", &r), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "'bogus'"));
	/* The message lists what would have been valid. */
	assert_non_null(strstr(hvm_error_message(), "tlb-flush"));
	assert_non_null(strstr(hvm_error_message(), "sched-yield"));

	assert_int_equal(pv_parse("", &r), -EINVAL);
	assert_int_equal(pv_parse(NULL, &r), -EINVAL);
	assert_int_equal(pv_parse("eoi,,steal-time", &r), -EINVAL);
	assert_int_equal(pv_parse("eoi,", &r), -EINVAL);
	assert_int_equal(pv_parse("-", &r), -EINVAL);
	assert_int_equal(pv_parse("eoi,host", &r), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "must come first"));
	assert_int_equal(pv_parse("STEAL-TIME", &r), -EINVAL);
	assert_int_equal(
		pv_parse(
			"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			&r),
		-EINVAL);
}

static void test_resolve_host_on_dev_host(void **state)
{
	struct pv_request r;
	struct pv_resolved out;
	struct pv_host host = { .supported = DEV_HOST_SUPPORTED,
				.hypercalls_work = false };

	assert_int_equal(pv_parse("host", &r), 0);
	pv_resolve(&r, &host, &out);
	/* No hypercalls here: unhalt, send-ipi and sched-yield go. */
	assert_int_equal(out.enabled,
			 DEV_HOST_SUPPORTED &
				 ~(BIT(KVM_FEATURE_PV_UNHALT) |
				   BIT(KVM_FEATURE_PV_SEND_IPI) |
				   BIT(KVM_FEATURE_PV_SCHED_YIELD)));
	assert_int_equal(out.masked_hypercall,
			 BIT(KVM_FEATURE_PV_UNHALT) |
				 BIT(KVM_FEATURE_PV_SEND_IPI) |
				 BIT(KVM_FEATURE_PV_SCHED_YIELD));
	assert_int_equal(out.masked_unsupported, 0);
	assert_true(out.enabled & BIT(KVM_FEATURE_PV_TLB_FLUSH));
	assert_true(out.enabled & BIT(KVM_FEATURE_STEAL_TIME));

	host.hypercalls_work = true;
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, DEV_HOST_SUPPORTED);
	assert_int_equal(out.masked_hypercall, 0);
}

static void test_resolve_none_and_explicit(void **state)
{
	struct pv_request r;
	struct pv_resolved out;
	struct pv_host host = { .supported = DEV_HOST_SUPPORTED,
				.hypercalls_work = true };

	assert_int_equal(pv_parse("none", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, 0);

	/* Asking for what KVM does not offer: masked and reported. */
	assert_int_equal(pv_parse("msi-ext-dest-id,steal-time,mmu-op", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, BIT(KVM_FEATURE_STEAL_TIME));
	assert_int_equal(out.masked_unsupported,
			 BIT(KVM_FEATURE_MSI_EXT_DEST_ID) |
				 BIT(KVM_FEATURE_MMU_OP));

	/* HLT exits disabled: KVM cannot kick a halted vCPU. */
	host.hlt_exits_disabled = true;
	assert_int_equal(pv_parse("host,-sched-yield", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_false(out.enabled & BIT(KVM_FEATURE_PV_UNHALT));
	assert_false(out.enabled & BIT(KVM_FEATURE_PV_SCHED_YIELD));
	assert_int_equal(out.masked_hlt, BIT(KVM_FEATURE_PV_UNHALT));
	assert_true(out.enabled & BIT(KVM_FEATURE_PV_SEND_IPI));
}

static void test_resolve_ignores_unknown_host_bits(void **state)
{
	struct pv_request r;
	struct pv_resolved out;
	/* A future kernel's bit 20 is not passed on blindly by "host". */
	struct pv_host host = { .supported = BIT(20) | BIT(5),
				.hypercalls_work = true };

	assert_int_equal(pv_parse("host", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, BIT(5));
}

static void test_format(void **state)
{
	char buf[256], tiny[12];

	assert_string_equal(pv_format(0, buf, sizeof(buf)), "none");
	assert_string_equal(pv_format(BIT(KVM_FEATURE_STEAL_TIME) |
					      BIT(KVM_FEATURE_PV_TLB_FLUSH),
				      buf, sizeof(buf)),
			    "steal-time,tlb-flush");
	pv_format(DEV_HOST_SUPPORTED, tiny, sizeof(tiny));
	assert_true(strlen(tiny) < sizeof(tiny));
}

/* Which names mean something where: arm64 has three of them. */
static void test_arch_masks(void **state)
{
	uint32_t arm = BIT(KVM_FEATURE_STEAL_TIME) |
		       BIT(KVM_FEATURE_PV_TLB_FLUSH) | BIT(PV_BIT_PREEMPTED);

	assert_int_equal(pv_arch_mask(PV_ARCH_ARM64), arm);
	assert_false(pv_arch_mask(PV_ARCH_X86) & BIT(PV_BIT_PREEMPTED));
	assert_true(pv_arch_mask(PV_ARCH_X86) & BIT(KVM_FEATURE_STEAL_TIME));
	assert_true(pv_arch_mask(PV_ARCH_X86) & BIT(KVM_FEATURE_PV_TLB_FLUSH));
	/* The pseudo bit is not one KVM's x86 CPUID leaf uses. */
	assert_false(DEV_HOST_SUPPORTED & BIT(PV_BIT_PREEMPTED));
	assert_int_equal(pv_feature_by_name("preempted")->needs,
			 BIT(KVM_FEATURE_STEAL_TIME));
}

/* Names without a meaning on the host's arch are dropped, not "masked". */
static void test_resolve_ignores_other_arch(void **state)
{
	struct pv_request r;
	struct pv_resolved out;
	struct pv_host host = { .arch = PV_ARCH_X86,
				.supported = DEV_HOST_SUPPORTED,
				.hypercalls_work = true };

	assert_int_equal(pv_parse("host,preempted", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.ignored_arch, BIT(PV_BIT_PREEMPTED));
	assert_int_equal(out.masked_unsupported, 0);
	assert_int_equal(out.enabled, DEV_HOST_SUPPORTED);

	host = (struct pv_host){ .arch = PV_ARCH_ARM64,
				 .supported = BIT(KVM_FEATURE_STEAL_TIME),
				 .hypercalls_work = true };
	assert_int_equal(pv_parse("steal-time,eoi,tlb-flush", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.ignored_arch, BIT(KVM_FEATURE_PV_EOI));
	/* tlb-flush means something on arm64, this host lacks it. */
	assert_int_equal(out.masked_unsupported, BIT(KVM_FEATURE_PV_TLB_FLUSH));
	assert_int_equal(out.enabled, BIT(KVM_FEATURE_STEAL_TIME));
}

/* preempted lives in the steal-time record: a list without it is refused. */
static void test_parse_needs(void **state)
{
	struct pv_request r;

	assert_int_equal(pv_parse("none,preempted", &r), -EINVAL);
	assert_non_null(
		strstr(hvm_error_message(), "preempted needs steal-time"));
	assert_int_equal(pv_parse("preempted", &r), -EINVAL);
	assert_int_equal(pv_parse("host,-steal-time,preempted", &r), -EINVAL);
	assert_int_equal(pv_parse("preempted,steal-time,-steal-time", &r),
			 -EINVAL);

	assert_int_equal(pv_parse("preempted,steal-time", &r), 0);
	assert_int_equal(r.add,
			 BIT(PV_BIT_PREEMPTED) | BIT(KVM_FEATURE_STEAL_TIME));
	assert_int_equal(pv_parse("host,preempted", &r), 0);
	/* Leaving preempted out alone, or with its record, is fine. */
	assert_int_equal(pv_parse("host,-preempted", &r), 0);
	assert_int_equal(pv_parse("host,-steal-time,-preempted", &r), 0);
	assert_int_equal(pv_parse("host,-steal-time", &r), 0);
}

/* The arm64 host set: PV time, the series' two vendor-hyp bits. */
static void test_resolve_needs(void **state)
{
	uint32_t arm = BIT(KVM_FEATURE_STEAL_TIME) |
		       BIT(KVM_FEATURE_PV_TLB_FLUSH) | BIT(PV_BIT_PREEMPTED);
	struct pv_host host = { .supported = arm, .hypercalls_work = true };
	struct pv_request r;
	struct pv_resolved out;

	assert_int_equal(pv_parse("host", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, arm);
	assert_int_equal(out.masked_needs, 0);

	/* Without steal time, the flag has no record to live in. */
	assert_int_equal(pv_parse("host,-steal-time", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, BIT(KVM_FEATURE_PV_TLB_FLUSH));
	assert_int_equal(out.masked_needs, BIT(PV_BIT_PREEMPTED));

	/* A host with the series but no PV time: the same, and reported. */
	host.supported = arm & ~BIT(KVM_FEATURE_STEAL_TIME);
	assert_int_equal(pv_parse("steal-time,preempted", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, 0);
	assert_int_equal(out.masked_unsupported, BIT(KVM_FEATURE_STEAL_TIME));
	assert_int_equal(out.masked_needs, BIT(PV_BIT_PREEMPTED));

	/* A stock kernel: only steal time. */
	host.supported = BIT(KVM_FEATURE_STEAL_TIME);
	assert_int_equal(pv_parse("host", &r), 0);
	pv_resolve(&r, &host, &out);
	assert_int_equal(out.enabled, BIT(KVM_FEATURE_STEAL_TIME));
	assert_int_equal(out.masked_unsupported, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_uapi_bits),
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_resolve_host_on_dev_host),
		cmocka_unit_test(test_resolve_none_and_explicit),
		cmocka_unit_test(test_resolve_ignores_unknown_host_bits),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_arch_masks),
		cmocka_unit_test(test_parse_needs),
		cmocka_unit_test(test_resolve_ignores_other_arch),
		cmocka_unit_test(test_resolve_needs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
