// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Process limits (limits.h): plain prctl/capset/setrlimit, no libcap, so
 * that the static guest programs stay small. The seccomp program arrives
 * compiled (hintvm-runtime builds it with libseccomp on the host, for the
 * VM's architecture, which is the host's).
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "limits.h"

static int step_failed(const char **what, const char *step)
{
	int err = errno ? errno : EINVAL;

	*what = step;
	return -err;
}

static int load_seccomp(const struct agent_limits *l)
{
	struct sock_fprog prog = {
		.len = (unsigned short)(l->seccomp_len / 8),
	};
	void *copy = NULL;
	int ret;

	/* sock_filter needs its alignment; the wire gives none. */
	if ((uintptr_t)l->seccomp % 8) {
		copy = malloc(l->seccomp_len);
		if (!copy)
			return -1;
		memcpy(copy, l->seccomp, l->seccomp_len);
	}
	prog.filter = copy ? copy : (struct sock_filter *)l->seccomp;
	ret = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	free(copy);
	return ret;
}

int limits_before_user(const struct agent_limits *l, const char **what)
{
	errno = 0;
	for (size_t i = 0; i < l->nrlimits; i++) {
		struct rlimit r = { .rlim_cur = (rlim_t)l->rlimits[i].soft,
				    .rlim_max = (rlim_t)l->rlimits[i].hard };

		if (setrlimit((int)l->rlimits[i].resource, &r))
			return step_failed(what, "setrlimit");
	}
	if (l->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return step_failed(what, "PR_SET_NO_NEW_PRIVS");
	if (l->seccomp && !l->no_new_privs && load_seccomp(l))
		return step_failed(what, "seccomp filter");
	if (!l->has_caps)
		return 0;
	for (unsigned int cap = 0; cap < 64; cap++) {
		if (l->caps[AGENT_CAP_BOUNDING] & (1ull << cap))
			continue;
		/* EINVAL: past the guest kernel's last capability. */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			if (errno == EINVAL)
				break;
			return step_failed(what, "PR_CAPBSET_DROP");
		}
	}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return step_failed(what, "PR_SET_KEEPCAPS");
	return 0;
}

int limits_after_user(const struct agent_limits *l, const char **what)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	const uint64_t *c = l->caps;

	errno = 0;
	if (!l->has_caps)
		return 0;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
		return step_failed(what, "PR_SET_KEEPCAPS");
	for (int i = 0; i < 2; i++) {
		data[i].effective =
			(uint32_t)(c[AGENT_CAP_EFFECTIVE] >> 32 * i);
		data[i].permitted =
			(uint32_t)(c[AGENT_CAP_PERMITTED] >> 32 * i);
		data[i].inheritable =
			(uint32_t)(c[AGENT_CAP_INHERITABLE] >> 32 * i);
	}
	if (syscall(SYS_capset, &hdr, data))
		return step_failed(what, "capset");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return step_failed(what, "PR_CAP_AMBIENT_CLEAR_ALL");
	for (unsigned int cap = 0; cap < 64; cap++)
		if ((c[AGENT_CAP_AMBIENT] & (1ull << cap)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0))
			return step_failed(what, "PR_CAP_AMBIENT_RAISE");
	return 0;
}

int limits_last(const struct agent_limits *l, const char **what)
{
	errno = 0;
	if (l->seccomp && l->no_new_privs && load_seccomp(l))
		return step_failed(what, "seccomp filter");
	return 0;
}
