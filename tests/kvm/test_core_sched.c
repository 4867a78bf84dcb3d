// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --core-sched (docs/sandbox.md) as the kernel sees it: where the host
 * has core scheduling, the cookies of a running VM's threads
 * (prctl PR_SCHED_CORE_GET) say what the option promises: off, none; vm,
 * one cookie for every thread of the VM; vcpu, that for the VM's other
 * threads and a cookie of its own for each vCPU. Where the host has none
 * (no CONFIG_SCHED_CORE, or no SMT), asking for it refuses to start the
 * VM with the reason, through the library and `hintvm run`, and the
 * cookie checks skip saying why.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "kvm_test.h"

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#define PR_SCHED_CORE_GET 0
#endif
#ifndef PR_SCHED_CORE_SCOPE_THREAD
#define PR_SCHED_CORE_SCOPE_THREAD 0
#endif

#define MAX_THREADS 64

static int probe_errno; /* what unavailable() saw */

/* Why this host has no core scheduling, or NULL when it has it. */
static const char *unavailable(void)
{
	uint64_t cookie = 0;

	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, 0,
		  PR_SCHED_CORE_SCOPE_THREAD, &cookie) == 0)
		return NULL;
	probe_errno = errno;
	if (errno == EINVAL)
		return "this kernel has no core scheduling (CONFIG_SCHED_CORE)";
	if (errno == ENODEV)
		return "this machine has no SMT (or it is off)";
	return strerror(errno);
}

/* The phrase hintvm's refusal must contain for what unavailable() saw. */
static const char *expected_reason(void)
{
	return probe_errno == ENODEV ? "has no SMT" : "CONFIG_SCHED_CORE";
}

static void test_refused_where_unavailable(void **state)
{
	const char *modes[] = { "vm", "vcpu" };
	const char *why = unavailable();
	const char *reason;

	if (!why) {
		printf("SKIP: this host has core scheduling: nothing to refuse\n");
		skip();
	}
	reason = expected_reason();
	for (unsigned int i = 0; i < 2; i++) {
		struct hvm_config *cfg = kvm_test_config_new();
		char option[32];

		assert_non_null(cfg);
		assert_int_equal(hvm_config_set(cfg, "core-sched", modes[i]),
				 0);
		assert_null(hvm_vm_create(cfg));
		snprintf(option, sizeof(option), "--core-sched %s", modes[i]);
		assert_non_null(strstr(hvm_last_error(), option));
		assert_non_null(strstr(hvm_last_error(), reason));
		hvm_config_free(cfg);
	}
}

/* `hintvm run --core-sched vm`: exit status 2 and the reason, on stderr. */
static void test_hintvm_run_refuses(void **state)
{
	const char *hintvm = getenv("HINTVM");
	int err = memfd_create("stderr", MFD_CLOEXEC), status;
	char buf[4096] = "";
	pid_t pid;

	if (unavailable() == NULL) {
		printf("SKIP: this host has core scheduling: nothing to refuse\n");
		skip();
	}
	if (!hintvm)
		fail_msg("HINTVM (the hintvm binary) is not set");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(err, 2);
		execl(hintvm, hintvm, "run", "--core-sched", "vm", "--control",
		      "none", "-p", "test=hello", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), HVM_STATUS_USAGE);
	assert_true(pread(err, buf, sizeof(buf) - 1, 0) > 0);
	assert_non_null(strstr(buf, "--core-sched vm"));
	assert_non_null(strstr(buf, expected_reason()));
	close(err);
}

struct thread_cookie {
	pid_t tid;
	bool vcpu; /* named hintvm-vcpu-N */
	uint64_t cookie;
};

/* Every thread of this process, its name's kind and its cookie. */
static int read_cookies(struct thread_cookie *t, int max)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *d;
	int n = 0;

	while (dir && (d = readdir(dir)) && n < max) {
		char path[300], comm[32] = "";
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		t[n].tid = atoi(d->d_name);
		t[n].vcpu = !strncmp(comm, "hintvm-vcpu-", 12);
		t[n].cookie = 0;
		if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, t[n].tid,
			  PR_SCHED_CORE_SCOPE_THREAD, &t[n].cookie) < 0)
			continue; /* it ended meanwhile */
		n++;
	}
	if (dir)
		closedir(dir);
	return n;
}

