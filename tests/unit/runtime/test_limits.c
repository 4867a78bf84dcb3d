// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of the process limits end to end, short of a VM: a profile
 * parsed (spec.c), compiled (seccomp.c) and loaded with the guest's
 * limits code (guest-firmware/agent/limits.c) in a child process, which
 * then sees what a container process would: its rlimit, no_new_privs,
 * and a syscall the profile denies failing with the profile's errno.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/limits.h"
#include "runtime/seccomp.h"
#include "runtime/spec.h"

/* getppid is denied with errno 42, personality(8) with EPERM only for 8. */
static const char *const config =
	"{\"ociVersion\":\"1.0.0\",\"process\":{\"args\":[\"x\"],"
	"\"noNewPrivileges\":true,"
	"\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":77,\"soft\":66}]},"
	"\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
	"\"syscalls\":[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\","
	"\"errnoRet\":42},{\"names\":[\"no_such_syscall_here\",\"getsid\"],"
	"\"action\":\"SCMP_ACT_ERRNO\"},{\"names\":[\"read\"],"
	"\"action\":\"SCMP_ACT_ALLOW\"},{\"names\":[\"getpriority\"],"
	"\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":1,"
	"\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]}]}}}";

/* What the child found, one bit per claim that held. */
enum {
	OK_RLIMIT = 1,
	OK_NNP = 2,
	OK_DENIED = 4,
	OK_DEFAULT_ERRNO = 8,
	OK_ALLOWED = 16,
	OK_ARG = 32
};

static int child(const struct agent_limits *l)
{
	const char *what = "";
	struct rlimit r;
	int ok = 0;

	if (limits_before_user(l, &what) || limits_after_user(l, &what))
		_exit(100);
	if (limits_last(l, &what))
		_exit(errno == EINVAL ? 101 : 102);
	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur == 66 &&
	    r.rlim_max == 77)
		ok |= OK_RLIMIT;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		ok |= OK_NNP;
	errno = 0;
	if (syscall(SYS_getppid) == -1 && errno == 42)
		ok |= OK_DENIED;
	errno = 0;
	if (syscall(SYS_getsid, 0) == -1 && errno == EPERM)
		ok |= OK_DEFAULT_ERRNO;
	if (getpid() > 0)
		ok |= OK_ALLOWED;
	/* Two conditions on one argument: each is a rule of its own. */
	errno = 0;
	if (getpriority(1, 0) == -1 && errno == EPERM &&
	    getpriority(PRIO_PROCESS, 0) != -1)
		ok |= OK_ARG;
	_exit(ok);
}

static void test_profile_applied(void **state)
{
	struct agent_limits l = { 0 };
	char err[256] = "", unknown[128];
	struct oci_spec s;
	size_t len, nunknown;
	void *prog;
	int ws;
	pid_t pid;

	assert_int_equal(
		oci_spec_parse(config, strlen(config), &s, err, sizeof(err)),
		0);
	assert_int_equal(rt_seccomp_compile(&s.seccomp, &prog, &len, unknown,
					    sizeof(unknown), &nunknown, err,
					    sizeof(err)),
			 0);
	assert_true(len > 0 && len % 8 == 0);
	/* An unknown name is skipped, as runc skips it, and reported. */
	assert_int_equal(nunknown, 1);
	assert_string_equal(unknown, "no_such_syscall_here");
	l.rlimits[0] = (struct agent_rlimit){ .resource = RLIMIT_NOFILE,
					      .soft = 66,
					      .hard = 77 };
	l.nrlimits = 1;
	l.no_new_privs = true;
	l.seccomp = prog;
	l.seccomp_len = len;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child(&l);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	if (WEXITSTATUS(ws) == 101)
		skip(); /* qemu-user refuses seccomp filters (EINVAL) */
	assert_int_equal(WEXITSTATUS(ws), OK_RLIMIT | OK_NNP | OK_DENIED |
						  OK_DEFAULT_ERRNO |
						  OK_ALLOWED | OK_ARG);
	free(prog);
	oci_spec_free(&s);
}

static void test_rules_equal_to_default_add_nothing(void **state)
{
	/* A profile whose rules equal the default adds no rule at all. */
	const char *text =
		"{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":{\"defaultAction\":"
		"\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\"],"
		"\"action\":\"SCMP_ACT_ERRNO\"}]}}}";
	char err[256] = "", unknown[64];
	struct oci_spec s;
	size_t len, nunknown;
	void *prog;

	assert_int_equal(
		oci_spec_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	assert_int_equal(rt_seccomp_compile(&s.seccomp, &prog, &len, unknown,
					    sizeof(unknown), &nunknown, err,
					    sizeof(err)),
			 0);
	assert_true(len > 0 && len <= RT_SECCOMP_MAX_BYTES);
	free(prog);
	oci_spec_free(&s);
}

/*
 * runc's order around the uid switch: a non-root user keeps the
 * capabilities it was given (CAP_CHOWN, also ambient), and the bounding
 * set loses the rest.
 */
static void test_capabilities_survive_uid_switch(void **state)
{
	struct agent_limits l = { .has_caps = true };
	uint64_t chown_bit = 1ull << 0;
	int ws;
	pid_t pid;

	if (geteuid() != 0)
		skip();
	l.caps[AGENT_CAP_BOUNDING] = chown_bit;
	l.caps[AGENT_CAP_EFFECTIVE] = chown_bit;
	l.caps[AGENT_CAP_PERMITTED] = chown_bit;
	l.caps[AGENT_CAP_INHERITABLE] = chown_bit;
	l.caps[AGENT_CAP_AMBIENT] = chown_bit;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3
		};
		struct __user_cap_data_struct d[2];
		const char *what = "";
		int ok = 0;

		if (limits_before_user(&l, &what) || setgid(65534) ||
		    setuid(65534) || limits_after_user(&l, &what))
			_exit(100);
		if (!syscall(SYS_capget, &h, d) &&
		    d[0].effective == chown_bit &&
		    d[0].permitted == chown_bit && !d[1].permitted)
			ok |= 1;
		if (prctl(PR_CAPBSET_READ, 0, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_READ, 5, 0, 0, 0) == 0)
			ok |= 2;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0) == 1)
			ok |= 4;
		_exit(ok);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_applied),
		cmocka_unit_test(test_rules_equal_to_default_add_nothing),
		cmocka_unit_test(test_capabilities_survive_uid_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
