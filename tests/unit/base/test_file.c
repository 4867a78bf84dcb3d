// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * open_host_input_early() (--jail's images, opened before its user
 * namespace): the next open of the same path and flags takes the early
 * descriptor, even when the path no longer opens; other flags, and a
 * second open, open afresh; the same path twice early is two descriptors.
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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/file.h"

static char path[64];

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/hvm-test-file-%d", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "image", 5), 5);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void the_next_open_takes_the_early_descriptor(void **state)
{
	struct stat st;
	char buf[8] = "";
	int fd;

	(void)state;
	assert_int_equal(open_host_input_early(path, O_RDONLY | O_CLOEXEC), 0);
	/* Gone from the path, as a root-only image is from the jail. */
	assert_int_equal(unlink(path), 0);
	fd = open_host_input(path, O_RDONLY | O_CLOEXEC, &st);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 5);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "image");
	close(fd);
	/* Taken once: the next one opens the path, which is gone. */
	assert_int_equal(open_host_input(path, O_RDONLY | O_CLOEXEC, &st),
			 -ENOENT);
}

static void other_flags_open_afresh(void **state)
{
	struct stat st;
	int fd, early_fd;

	(void)state;
	assert_int_equal(open_host_input_early(path, O_RDONLY | O_CLOEXEC), 0);
	fd = open_host_input(path, O_RDWR | O_CLOEXEC, &st);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	close(fd);
	/* The read-only one still waits for its own open. */
	early_fd = open_host_input(path, O_RDONLY | O_CLOEXEC, &st);
	assert_true(early_fd >= 0);
	assert_int_equal(fcntl(early_fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(early_fd);
}

static void the_same_path_twice_is_two_descriptors(void **state)
{
	struct stat st;
	int a, b;

	(void)state;
	assert_int_equal(open_host_input_early(path, O_RDONLY | O_CLOEXEC), 0);
	assert_int_equal(open_host_input_early(path, O_RDONLY | O_CLOEXEC), 0);
	assert_int_equal(unlink(path), 0);
	a = open_host_input(path, O_RDONLY | O_CLOEXEC, &st);
	b = open_host_input(path, O_RDONLY | O_CLOEXEC, &st);
	assert_true(a >= 0);
	assert_true(b >= 0);
	assert_int_not_equal(a, b);
	close(a);
	close(b);
}

static void a_path_that_does_not_open_is_not_kept(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(open_host_input_early("/nonexistent/hvm-image",
					       O_RDONLY | O_CLOEXEC),
			 -ENOENT);
	assert_int_equal(open_host_input("/nonexistent/hvm-image",
					 O_RDONLY | O_CLOEXEC, &st),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			the_next_open_takes_the_early_descriptor, setup,
			teardown),
		cmocka_unit_test_setup_teardown(other_flags_open_afresh, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			the_same_path_twice_is_two_descriptors, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			a_path_that_does_not_open_is_not_kept, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
