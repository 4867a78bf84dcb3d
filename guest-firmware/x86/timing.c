/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "timing.h"

#include "x86.h"

#define ASSUMED_TSC_KHZ 5000000
#define CPUID_HYPERVISOR_BIT (1u << 31)
#define HV_LEAF_BASE 0x40000000
#define HV_LEAF_TIMING 0x40000010 /* EAX = TSC kHz (VMware/KVM/QEMU) */

static uint64_t khz = ASSUMED_TSC_KHZ;
static bool known;

void timing_init(void)
{
	struct cpuid_regs basic = cpuid(0, 0);

	if (cpuid(1, 0).ecx & CPUID_HYPERVISOR_BIT &&
	    cpuid(HV_LEAF_BASE, 0).eax >= HV_LEAF_TIMING) {
		uint32_t hv_khz = cpuid(HV_LEAF_TIMING, 0).eax;

		if (hv_khz) {
			khz = hv_khz;
			known = true;
			return;
		}
	}
	if (basic.eax >= 0x15) {
		struct cpuid_regs r = cpuid(0x15, 0);

		if (r.eax && r.ebx && r.ecx) {
			khz = (uint64_t)r.ecx * r.ebx / r.eax / 1000;
			known = true;
			return;
		}
	}
	if (basic.eax >= 0x16) {
		uint32_t mhz = cpuid(0x16, 0).eax & 0xffff;

		if (mhz) {
			khz = (uint64_t)mhz * 1000;
			known = true;
		}
	}
}

uint64_t tsc_khz(void)
{
	return khz;
}

bool tsc_khz_known(void)
{
	return known;
}

uint64_t ms_to_tsc(uint64_t ms)
{
	return ms * khz;
}

uint64_t tsc_to_us(uint64_t ticks)
{
	return ticks * 1000 / khz;
}
