// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pvpanic on real /dev/kvm: the test kernel's `panic` payload writes the
 * port as Linux's pvpanic driver would. PANICKED must end the VM as a guest
 * crash (status 6) on any vCPU count; CRASH_LOADED alone must not stop it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kvm_test.h"

static void print_run(const struct guest_run *run)
{
	printf("--- guest output ---\n%s\n--- exit: %s (%s) ---\n",
	       run->output ? run->output : "(none)",
	       hvm_exit_reason_name(run->exit.reason), run->exit.detail);
}

static void test_panicked_is_a_guest_crash(void **state)
{
	for (unsigned int cpus = 1; cpus <= 2; cpus++) {
		struct guest_run run;

		assert_int_equal(
			guest_boot(&run, NULL, cpus, "test=panic", NULL), 0);
		if (run.exit.reason != HVM_EXIT_CRASH)
			print_run(&run);
		/* The device read back both events before the write. */
		assert_string_equal(result_field(&run, "events"), "0x3");
		assert_string_equal(result_field(&run, "expect"),
				    "guest-panic");
		assert_int_equal(run.exit.reason, HVM_EXIT_CRASH);
		assert_int_equal(hvm_exit_status(&run.exit), HVM_STATUS_CRASH);
		assert_int_equal(hvm_exit_status(&run.exit), 6);
		assert_string_equal(run.exit.detail,
				    "the guest kernel panicked (pvpanic)");
		guest_run_free(&run);
	}
}

static void test_crash_loaded_keeps_running(void **state)
{
	struct guest_run run;

	assert_int_equal(guest_boot(&run, NULL, 1,
				    "test=panic panic.event=crash-loaded",
				    NULL),
			 0);
	if (run.exit.reason != HVM_EXIT_POWEROFF)
		print_run(&run);
	/* The guest ran on to its own power-off after the write. */
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_int_equal(hvm_exit_status(&run.exit), 0);
	assert_string_equal(result_field(&run, "ok"), "1");
	assert_string_equal(result_field(&run, "event"), "crash-loaded");
	assert_string_equal(result_field(&run, "events"), "0x3");
	guest_run_free(&run);
}

static void test_bad_event_parameter(void **state)
{
	struct guest_run run;

	assert_int_equal(
		guest_boot(&run, NULL, 1, "test=panic panic.event=oops", NULL),
		0);
	assert_int_equal(run.exit.reason, HVM_EXIT_DEBUG);
	assert_string_equal(result_field(&run, "error"), "bad-parameter");
	guest_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_panicked_is_a_guest_crash),
		cmocka_unit_test(test_crash_loaded_keeps_running),
		cmocka_unit_test(test_bad_event_parameter),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