#define CHECK(cond, ...)                                          \
	do {                                                      \
		if (!(cond)) {                                    \
			fprintf(stderr, "core-sched %s: ", mode); \
			fprintf(stderr, __VA_ARGS__);             \
			fprintf(stderr, "\n");                    \
			_exit(1);                                 \
		}                                                 \
	} while (0)

/*
 * In a child process (the cookie of the thread that builds the VM is
 * the VM's, and the test's own threads must keep theirs): boot 2 spinning
 * vCPUs with --core-sched MODE, then judge every thread's cookie.
 */
static void check_cookies_in_child(const char *mode)
{
	struct thread_cookie t[MAX_THREADS];
	struct hvm_config *cfg = kvm_test_config_new();
	int out = memfd_create("console", MFD_CLOEXEC), n, vcpus = 0;
	uint64_t other = 0;
	struct hvm_exit exit;
	struct hvm_vm *vm;

	CHECK(cfg && out >= 0, "no config");
	CHECK(hvm_config_set(cfg, "cpus", "2") == 0 &&
		      hvm_config_set(cfg, "mem", "64M") == 0 &&
		      hvm_config_set(cfg, "core-sched", mode) == 0 &&
		      hvm_config_set(cfg, "cmdline",
				     "test=smp-count iterations=4294967296") ==
			      0 &&
		      hvm_config_set_console_fds(cfg, -1, out) == 0,
	      "config: %s", hvm_last_error());
	vm = hvm_vm_create(cfg);
	CHECK(vm, "create: %s", hvm_last_error());
	CHECK(hvm_vm_start(vm) == 0, "start: %s", hvm_last_error());
	/* Both vCPU threads are up (they set their cookie first). */
	for (int i = 0; i < 500 && vcpus < 2; i++) {
		usleep(2000);
		n = read_cookies(t, MAX_THREADS);
		vcpus = 0;
		for (int j = 0; j < n; j++)
			vcpus += t[j].vcpu;
	}
	CHECK(vcpus == 2, "%d vCPU threads", vcpus);
	usleep(20000);
	n = read_cookies(t, MAX_THREADS);
	for (int i = 0; i < n; i++) {
		if (!strcmp(mode, "off")) {
			CHECK(t[i].cookie == 0, "thread %d has a cookie",
			      t[i].tid);
			continue;
		}
		CHECK(t[i].cookie != 0, "thread %d has no cookie", t[i].tid);
		if (t[i].vcpu && !strcmp(mode, "vcpu"))
			continue;
		if (!other)
			other = t[i].cookie;
		CHECK(t[i].cookie == other,
		      "thread %d: another cookie than the VM's", t[i].tid);
	}
	for (int i = 0; i < n && !strcmp(mode, "vcpu"); i++)
		for (int j = 0; j < n; j++)
			CHECK(!t[i].vcpu || j == i ||
				      t[i].cookie != t[j].cookie,
			      "vCPU thread %d shares its cookie with thread %d",
			      t[i].tid, t[j].tid);
	hvm_vm_stop(vm);
	CHECK(hvm_vm_wait(vm, &exit) == 0, "wait: %s", hvm_last_error());
	hvm_vm_destroy(vm);
	hvm_config_free(cfg);
	_exit(0);
}

static void check_cookies(const char *mode)
{
	const char *why = unavailable();
	int status;
	pid_t pid;

	if (why) {
		printf("SKIP: %s; the kernel suite's L1 would need CONFIG_SCHED_CORE=y and an SMT topology\n",
		       why);
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		check_cookies_in_child(mode);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_cookies_off(void **state)
{
	check_cookies("off");
}

static void test_cookies_vm(void **state)
{
	check_cookies("vm");
}

static void test_cookies_vcpu(void **state)
{
	check_cookies("vcpu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_where_unavailable),
		cmocka_unit_test(test_hintvm_run_refuses),
		cmocka_unit_test(test_cookies_off),
		cmocka_unit_test(test_cookies_vm),
		cmocka_unit_test(test_cookies_vcpu),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
