// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * no-userns PROGRAM [ARG...]: run PROGRAM as on a kernel without user
 * namespaces (CONFIG_USER_NS off): unshare(2) with CLONE_NEWUSER fails
 * with EINVAL, every other unshare is let through.
 * tests/cli/sandbox-test.sh runs a --jail under it: the jail of before.
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	if (argc < 2 || !ctx) {
		fprintf(stderr, "usage: no-userns PROGRAM [ARG...]\n");
		return 2;
	}
	r = seccomp_rule_add(
		ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(unshare), 1,
		SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (!r)
		r = seccomp_load(ctx);
	if (r) {
		fprintf(stderr, "no-userns: %s\n", strerror(-r));
		return 2;
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 2;
}
