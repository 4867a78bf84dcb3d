// SPDX-License-Identifier: LGPL-2.1-or-later
#include "abi/kvm_para_bits.h"
#include "arch/arm64/pv_arm64.h"
#include "sched/pv.h"

/* --pv bit -> KVM_REG_ARM_VENDOR_HYP_BMAP_2 bit, for the ones it controls. */
static const struct {
	unsigned int pv_bit;
	unsigned int vendor_bit;
} vendor_map[] = {
	{ PV_BIT_PREEMPTED, ARM64_VENDOR_HYP_BIT_PV_PREEMPTED },
	{ KVM_FEATURE_PV_TLB_FLUSH, ARM64_VENDOR_HYP_BIT_PV_TLB_FLUSH },
};

#define VENDOR_MAP_LEN (sizeof(vendor_map) / sizeof(vendor_map[0]))

uint64_t arm64_pv_vendor_bits(void)
{
	uint64_t bits = 0;

	for (unsigned int i = 0; i < VENDOR_MAP_LEN; i++)
		bits |= 1ULL << vendor_map[i].vendor_bit;
	return bits;
}

uint32_t arm64_pv_supported(bool pv_time, uint64_t vendor_bmap)
{
	uint32_t bits = pv_time ? 1u << KVM_FEATURE_STEAL_TIME : 0;

	for (unsigned int i = 0; i < VENDOR_MAP_LEN; i++)
		if (vendor_bmap & (1ULL << vendor_map[i].vendor_bit))
			bits |= 1u << vendor_map[i].pv_bit;
	return bits;
}

uint64_t arm64_pv_vendor_bmap(uint64_t reported, uint32_t enabled)
{
	uint64_t bmap = reported;

	for (unsigned int i = 0; i < VENDOR_MAP_LEN; i++)
		if (!(enabled & (1u << vendor_map[i].pv_bit)))
			bmap &= ~(1ULL << vendor_map[i].vendor_bit);
	return bmap;
}
