// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Names, the registry and the control calls as an embedder meets them:
 * several VMs in one process get distinct names and are listed, a VM with
 * "control" none is not; hvm_vm_set() refuses what it must with the right
 * errno; every event fd sees the same events; hvm_vm_info() tells the
 * effective configuration.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kvm_test.h"

static char runtime_dir[64];

static struct hvm_vm *start_vm(const char *name, const char *control)
{
	struct hvm_config *cfg = hvm_config_new();
	struct hvm_vm *vm;

	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(hvm_config_set(cfg, "console", "none"), 0);
	assert_int_equal(hvm_config_set(cfg, "cmdline",
					"test=smp-count iterations=4294967296"),
			 0);
	if (name)
		assert_int_equal(hvm_config_set(cfg, "name", name), 0);
	if (control)
		assert_int_equal(hvm_config_set(cfg, "control", control), 0);
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	assert_non_null(vm);
	assert_int_equal(hvm_vm_start(vm), 0);
	return vm;
}

static bool listed(const char *name)
{
	struct hvm_vm_entry *vms;
	size_t n;
	bool found = false;

	assert_int_equal(hvm_list_vms(&vms, &n), 0);
	for (size_t i = 0; i < n; i++)
		found |= !strcmp(vms[i].name, name);
	free(vms);
	return found;
}

/* Read from FD until PATTERN shows up (5 s at most). */
static bool read_until(int fd, const char *pattern)
{
	static char buf[65536];
	size_t used = 0;

	while (used < sizeof(buf) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 5000) <= 0)
			return false;
		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			return false;
		used += (size_t)n;
		buf[used] = '\0';
		if (strstr(buf, pattern))
			return true;
	}
	return false;
}

static void test_names_and_registry(void **state)
{
	struct hvm_vm *a = start_vm(NULL, NULL), *b = start_vm(NULL, NULL),
		      *named = start_vm("named", NULL),
		      *hidden = start_vm("hidden", "none");
	char expect_a[32];

	snprintf(expect_a, sizeof(expect_a), "vm-%d", (int)getpid());
	assert_string_equal(hvm_vm_name(named), "named");
	assert_string_not_equal(hvm_vm_name(a), hvm_vm_name(b));
	assert_true(listed(hvm_vm_name(a)));
	assert_true(listed(hvm_vm_name(b)));
	assert_true(listed("named"));
	assert_false(listed("hidden"));
	/* A name is one VM's at a time. */
	{
		struct hvm_config *cfg = hvm_config_new();
		struct hvm_vm *twin;

		hvm_config_set(cfg, "name", "named");
		hvm_config_set(cfg, "console", "none");
		twin = hvm_vm_create(cfg);
		hvm_config_free(cfg);
		assert_non_null(twin);
		assert_int_equal(hvm_vm_start(twin), -EADDRINUSE);
		assert_non_null(
			strstr(hvm_last_error(),
			       "a VM named 'named' is already running"));
		hvm_vm_destroy(twin);
	}
	/* Event fds work without a control socket too. */
	{
		int fd = hvm_vm_event_fd(hidden);

		assert_true(fd >= 0);
		assert_int_equal(hvm_vm_pause(hidden), 0);
		assert_true(read_until(fd, "\"state\":\"paused\""));
		close(fd);
	}
	hvm_vm_destroy(a);
	hvm_vm_destroy(b);
	hvm_vm_destroy(named);
	hvm_vm_destroy(hidden);
	/* Gone with their VMs. */
	assert_false(listed("named"));
	assert_false(listed(expect_a));
}

static void test_set_and_events(void **state)
{
	struct hvm_vm *vm = start_vm("settable", NULL);
	int fd1 = hvm_vm_event_fd(vm), fd2 = hvm_vm_event_fd(vm);
	char info[8192];

	assert_true(fd1 >= 0 && fd2 >= 0);
	assert_int_equal(hvm_vm_set(vm, "halt-poll", "30000"), 0);
	assert_int_equal(hvm_vm_set(vm, "halt-poll", "soon"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "--halt-poll: 'soon'"));
	assert_int_equal(hvm_vm_set(vm, "mem", "1G"), -EPERM);
	assert_int_equal(hvm_vm_set(vm, "pv", "none"), -EPERM);
	assert_int_equal(hvm_vm_set(vm, "warp", "9"), -ENOENT);
	assert_int_equal(hvm_vm_set(vm, "sched-hints", "off"), 0);
	assert_true(hvm_vm_info(vm, info, sizeof(info)) > 0);
	assert_non_null(strstr(info, "\"name\":\"settable\""));
	assert_non_null(strstr(info, "\"halt_poll\":\"30000\""));
	assert_non_null(strstr(info, "\"sched_hints\":false"));
	/* Both subscribers see the same stream, in order. */
	assert_true(
		read_until(fd1, "\"key\":\"sched-hints\",\"value\":\"off\""));
	assert_true(
		read_until(fd2, "\"key\":\"sched-hints\",\"value\":\"off\""));
	hvm_vm_stop(vm);
	assert_int_equal(hvm_vm_wait(vm, NULL), 0);
	assert_true(read_until(fd1, "\"event\":\"exit\""));
	close(fd1);
	close(fd2);
	hvm_vm_destroy(vm);
}

static int setup(void **state)
{
	snprintf(runtime_dir, sizeof(runtime_dir), "/tmp/hvm-kvm-XXXXXX");
	assert_non_null(mkdtemp(runtime_dir));
	setenv("HINTVM_RUNTIME_DIR", runtime_dir, 1);
	return 0;
}

static int teardown(void **state)
{
	rmdir(runtime_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_registry),
		cmocka_unit_test(test_set_and_events),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, setup, teardown);
}
