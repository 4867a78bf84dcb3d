/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The optional KVM patch series (kernel/, UAPI in kvm_hint_uapi.h): a
 * per-VM commit hint, a userspace-directed yield from one vCPU to another,
 * and per-vCPU halt-poll limits. Probed with KVM_CHECK_EXTENSION on the VM
 * and used where present; on stock KVM every call here is a no-op that
 * reports "not available" and the brain falls back to what stock KVM
 * offers (nice-based boosts, sched_yield). --stats says which path ran.
 */
#ifndef HVM_SCHED_KERNEL_HINTS_H
#define HVM_SCHED_KERNEL_HINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/policy.h"

struct kernel_hints {
	unsigned int commit_hints; /* bitmap of supported commit hints */
	bool yield_to; /* KVM_YIELD_TO_VCPU */
	bool halt_poll_vcpu; /* KVM_CAP_HALT_POLL on vCPU fds */
};

void kernel_hints_probe(int vm_fd, struct kernel_hints *kh);

/* "stock KVM" or the list of patch features in use. */
const char *kernel_hints_describe(const struct kernel_hints *kh, char *buf,
				  size_t len);

/* Tell KVM the VM's commit state. 0, -EOPNOTSUPP or -errno. */
int kernel_hints_set_commit(int vm_fd, const struct kernel_hints *kh,
			    enum commit_state state);

/*
 * On vCPU thread FROM: yield to vCPU TARGET's task. Returns 1 (yielded),
 * 0 (target running or not runnable), -EOPNOTSUPP or -errno.
 */
int kernel_hints_yield_to(int vcpu_fd, const struct kernel_hints *kh,
			  unsigned int target);

#endif
