/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The optional KVM patch series (kernel/, UAPI in kvm_hint_uapi.h): per-VM
 * controls of hardware-detected spinning (x86 PLE window, arm64 WFx trap
 * policy), a userspace-directed yield from one vCPU to
 * another, and per-vCPU halt-poll limits. Probed on the VM and used where
 * present; on stock KVM every call here is a no-op that reports "not
 * available" and the brain falls back to what stock KVM offers (nice-based
 * boosts, sched_yield). --stats says which path ran.
 */
#ifndef HVM_SCHED_KERNEL_HINTS_H
#define HVM_SCHED_KERNEL_HINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/policy.h"

/*
 * --kvm-control: the series' per-VM controls set by hand, once, when the VM
 * is created (kernel/bench compares them on and off). Until the brain
 * drives them, this is the only way hintvm sets the WFx policy; a PLE
 * window set here is no longer changed by the brain.
 */
struct kernel_controls {
	bool set_ple_window;
	uint32_t ple_window; /* x86: 0 = no PAUSE exits */
	bool set_wfi, set_wfe;
	uint8_t wfi, wfe; /* arm64: HVM_KVM_ARM_WFX_* */
	bool no_yield; /* do not use KVM_YIELD_TO_VCPU */
};

/*
 * Parse "ple-window=N|default,wfi=POLICY,wfe=POLICY,yield=on|off"
 * (POLICY: default, trap, notrap, single-task) into OUT. 0 or -EINVAL
 * (hvm_set_error, naming NAME). "spin-policy" (v2's KVM_CAP_SPIN_POLICY,
 * dropped from the series) is refused with a pointer to what replaces it.
 */
int kernel_controls_parse(const char *name, const char *value,
			  struct kernel_controls *out);

struct kernel_hints {
	bool ple_user; /* --kvm-control set the PLE window: keep it */
	bool ple_control; /* x86: the VM's PLE window attributes */
	bool wfx_control; /* arm64: the VM's WFI/WFE trap attributes */
	bool yield_to; /* KVM_YIELD_TO_VCPU */
	bool halt_poll_vcpu; /* KVM_CAP_HALT_POLL on vCPU fds */
};

void kernel_hints_probe(int vm_fd, struct kernel_hints *kh);

/*
 * Set what CTL asks for on the VM; a control this kernel lacks is an error
 * (hvm_set_error). 0 or negative errno.
 */
int kernel_hints_apply(int vm_fd, struct kernel_hints *kh,
		       const struct kernel_controls *ctl);

/* "stock KVM" or the list of patch features in use. */
const char *kernel_hints_describe(const struct kernel_hints *kh, char *buf,
				  size_t len);

/*
 * On vCPU thread FROM: yield to vCPU TARGET's task. Returns 1 (the
 * scheduler accepted the yield), 0 (target running or not runnable),
 * -EAGAIN (rate-limited), -EOPNOTSUPP or -errno.
 */
int kernel_hints_yield_to(int vcpu_fd, const struct kernel_hints *kh,
			  unsigned int target);

/*
 * Per-vCPU halt-poll limit (series A) on VCPU_FD: NS, or follow the VM's
 * value again (inherit). 0, -EOPNOTSUPP or -errno.
 */
int kernel_hints_set_vcpu_halt_poll(int vcpu_fd, const struct kernel_hints *kh,
				    uint32_t ns);
int kernel_hints_inherit_vcpu_halt_poll(int vcpu_fd,
					const struct kernel_hints *kh);

/*
 * The VM's PLE window (series C, x86): set WINDOW (POLICY_PLE_DEFAULT:
 * the module's), or read back what KVM reports. 0, -EOPNOTSUPP (no
 * control, or --kvm-control set it by hand) or -errno.
 */
int kernel_hints_set_ple(int vm_fd, const struct kernel_hints *kh,
			 uint32_t window);
int kernel_hints_get_ple(int vm_fd, const struct kernel_hints *kh,
			 uint64_t *window);

#endif
