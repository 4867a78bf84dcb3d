/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --pv on arm64: which names mean what, as pure functions of what KVM
 * reports (unit-tested without KVM).
 *
 *   steal-time  PV time records (DEN0057A; KVM_CAP_STEAL_TIME and
 *               KVM_ARM_VCPU_PVTIME_CTRL)
 *   preempted   the vCPU-state structure with the preempted flag: bit 2
 *               of the firmware pseudo-register KVM_REG_ARM_VENDOR_HYP_BMAP_2
 *               (KVM vendor hypervisor function 66; kernel/ series B);
 *               hintvm places the structures in the PV time memslot, so
 *               it goes with steal-time
 *   tlb-flush   the deferred TLB-flush hypercall: bit 3 of the same
 *               register (function 67; kernel/ series C)
 *
 * KVM reports the bitmap's default (every bit it implements set) and takes
 * a subset back before the VM first runs; a stock kernel has neither bit
 * (nor, before 6.15, the register), so only bits KVM reported are ever
 * cleared and none is ever set.
 */
#ifndef HVM_ARCH_ARM64_PV_ARM64_H
#define HVM_ARCH_ARM64_PV_ARM64_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/kvm_hint_uapi.h"

/* KVM_REG_ARM_VENDOR_HYP_BMAP_2 bits, bit n for vendor function 64 + n. */
#define ARM64_VENDOR_HYP_BIT_PV_PREEMPTED \
	HVM_KVM_VENDOR_HYP_BMAP_2_BIT(HVM_KVM_FUNC_PV_VCPU_STATE)
#define ARM64_VENDOR_HYP_BIT_PV_TLB_FLUSH \
	HVM_KVM_VENDOR_HYP_BMAP_2_BIT(HVM_KVM_FUNC_PV_TLB_FLUSH)

/*
 * The KVM_REG_ARM_VENDOR_HYP_BMAP_2 bits of the features --pv controls (to
 * probe: v3 of the series resets them to 0, the VMM opts in).
 */
uint64_t arm64_pv_vendor_bits(void);

/*
 * The --pv bits this host can offer: steal-time with PV_TIME, preempted
 * and tlb-flush when VENDOR_BMAP (as KVM reported it) has their bits.
 */
uint32_t arm64_pv_supported(bool pv_time, uint64_t vendor_bmap);

/*
 * The vendor hypervisor bitmap to write back: REPORTED without the bits of
 * the features ENABLED (--pv bits) leaves out. Bits of other services (and
 * ones hintvm does not know) stay as KVM reported them.
 */
uint64_t arm64_pv_vendor_bmap(uint64_t reported, uint32_t enabled);

#endif
