/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UAPI of hintvm's KVM patch series (kernel/patches/), for building against
 * stock <linux/kvm.h>. Every definition is guarded, so headers of a kernel
 * that carries the series win. The numbers are exactly those of the series;
 * they are not upstream and may collide with later upstream ones, so probe
 * each capability with KVM_CHECK_EXTENSION before use (kernel/README, "How a
 * VMM uses the series").
 */
#ifndef HVM_SCHED_KVM_HINT_UAPI_H
#define HVM_SCHED_KVM_HINT_UAPI_H

#include <linux/ioctl.h>
#include <linux/kvm.h>
#include <linux/types.h>

/*
 * VM capability. KVM_CHECK_EXTENSION returns a bitmap of the supported
 * hints (bit n = hint n); KVM_ENABLE_CAP on the VM with args[0] = hint,
 * flags = 0, at any time. Unknown hints: -EINVAL.
 */
#ifndef KVM_CAP_VCPU_COMMIT_HINT
#define KVM_CAP_VCPU_COMMIT_HINT 239
#endif
#ifndef KVM_COMMIT_HINT_BALANCED
#define KVM_COMMIT_HINT_BALANCED 0
#endif
#ifndef KVM_COMMIT_HINT_UNDERCOMMITTED
#define KVM_COMMIT_HINT_UNDERCOMMITTED 1
#endif
#ifndef KVM_COMMIT_HINT_OVERCOMMITTED
#define KVM_COMMIT_HINT_OVERCOMMITTED 2
#endif

/*
 * vCPU ioctl, issued on vCPU i's fd by the thread that runs vCPU i: yield to
 * the task running the vCPU whose KVM_CREATE_VCPU id is vcpu_id. Returns 1
 * yielded, 0 not yielded (target running or not runnable), -1/ESRCH nothing
 * to yield to, -1/EINVAL bad id (not another vCPU of this VM) or flags.
 */
#ifndef KVM_CAP_YIELD_TO_VCPU
#define KVM_CAP_YIELD_TO_VCPU 240
#endif
#ifndef KVM_YIELD_TO_VCPU
struct kvm_yield_to_vcpu {
	__u32 vcpu_id;
	__u32 flags;
};
#define KVM_YIELD_TO_VCPU _IOW(KVMIO, 0xd6, struct kvm_yield_to_vcpu)
#endif

/*
 * KVM_ENABLE_CAP(KVM_CAP_HALT_POLL) on a vCPU fd: args[0] = that vCPU's
 * maximum halt-poll time in ns (32 bits), overriding the VM's value; with
 * flags = KVM_HALT_POLL_FLAG_INHERIT (and args[0] = 0) the vCPU follows the
 * VM again. KVM_CAP_HALT_POLL_VCPU says whether vCPU fds accept it.
 */
#ifndef KVM_CAP_HALT_POLL_VCPU
#define KVM_CAP_HALT_POLL_VCPU 241
#endif
#ifndef KVM_HALT_POLL_FLAG_INHERIT
#define KVM_HALT_POLL_FLAG_INHERIT (1 << 0)
#endif

/*
 * arm64: bit of KVM_REG_ARM_VENDOR_HYP_BMAP (an enum in the UAPI, hence a
 * name of our own) for the PV-time preempted flag. On by default when PV time
 * is set up; a VMM clears it before the first KVM_RUN to hide the feature,
 * e.g. for migration to a host without it.
 */
#define HVM_KVM_REG_ARM_VENDOR_HYP_BIT_PV_PREEMPTED 2

/* Names of the series' per-vCPU binary statistics (KVM_GET_STATS_FD). */
#define HVM_KVM_STAT_SPIN_LOOP_BAILOUT "spin_loop_bailout"
#define HVM_KVM_STAT_SPIN_LOOP_YIELD_OTHER "spin_loop_yield_other"
#define HVM_KVM_STAT_USER_YIELD_ATTEMPTED "user_yield_attempted"
#define HVM_KVM_STAT_USER_YIELD_SUCCESSFUL "user_yield_successful"

#endif /* HVM_SCHED_KVM_HINT_UAPI_H */
