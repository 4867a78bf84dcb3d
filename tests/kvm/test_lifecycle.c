// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A running VM as an embedder drives it: vCPU threads are named, pause
 * really keeps the vCPUs out of the guest, resume lets them run again, and
 * stop ends the VM with HVM_EXIT_STOPPED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "kvm_test.h"

/* Run time (ns) of the thread named NAME in this process, or -1. */
static long long thread_runtime(const char *name)
{
	long long runtime = -1;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	while (dir && (d = readdir(dir))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		if (strcmp(comm, name))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
			 d->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lld", &runtime) != 1)
			runtime = -1;
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return runtime;
}

static struct hvm_vm *start_spinning_vm(unsigned int cpus, int out)
{
	struct hvm_config *cfg = kvm_test_config_new();
	struct hvm_vm *vm;
	char n[8];

	snprintf(n, sizeof(n), "%u", cpus);
	assert_int_equal(hvm_config_set(cfg, "cpus", n), 0);
	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	/* CPL3 work long enough to outlive the test. */
	assert_int_equal(hvm_config_set(cfg, "cmdline",
					"test=smp-count iterations=4294967296"),
			 0);
	assert_int_equal(hvm_config_set_console_fds(cfg, -1, out), 0);
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	assert_non_null(vm);
	assert_int_equal(hvm_vm_start(vm), 0);
	return vm;
}

/* Wait (bounded) until the vCPU thread has run some guest code. */
static long long wait_for_runtime(const char *name, long long above)
{
	long long t = -1;

	for (int i = 0; i < 500; i++) {
		t = thread_runtime(name);
		if (t > above)
			break;
		usleep(2000);
	}
	return t;
}

static void test_threads_named_pause_resume_stop(void **state)
{
	int out = memfd_create("console", MFD_CLOEXEC);
	struct hvm_vm *vm = start_spinning_vm(2, out);
	struct hvm_exit exit;
	long long t0, t1, t2;

	/* Both vCPU threads exist under their documented names. */
	assert_true(wait_for_runtime("hintvm-vcpu-0", 0) > 0);
	assert_true(wait_for_runtime("hintvm-vcpu-1", -1) >= 0);

	assert_int_equal(hvm_vm_pause(vm), 0);
	t0 = thread_runtime("hintvm-vcpu-0");
	usleep(50000);
	t1 = thread_runtime("hintvm-vcpu-0");
	/* Parked: the thread sleeps on a condition variable, not in KVM. */
	assert_true(t1 - t0 < 5000000);

	assert_int_equal(hvm_vm_resume(vm), 0);
	t2 = wait_for_runtime("hintvm-vcpu-0", t1 + 10000000);
	assert_true(t2 > t1 + 10000000);

	hvm_vm_stop(vm);
	assert_int_equal(hvm_vm_wait(vm, &exit), 0);
	assert_int_equal(exit.reason, HVM_EXIT_STOPPED);
	assert_int_equal(hvm_exit_status(&exit), HVM_STATUS_STOPPED);
	hvm_vm_destroy(vm);
	/* The threads are gone with the VM. */
	assert_int_equal(thread_runtime("hintvm-vcpu-0"), -1);
	close(out);
}

static void test_destroy_stops_a_running_vm(void **state)
{
	int out = memfd_create("console", MFD_CLOEXEC);
	struct hvm_vm *vm = start_spinning_vm(1, out);

	assert_true(wait_for_runtime("hintvm-vcpu-0", 0) > 0);
	hvm_vm_destroy(vm);
	assert_int_equal(thread_runtime("hintvm-vcpu-0"), -1);
	close(out);
}

static void test_two_vms_in_one_process(void **state)
{
	struct guest_run a, b;

	/* Sequential VMs must not leak state into each other... */
	assert_int_equal(guest_boot(&a, NULL, 2, "test=ipi", NULL), 0);
	assert_int_equal(guest_boot(&b, NULL, 1, "test=hello", NULL), 0);
	assert_string_equal(result_field(&a, "ok"), "1");
	assert_string_equal(result_field(&b, "ok"), "1");
	guest_run_free(&a);
	guest_run_free(&b);
}

static void test_one_vm_crashing_leaves_another_running(void **state)
{
	int out = memfd_create("console", MFD_CLOEXEC);
	struct hvm_vm *survivor = start_spinning_vm(1, out);
	struct guest_run crashed;
	struct hvm_exit exit;

	assert_true(wait_for_runtime("hintvm-vcpu-0", 0) > 0);
	assert_int_equal(guest_boot(&crashed, NULL, 1, "test=fault", NULL), 0);
	assert_int_equal(crashed.exit.reason, HVM_EXIT_CRASH);
	guest_run_free(&crashed);
	/* ...and the first VM was never told to stop. */
	hvm_vm_stop(survivor);
	assert_int_equal(hvm_vm_wait(survivor, &exit), 0);
	assert_int_equal(exit.reason, HVM_EXIT_STOPPED);
	hvm_vm_destroy(survivor);
	close(out);
}

static void test_api_misuse_is_refused(void **state)
{
	struct hvm_exit exit;

	assert_null(hvm_vm_create(NULL));
	assert_true(strlen(hvm_last_error()) > 0);
	assert_true(hvm_vm_pause(NULL) < 0);
	hvm_vm_stop(NULL);
	hvm_vm_destroy(NULL);
	assert_true(hvm_vm_wait(NULL, &exit) < 0);
	assert_true(hvm_config_set(NULL, "cpus", "1") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_named_pause_resume_stop),
		cmocka_unit_test(test_destroy_stops_a_running_vm),
		cmocka_unit_test(test_two_vms_in_one_process),
		cmocka_unit_test(test_one_vm_crashing_leaves_another_running),
		cmocka_unit_test(test_api_misuse_is_refused),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
