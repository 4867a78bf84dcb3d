/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The KVM paravirt feature bit numbers (CPUID 0x40000001 EAX). On x86 they
 * come from the UAPI header; other architectures' builds still parse the
 * names (option files stay portable), so they get the same numbers here,
 * copied from arch/x86/include/uapi/asm/kvm_para.h.
 */
#ifndef HVM_ABI_KVM_PARA_BITS_H
#define HVM_ABI_KVM_PARA_BITS_H

#if defined(__x86_64__)
#include <asm/kvm_para.h>
#else
#define KVM_FEATURE_CLOCKSOURCE 0
#define KVM_FEATURE_NOP_IO_DELAY 1
#define KVM_FEATURE_MMU_OP 2
#define KVM_FEATURE_CLOCKSOURCE2 3
#define KVM_FEATURE_ASYNC_PF 4
#define KVM_FEATURE_STEAL_TIME 5
#define KVM_FEATURE_PV_EOI 6
#define KVM_FEATURE_PV_UNHALT 7
#define KVM_FEATURE_PV_TLB_FLUSH 9
#define KVM_FEATURE_ASYNC_PF_VMEXIT 10
#define KVM_FEATURE_PV_SEND_IPI 11
#define KVM_FEATURE_POLL_CONTROL 12
#define KVM_FEATURE_PV_SCHED_YIELD 13
#define KVM_FEATURE_ASYNC_PF_INT 14
#define KVM_FEATURE_MSI_EXT_DEST_ID 15
#define KVM_FEATURE_HC_MAP_GPA_RANGE 16
#define KVM_FEATURE_MIGRATION_CONTROL 17
#define KVM_FEATURE_CLOCKSOURCE_STABLE_BIT 24
#endif

#endif
