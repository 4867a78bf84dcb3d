// SPDX-License-Identifier: LGPL-2.1-or-later
/* The error buffer: the sign every caller gets back, and what it says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "core/log.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_error_returns_the_negative_errno),
		cmocka_unit_test(
			errno_error_appends_strerror_and_returns_minus_errno),
		cmocka_unit_test(a_message_may_wrap_the_previous_one),
		cmocka_unit_test(clear_error_empties_the_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
