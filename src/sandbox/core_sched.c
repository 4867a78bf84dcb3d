// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <sys/prctl.h>

#include "base/log.h"
#include "sandbox/core_sched.h"

/* Older C libraries lack them; the values are the kernel's ABI. */
#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#define PR_SCHED_CORE_GET 0
#define PR_SCHED_CORE_CREATE 1
#endif
#ifndef PR_SCHED_CORE_SCOPE_THREAD
#define PR_SCHED_CORE_SCOPE_THREAD 0
#endif

/* This thread's cookie is one core_sched_create() made. */
static __thread bool made_here;

int core_sched_create(const char *mode)
{
	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0,
		  PR_SCHED_CORE_SCOPE_THREAD, 0) == 0) {
		made_here = true;
		return 0;
	}
	/* An unknown prctl option: the kernel was built without it. */
	if (errno == EINVAL)
		return hvm_set_error(
			-EOPNOTSUPP,
			"--core-sched %s: this kernel has no core scheduling (CONFIG_SCHED_CORE, Linux 5.14 or later); --core-sched off runs without it",
			mode);
	if (errno == ENODEV)
		return hvm_set_error(
			-ENODEV,
			"--core-sched %s: this machine has no SMT (or it is off: /sys/devices/system/cpu/smt/active), so core scheduling has no sibling to keep other tasks off; --core-sched off runs without it",
			mode);
	return hvm_set_errno_error("--core-sched %s: prctl(PR_SCHED_CORE)",
				   mode);
}

int core_sched_leave_earlier(void)
{
	if (!made_here)
		return 0;
	pr_debug("core-sched: a fresh cookie, not the earlier VM's");
	return core_sched_create("off");
}

int core_sched_get(pid_t tid, uint64_t *cookie)
{
	*cookie = 0;
	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, tid,
		  PR_SCHED_CORE_SCOPE_THREAD, cookie) < 0)
		return -errno;
	return 0;
}
