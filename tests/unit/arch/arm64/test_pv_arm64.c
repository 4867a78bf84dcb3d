// SPDX-License-Identifier: LGPL-2.1-or-later
/* --pv on arm64: host bits -> --pv bits, --pv bits -> vendor-hyp bitmap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "abi/kvm_para_bits.h"
#include "arch/arm64/pv_arm64.h"
#include "sched/pv.h"

#define BIT(n) (1u << (n))
#define STEAL BIT(KVM_FEATURE_STEAL_TIME)
#define TLB BIT(KVM_FEATURE_PV_TLB_FLUSH)
#define PREEMPTED BIT(PV_BIT_PREEMPTED)

/*
 * KVM_REG_ARM_VENDOR_HYP_BMAP_2 as KVM offers it: nothing upstream (its bits
 * 0 and 1, implementation discovery, reset to 0); the series adds 2 (vCPU
 * state, preempted) and 3 (TLB flush), which v2 set by default and v3
 * resets to 0 (hintvm then finds them by writing each: arm64_pv_vendor_bits).
 */
#define STOCK_BMAP 0x0ULL
#define SERIES_BMAP 0xcULL

/* The bits hintvm probes and controls: exactly the series' two. */
static void test_vendor_bits(void **state)
{
	assert_int_equal(arm64_pv_vendor_bits(), SERIES_BMAP);
}

static void test_supported(void **state)
{
	assert_int_equal(arm64_pv_supported(true, SERIES_BMAP),
			 STEAL | PREEMPTED | TLB);
	assert_int_equal(arm64_pv_supported(true, STOCK_BMAP), STEAL);
	assert_int_equal(arm64_pv_supported(false, 0), 0);
	assert_int_equal(arm64_pv_supported(false, SERIES_BMAP),
			 PREEMPTED | TLB);
	assert_int_equal(arm64_pv_supported(true, 0x5), STEAL | PREEMPTED);
	assert_int_equal(arm64_pv_supported(true, 0x9), STEAL | TLB);
	/* Bits hintvm does not know mean nothing. */
	assert_int_equal(arm64_pv_supported(false, 0xfffffff0ULL), 0);
}

static void test_bmap_clears_only_what_is_left_out(void **state)
{
	assert_int_equal(
		arm64_pv_vendor_bmap(SERIES_BMAP, STEAL | PREEMPTED | TLB),
		SERIES_BMAP);
	assert_int_equal(arm64_pv_vendor_bmap(SERIES_BMAP, STEAL | TLB), 0x8);
	assert_int_equal(arm64_pv_vendor_bmap(SERIES_BMAP, STEAL | PREEMPTED),
			 0x4);
	assert_int_equal(arm64_pv_vendor_bmap(SERIES_BMAP, 0), STOCK_BMAP);
	/* Other services' and unknown bits stay as KVM reported them. */
	assert_int_equal(arm64_pv_vendor_bmap(0xf0f, 0), 0xf03);
}

static void test_bmap_never_sets_a_bit(void **state)
{
	/* A stock kernel has neither bit: nothing to write. */
	assert_int_equal(
		arm64_pv_vendor_bmap(STOCK_BMAP, STEAL | PREEMPTED | TLB),
		STOCK_BMAP);
	assert_int_equal(arm64_pv_vendor_bmap(0, ~0u), 0);
	for (uint64_t reported = 0; reported < 64; reported++)
		for (uint32_t i = 0; i < 8; i++) {
			uint32_t en = (i & 1 ? STEAL : 0) |
				      (i & 2 ? PREEMPTED : 0) |
				      (i & 4 ? TLB : 0);

			assert_int_equal(arm64_pv_vendor_bmap(reported, en) &
						 ~reported,
					 0);
		}
}

/* The whole path as arm64.c takes it, through pv_resolve(). */
static void test_request_to_bmap(void **state)
{
	struct {
		const char *spec;
		uint64_t bmap;
	} rows[] = {
		{ "host", SERIES_BMAP },
		{ "none", STOCK_BMAP },
		{ "host,-preempted", 0x8 },
		{ "host,-tlb-flush", 0x4 },
		{ "host,-preempted,-tlb-flush", STOCK_BMAP },
		{ "host,-steal-time", 0x8 }, /* preempted goes with it */
		{ "steal-time,tlb-flush", 0x8 },
		{ "steal-time,preempted", 0x4 },
		{ "host,-eoi", SERIES_BMAP }, /* x86 names change nothing */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pv_request req;
		struct pv_resolved out;
		struct pv_host host = {
			.supported = arm64_pv_supported(true, SERIES_BMAP),
			.hypercalls_work = true,
		};

		assert_int_equal(pv_parse(rows[i].spec, &req), 0);
		pv_resolve(&req, &host, &out);
		assert_int_equal(arm64_pv_vendor_bmap(SERIES_BMAP, out.enabled),
				 rows[i].bmap);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vendor_bits),
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_bmap_clears_only_what_is_left_out),
		cmocka_unit_test(test_bmap_never_sets_a_bit),
		cmocka_unit_test(test_request_to_bmap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
