// SPDX-License-Identifier: LGPL-2.1-or-later
/* The error buffer: the sign every caller gets back, and what it says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <cmocka.h>

#include "base/log.h"
#include "sandbox/thread.h"

static void set_error_returns_the_negative_errno(void **state)
{
	assert_int_equal(hvm_set_error(-EINVAL, "--cpus %u is too many", 9u),
			 -EINVAL);
	assert_string_equal(hvm_error_message(), "--cpus 9 is too many");
}

static void errno_error_appends_strerror_and_returns_minus_errno(void **state)
{
	errno = ENOENT;
	assert_int_equal(hvm_set_errno_error("KVM_CREATE_VM on %s", "x"),
			 -ENOENT);
	assert_string_equal(hvm_error_message(),
			    "KVM_CREATE_VM on x: No such file or directory");
}

/* Adding context to the callee's message must not garble it. */
static void a_message_may_wrap_the_previous_one(void **state)
{
	hvm_set_error(-ENOSPC, "no virtio-mmio slot left");
	hvm_set_error(-ENOSPC, "disk0: %s", hvm_error_message());
	assert_string_equal(hvm_error_message(),
			    "disk0: no virtio-mmio slot left");
}

static void clear_error_empties_the_message(void **state)
{
	hvm_set_error(-EIO, "something");
	hvm_clear_error();
	assert_string_equal(hvm_error_message(), "");
}

static void *report_level(void *arg)
{
	*(enum log_level *)arg = log_get_level();
	return NULL;
}

/* Two VMs in one process log at their own levels: per thread, inherited. */
static void level_is_per_thread_and_inherited(void **state)
{
	enum log_level seen = LOG_ERROR;
	pthread_t t;

	log_set_level(LOG_DEBUG);
	assert_int_equal(vm_thread_create(&t, report_level, &seen), 0);
	pthread_join(t, NULL);
	assert_int_equal(seen, LOG_DEBUG);

	/* A thread not started through it keeps the default. */
	assert_int_equal(pthread_create(&t, NULL, report_level, &seen), 0);
	pthread_join(t, NULL);
	assert_int_equal(seen, LOG_WARN);
	log_set_level(LOG_WARN);
}

static void verbosity_maps_onto_levels(void **state)
{
	assert_int_equal(log_level_for_verbosity(0), LOG_WARN);
	assert_int_equal(log_level_for_verbosity(1), LOG_INFO);
	assert_int_equal(log_level_for_verbosity(2), LOG_DEBUG);
	assert_int_equal(log_level_for_verbosity(3), LOG_DEBUG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_error_returns_the_negative_errno),
		cmocka_unit_test(
			errno_error_appends_strerror_and_returns_minus_errno),
		cmocka_unit_test(a_message_may_wrap_the_previous_one),
		cmocka_unit_test(clear_error_empties_the_message),
		cmocka_unit_test(level_is_per_thread_and_inherited),
		cmocka_unit_test(verbosity_maps_onto_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
