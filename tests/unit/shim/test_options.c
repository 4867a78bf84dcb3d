// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CreateTaskRequest.options as containerd 1.6 sends them to a runtime
 * other than runc: nothing, or runtimeoptions.v1.Options whose
 * config_path names hintvm-runtime's configuration; anything else is
 * refused with a message naming it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime_options.pb-c.h"
#include "shim/shim.h"

static char path[4096], err[512];
static uint8_t value[512];

/* An Any of runtimeoptions.v1.Options with TYPE_URL and CONFIG. */
static Google__Protobuf__Any options(const char *type_url, const char *config)
{
	Runtimeoptions__V1__Options o = RUNTIMEOPTIONS__V1__OPTIONS__INIT;
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;

	o.type_url = (char *)type_url;
	o.config_path = (char *)config;
	any.type_url = "runtimeoptions.v1.Options";
	any.value.len = runtimeoptions__v1__options__pack(&o, value);
	any.value.data = value;
	return any;
}

static void expect_refused(const Google__Protobuf__Any *any, int ret,
			   const char *in_msg)
{
	err[0] = '\0';
	assert_int_equal(
		shim_parse_options(any, path, sizeof(path), err, sizeof(err)),
		ret);
	if (!strstr(err, in_msg))
		fail_msg("message '%s' lacks '%s'", err, in_msg);
	assert_string_equal(path, "");
}

static void test_none(void **state)
{
	Google__Protobuf__Any empty = GOOGLE__PROTOBUF__ANY__INIT;

	(void)state;
	strcpy(path, "x");
	assert_int_equal(
		shim_parse_options(NULL, path, sizeof(path), err, sizeof(err)),
		0);
	assert_string_equal(path, "");
	assert_int_equal(shim_parse_options(&empty, path, sizeof(path), err,
					    sizeof(err)),
			 0);
	assert_string_equal(path, "");
}

static void test_config_path(void **state)
{
	Google__Protobuf__Any any = options("", "/proc/self/status");

	(void)state;
	assert_int_equal(
		shim_parse_options(&any, path, sizeof(path), err, sizeof(err)),
		0);
	assert_string_equal(path, "/proc/self/status");
	/* No config_path: nothing asked. */
	any = options("", "");
	assert_int_equal(
		shim_parse_options(&any, path, sizeof(path), err, sizeof(err)),
		0);
	assert_string_equal(path, "");
}

static void test_refused(void **state)
{
	Google__Protobuf__Any any;
	uint8_t junk[] = { 0x0a, 0x7f, 0x01 };
	uint8_t extra[] = { 0x18, 0x01 }; /* field 3, varint 1 */

	(void)state;
	/* runc's options: not ours to honour. */
	any = options("", "/etc/hintvm/runtime.conf");
	any.type_url = "containerd.runc.v1.Options";
	expect_refused(
		&any, -EINVAL,
		"runtime options of type \"containerd.runc.v1.Options\": expected none or runtimeoptions.v1.Options");
	any = options("", "relative/runtime.conf");
	expect_refused(
		&any, -EINVAL,
		"config_path \"relative/runtime.conf\": expected an absolute path");
	any = options("", "/nonexistent/runtime.conf");
	expect_refused(
		&any, -ENOENT,
		"config_path /nonexistent/runtime.conf: No such file or directory");
	any = options("", "/proc/self");
	expect_refused(&any, -ENOENT, "/proc/self: not a regular file");
	any = options("io.containerd.hintvm.v1.Config", "/proc/self/status");
	expect_refused(
		&any, -EINVAL,
		"type_url \"io.containerd.hintvm.v1.Config\": hintvm-runtime's configuration file has no type");
	any = options("", "");
	any.value.data = junk;
	any.value.len = sizeof(junk);
	expect_refused(&any, -EINVAL,
		       "not a valid runtimeoptions.v1.Options message");
	any.value.data = extra;
	any.value.len = sizeof(extra);
	expect_refused(
		&any, -EINVAL,
		"runtimeoptions.v1.Options with 1 field(s) other than type_url and config_path");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_config_path),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
