/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hintvm's one copy of the UAPI of the KVM patch series in kernel/patches/,
 * for building against stock kernel headers. Every definition is guarded, so
 * headers of a kernel that carries the series win. The numbers are exactly
 * those of the series; they are placeholders past upstream's last, not
 * upstream's, so a kernel may give them other meanings: probe every feature
 * (KVM_CHECK_EXTENSION, KVM_HAS_DEVICE_ATTR) and check the answer before use
 * (kernel/README, "How a VMM uses the series").
 *
 * The first part is guest ABI (hypercall numbers) and needs no kernel
 * header, so that the freestanding test kernel in guest-firmware/ shares it.
 */
#ifndef HVM_ABI_KVM_HINT_UAPI_H
#define HVM_ABI_KVM_HINT_UAPI_H

/*
 * arm64 guest ABI. KVM vendor hypervisor functions 64 and up are reported in
 * R2 of the FEATURES call, bit n for function 64 + n, and enabled per VM by
 * bit n of the firmware pseudo-register KVM_REG_ARM_VENDOR_HYP_BMAP_2
 * (upstream's rule; 64 and 65 are upstream's implementation discovery).
 *   66  PV_VCPU_STATE  returns the IPA of the vCPU's 64-byte vCPU-state
 *                      structure (bit 0 of its first __le64: preempted), or
 *                      NOT_SUPPORTED when the VMM gave the vCPU none
 *   67  PV_TLB_FLUSH   R1 = target MPIDR, R2 = 0: 0 deferred, 1 target
 *                      running (flush it yourself), -3 bad argument
 */
#define HVM_KVM_FUNC_PV_VCPU_STATE 66
#define HVM_KVM_FUNC_PV_TLB_FLUSH 67
#define HVM_KVM_VENDOR_HYP_BMAP_2_BIT(func) ((func)-64)
#define HVM_PV_VCPU_STATE_SIZE 64
#define HVM_PV_VCPU_STATE_PREEMPTED (1u << 0)

#if __STDC_HOSTED__
#include <linux/ioctl.h>
#include <linux/kvm.h>
#include <linux/types.h>

/*
 * KVM_ENABLE_CAP(KVM_CAP_HALT_POLL) on a vCPU fd: args[0] = that vCPU's
 * maximum halt-poll time in ns (32 bits), overriding the VM's; with flags =
 * KVM_HALT_POLL_FLAG_INHERIT (and args[0] = 0) the vCPU follows the VM
 * again. KVM_CAP_HALT_POLL_VCPU (series A) says whether vCPU fds accept it.
 */
#ifndef KVM_CAP_HALT_POLL_VCPU
#define KVM_CAP_HALT_POLL_VCPU 256
#endif
#ifndef KVM_HALT_POLL_FLAG_INHERIT
#define KVM_HALT_POLL_FLAG_INHERIT (1 << 0)
#endif

/*
 * 257 was v2's KVM_CAP_SPIN_POLICY (NO_BOOST), dropped from series C in v3:
 * a PLE window of 0 (x86) or WFE not trapped (arm64) does what it did. The
 * number is not reused, so that no hintvm mistakes a newer kernel's answer.
 */

/*
 * vCPU ioctl (series C), issued on vCPU i's fd by the thread that runs vCPU
 * i: yield to the task running the vCPU whose KVM_CREATE_VCPU id is vcpu_id.
 * Returns 1 when the scheduler accepted the yield (not: the target ran), 0
 * when it did not; -1 with EAGAIN within 100 us of this vCPU's previous
 * call, ESRCH when nothing else is runnable, EINVAL for a bad id or flags.
 */
#ifndef KVM_CAP_YIELD_TO_VCPU
#define KVM_CAP_YIELD_TO_VCPU 258
#endif
#ifndef KVM_YIELD_TO_VCPU
struct kvm_yield_to_vcpu {
	__u32 vcpu_id;
	__u32 flags;
};
#define KVM_YIELD_TO_VCPU _IOW(KVMIO, 0xf0, struct kvm_yield_to_vcpu)
#endif

/*
 * x86 VM attributes (series C): the VM's Pause-Loop Exiting window, grow,
 * shrink and max, overriding kvm_intel.ple_window* / kvm_amd.
 * pause_filter_count* for this VM at run time. Value: a __u64 at
 * kvm_device_attr.addr; HVM_KVM_PLE_DEFAULT follows the module parameter
 * (what a new VM reads), a window of 0 turns PAUSE exits off.
 */
#define HVM_KVM_X86_GRP_PLE 2
#define HVM_KVM_X86_PLE_WINDOW 0
#define HVM_KVM_X86_PLE_WINDOW_GROW 1
#define HVM_KVM_X86_PLE_WINDOW_SHRINK 2
#define HVM_KVM_X86_PLE_WINDOW_MAX 3
#define HVM_KVM_X86_PLE_DEFAULT ((__u64)-1)

/*
 * arm64 VM attributes (series C): the VM's WFI / WFE trap policy, overriding
 * kvm-arm.wfi_trap_policy / wfe_trap_policy. Value: a __u64 at
 * kvm_device_attr.addr, one of HVM_KVM_ARM_WFX_*; DEFAULT (0) follows the
 * host's policy and is what a new VM reads.
 */
#define HVM_KVM_ARM_VM_WFX_CTRL 1
#define HVM_KVM_ARM_VM_WFX_WFI 0
#define HVM_KVM_ARM_VM_WFX_WFE 1
#define HVM_KVM_ARM_WFX_DEFAULT 0
#define HVM_KVM_ARM_WFX_TRAP 1
#define HVM_KVM_ARM_WFX_NOTRAP 2
#define HVM_KVM_ARM_WFX_NOTRAP_SINGLE_TASK 3

/*
 * arm64 vCPU attribute (series B): where the VMM put the vCPU's vCPU-state
 * structure (64 bytes, 64-byte aligned, in guest memory), once per vCPU.
 */
#define HVM_KVM_ARM_VCPU_PV_STATE_CTRL 3
#define HVM_KVM_ARM_VCPU_PV_STATE_IPA 0

/*
 * arm64 firmware pseudo-register with the bits of vendor hypervisor
 * functions 64-127 (upstream since 6.15; on 6.12 a stand-in patch of the
 * series). KVM_REG_ARM_FW_FEAT_BMAP_REG(3), spelt out for headers without
 * it.
 */
#if defined(__aarch64__) && !defined(KVM_REG_ARM_VENDOR_HYP_BMAP_2)
#define KVM_REG_ARM_VENDOR_HYP_BMAP_2 \
	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_FW_FEAT_BMAP | 3)
#endif

/* Names of the series' per-vCPU binary statistics (KVM_GET_STATS_FD). */
#define HVM_KVM_STAT_USER_YIELD_ATTEMPTED "user_yield_attempted"
#define HVM_KVM_STAT_USER_YIELD_SUCCESSFUL "user_yield_successful"
#define HVM_KVM_STAT_USER_YIELD_LIMITED "user_yield_limited"

#endif /* __STDC_HOSTED__ */

#endif /* HVM_ABI_KVM_HINT_UAPI_H */
