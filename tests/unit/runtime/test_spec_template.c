// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `hintvm-runtime spec` (src/runtime/spec_template.c): the starter
 * config.json is one this runtime runs as it is, with no warning, and it
 * says what runc's says; the command writes it once and never over an
 * existing configuration. (tests/oci/lifecycle-test.sh drives the binary.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "runtime/runtime.h"
#include "runtime/spec.h"

struct rt_globals rt = { .root = "/nonexistent" };

static void test_template_parses_without_warnings(void **state)
{
	struct oci_spec s;
	char err[256] = "";

	(void)state;
	assert_int_equal(oci_spec_parse(rt_spec_template,
					strlen(rt_spec_template), &s, err,
					sizeof(err)),
			 0);
	for (size_t i = 0; i < s.nwarnings; i++)
		print_message("warning: %s\n", s.warnings[i]);
	assert_int_equal(s.nwarnings, 0);
	assert_string_equal(s.oci_version, RT_OCI_VERSION);
	assert_true(s.process.terminal);
	assert_int_equal(s.process.nargs, 1);
	assert_string_equal(s.process.args[0], "sh");
	assert_string_equal(s.process.cwd, "/");
	assert_int_equal(s.process.uid, 0);
	assert_true(s.process.no_new_privileges);
	assert_true(s.process.has_capabilities);
	assert_string_equal(s.root_path, "rootfs");
	assert_true(s.root_readonly);
	assert_int_equal(s.nmounts, 7);
	assert_string_equal(s.mounts[0].destination, "/proc");
	oci_spec_free(&s);
}

static char *read_all(const char *path)
{
	static char buf[16384];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static void test_spec_writes_once(void **state)
{
	char dir[] = "/tmp/hvm-spec-XXXXXX", path[64];
	char *argv[] = { "spec", "--bundle", dir, NULL };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/config.json", dir);
	assert_int_equal(cmd_spec(3, argv), 0);
	assert_string_equal(read_all(path), rt_spec_template);

	/* A configuration of one's own stays as it is. */
	{
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "{}", 2), 2);
		close(fd);
	}
	assert_int_equal(cmd_spec(3, argv), 1);
	assert_string_equal(read_all(path), "{}");
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_parses_without_warnings),
		cmocka_unit_test(test_spec_writes_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
