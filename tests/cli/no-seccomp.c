// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * no-seccomp PROGRAM [ARG...]: run PROGRAM as on a kernel built without
 * seccomp filters (CONFIG_SECCOMP_FILTER off, as in tinyconfig-based
 * kernels): seccomp(2) and prctl(PR_SET/GET_SECCOMP) fail with EINVAL.
 * tests/cli/sandbox-test.sh runs hintvm under it.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	if (argc < 2 || !ctx) {
		fprintf(stderr, "usage: no-seccomp PROGRAM [ARG...]\n");
		return 2;
	}
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(seccomp), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL),
				     SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP, 0));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL),
				     SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_GET_SECCOMP, 0));
	if (!r)
		r = seccomp_load(ctx);
	if (r) {
		fprintf(stderr, "no-seccomp: %s\n", strerror(-r));
		return 2;
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 2;
}
