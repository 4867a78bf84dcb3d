// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "sched/kernel_hints.h"
#include "sched/kvm_hint_uapi.h"

/* KVM_HAS_DEVICE_ATTR on the VM: 0 when the VM has the attribute. */
static bool vm_has_attr(int vm_fd, uint32_t group, uint64_t attr)
{
	struct kvm_device_attr a = { .group = group, .attr = attr };

	return ioctl(vm_fd, KVM_HAS_DEVICE_ATTR, &a) == 0;
}

void kernel_hints_probe(int vm_fd, struct kernel_hints *kh)
{
	int r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SPIN_POLICY);

	*kh = (struct kernel_hints){ 0 };
	/* The numbers are placeholders: take only the answers the series gives. */
	kh->spin_policy = r > 0 && (r & KVM_SPIN_POLICY_NO_BOOST);
	kh->yield_to =
		ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_YIELD_TO_VCPU) == 1;
	kh->halt_poll_vcpu =
		ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_HALT_POLL_VCPU) == 1;
	/* Each group exists on one architecture only; the other says ENXIO. */
	kh->ple_control =
		vm_has_attr(vm_fd, HVM_KVM_X86_GRP_PLE, HVM_KVM_X86_PLE_WINDOW);
	kh->wfx_control = vm_has_attr(vm_fd, HVM_KVM_ARM_VM_WFX_CTRL,
				      HVM_KVM_ARM_VM_WFX_WFE);
}

const char *kernel_hints_describe(const struct kernel_hints *kh, char *buf,
				  size_t len)
{
	if (!kh->spin_policy && !kh->ple_control && !kh->wfx_control &&
	    !kh->yield_to && !kh->halt_poll_vcpu) {
		snprintf(buf, len, "stock KVM");
		return buf;
	}
	snprintf(buf, len, "kernel patch:%s%s%s%s%s",
		 kh->spin_policy ? " spin-policy" : "",
		 kh->ple_control ? " ple-control" : "",
		 kh->wfx_control ? " wfx-control" : "",
		 kh->yield_to ? " yield-to" : "",
		 kh->halt_poll_vcpu ? " vcpu-halt-poll" : "");
	return buf;
}

int kernel_hints_set_commit(int vm_fd, const struct kernel_hints *kh,
			    enum commit_state state)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPIN_POLICY,
		.args = { state == COMMIT_UNDER ? KVM_SPIN_POLICY_NO_BOOST
						: 0 },
	};

	if (!kh->spin_policy)
		return -EOPNOTSUPP;
	return ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

int kernel_hints_yield_to(int vcpu_fd, const struct kernel_hints *kh,
			  unsigned int target)
{
	struct kvm_yield_to_vcpu y = { .vcpu_id = target };
	int r;

	if (!kh->yield_to)
		return -EOPNOTSUPP;
	r = ioctl(vcpu_fd, KVM_YIELD_TO_VCPU, &y);
	return r < 0 ? -errno : r;
}
