// SPDX-License-Identifier: LGPL-2.1-or-later
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "sched/kernel_hints.h"

#if __has_include("sched/kvm_hint_uapi.h")
#include "sched/kvm_hint_uapi.h"
#endif

const char *kernel_hints_probe(int kvm_fd)
{
#ifdef KVM_CAP_HINTVM_COMMIT_HINT
	if (ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_HINTVM_COMMIT_HINT) > 0)
		return "kernel patch (commit hint)";
#endif
	(void)kvm_fd;
	return "stock KVM";
}
