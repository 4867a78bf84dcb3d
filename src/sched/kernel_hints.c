// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "sched/kernel_hints.h"
#include "sched/kvm_hint_uapi.h"

void kernel_hints_probe(int vm_fd, struct kernel_hints *kh)
{
	int r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_VCPU_COMMIT_HINT);

	*kh = (struct kernel_hints){ 0 };
	/* Only the three hints we know; bits of later ones ignored. */
	kh->commit_hints = r > 0 ? (unsigned int)r & 7u : 0;
	kh->yield_to =
		ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_YIELD_TO_VCPU) > 0;
	kh->halt_poll_vcpu =
		ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_HALT_POLL_VCPU) > 0;
}

const char *kernel_hints_describe(const struct kernel_hints *kh, char *buf,
				  size_t len)
{
	if (!kh->commit_hints && !kh->yield_to && !kh->halt_poll_vcpu) {
		snprintf(buf, len, "stock KVM");
		return buf;
	}
	snprintf(buf, len, "kernel patch:%s%s%s",
		 kh->commit_hints ? " commit-hint" : "",
		 kh->yield_to ? " yield-to" : "",
		 kh->halt_poll_vcpu ? " vcpu-halt-poll" : "");
	return buf;
}

int kernel_hints_set_commit(int vm_fd, const struct kernel_hints *kh,
			    enum commit_state state)
{
	unsigned int hint =
		state == COMMIT_UNDER  ? KVM_COMMIT_HINT_UNDERCOMMITTED
		: state == COMMIT_OVER ? KVM_COMMIT_HINT_OVERCOMMITTED
				       : KVM_COMMIT_HINT_BALANCED;
	struct kvm_enable_cap cap = { .cap = KVM_CAP_VCPU_COMMIT_HINT,
				      .args = { hint } };

	if (!(kh->commit_hints & (1u << hint)))
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
