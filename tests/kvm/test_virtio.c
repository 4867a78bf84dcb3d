// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio against a hostile guest: the test kernel's virtio_hostile payload
 * drives the virtio-rng PCI function like a broken or malicious driver
 * (buffers and rings outside RAM, wrapping, in MMIO; bad indices, loops,
 * nested indirect tables, wrong direction order). hintvm must refuse each
 * (NEEDS_RESET, no used buffer), keep running, still serve a valid request
 * afterwards without writing outside its buffer, and power off normally.
 * Run by scripts/test under ASan as well, which catches any stray access
 * to host memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>
#include <cmocka.h>

#include "kvm_test.h"

static void dump(const struct guest_run *run)
{
	printf("--- guest output ---\n%s\n--- exit: %s (%s) ---\n",
	       run->output ? run->output : "(none)",
	       hvm_exit_reason_name(run->exit.reason), run->exit.detail);
}

static void test_hostile_driver(void **state)
{
	static const char *const rng[] = { "rng=on", NULL };
	struct guest_run run;
	const char *ok;

	assert_int_equal(guest_boot(&run, NULL, 1, "test=virtio_hostile", rng),
			 0);
	ok = result_field(&run, "ok");
	if (run.exit.reason != HVM_EXIT_POWEROFF || !ok || strcmp(ok, "1"))
		dump(&run);
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_string_equal(result_field(&run, "scenarios"), "12");
	assert_string_equal(result_field(&run, "refused"), "12");
	assert_string_equal(result_field(&run, "valid"), "1");
	assert_string_equal(result_field(&run, "guards"), "1");
	assert_string_equal(ok, "1");
	guest_run_free(&run);
}

static void test_hostile_driver_smp(void **state)
{
	static const char *const rng[] = { "rng=on", NULL };
	struct guest_run run;

	/* Other vCPUs idle while the BSP attacks: same verdict. */
	assert_int_equal(guest_boot(&run, NULL, 2, "test=virtio_hostile", rng),
			 0);
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_string_equal(result_field(&run, "ok"), "1");
	guest_run_free(&run);
}

static void test_no_device_without_option(void **state)
{
	struct guest_run run;

	/* Without --rng there is nothing on the bus: the payload says so. */
	assert_int_equal(guest_boot(&run, NULL, 1, "test=virtio_hostile", NULL),
			 0);
	assert_string_equal(result_field(&run, "ok"), "0");
	assert_string_equal(result_field(&run, "scenarios"), "0");
	guest_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_driver),
		cmocka_unit_test(test_hostile_driver_smp),
		cmocka_unit_test(test_no_device_without_option),
	};

	struct io_uring_params params = { 0 };
	long fd;

	kvm_test_require_kvm();
	/* Device work runs on io_uring: without it there are no devices. */
	fd = syscall(__NR_io_uring_setup, 1, &params);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
		printf("SKIP: io_uring is not available here (%s)\n",
		       strerror(errno));
		return KVM_TEST_SKIP;
	}
	if (fd >= 0)
		close((int)fd);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
