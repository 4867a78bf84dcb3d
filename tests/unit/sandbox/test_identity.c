// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --user auto's uid locks: two running VMs never get one uid; a full range
 * is refused with a message naming it; a VM's end (its lock fd closed)
 * frees its uid for the next one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "sandbox/identity.h"

static void test_uid_locks(void **state)
{
	char dir[] = "/tmp/hvm-identity-XXXXXX";
	struct vm_identity a, b, c;
	int fd;

	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);

	assert_int_equal(identity_take_free(fd, 5000, 5001, &a), 0);
	assert_int_equal(identity_take_free(fd, 5000, 5001, &b), 0);
	assert_true(a.set && b.set);
	assert_true(a.uid >= 5000 && a.uid <= 5001);
	assert_true(b.uid >= 5000 && b.uid <= 5001);
	assert_int_not_equal(a.uid, b.uid);
	assert_int_equal(a.gid, a.uid);

	/* Both taken: refused, saying which range. */
	assert_int_equal(identity_take_free(fd, 5000, 5001, &c), -EBUSY);
	assert_false(c.set);
	assert_non_null(strstr(hvm_error_message(), "--user-range 5000-5001"));

	/* A VM's end frees its uid. */
	identity_release(&a);
	assert_int_equal(identity_take_free(fd, 5000, 5001, &c), 0);
	assert_int_not_equal(c.uid, b.uid);

	identity_release(&b);
	identity_release(&c);
	assert_int_equal(unlinkat(fd, "5000", 0), 0);
	assert_int_equal(unlinkat(fd, "5001", 0), 0);
	close(fd);
	assert_int_equal(rmdir(dir), 0);
}

/* No identity asked: a thread stays who it is. */
static void test_nothing_requested(void **state)
{
	uid_t before = getuid();

	identity_set_requested(NULL);
	assert_null(identity_requested());
	assert_int_equal(identity_thread_enter(), 0);
	assert_int_equal(getuid(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uid_locks),
		cmocka_unit_test(test_nothing_requested),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
