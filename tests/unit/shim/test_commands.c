// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The shim's command line as containerd 1.6 writes it (Go's flag package
 * rules), the socket address containerd's shims derive from (address,
 * namespace, id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shim/shim.h"

struct rt_globals rt;

static int parse(struct shim_flags *f, ...)
{
	char *argv[32] = { "containerd-shim-hintvm-v2" };
	int argc = 1;
	va_list ap;

	va_start(ap, f);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return shim_parse_flags(argc, argv, f);
}

static void test_flags(void **state)
{
	struct shim_flags f;

	(void)state;
	/* What containerd 1.6's binary manager runs for start. */
	assert_int_equal(parse(&f, "-namespace", "k8s.io", "-address",
			       "/run/containerd/containerd.sock",
			       "-publish-binary", "/usr/bin/containerd", "-id",
			       "abc", "-debug", "start", NULL),
			 0);
	assert_string_equal(f.namespace, "k8s.io");
	assert_string_equal(f.address, "/run/containerd/containerd.sock");
	assert_string_equal(f.publish_binary, "/usr/bin/containerd");
	assert_string_equal(f.id, "abc");
	assert_true(f.debug);
	assert_string_equal(f.action, "start");
	/* Go's other spellings: --name, -name=value, -bool=false. */
	assert_int_equal(parse(&f, "--namespace=default", "-id=x",
			       "-debug=false", "--bundle", "/b", "delete",
			       NULL),
			 0);
	assert_string_equal(f.namespace, "default");
	assert_string_equal(f.id, "x");
	assert_false(f.debug);
	assert_string_equal(f.bundle, "/b");
	assert_string_equal(f.action, "delete");
	/* No action: the long-lived shim. */
	assert_int_equal(parse(&f, "-namespace", "n", "-socket", "/s", NULL),
			 0);
	assert_null(f.action);
	assert_string_equal(f.socket, "/s");
	assert_int_equal(parse(&f, "-v", NULL), 0);
	assert_true(f.version);
	/* Flags after the action are its arguments, not flags. */
	assert_int_equal(parse(&f, "start", "-bogus", NULL), 0);
	assert_string_equal(f.action, "start");

	assert_int_equal(parse(&f, "-bogus", NULL), -1);
	assert_int_equal(parse(&f, "-namespace", NULL), -1);
	assert_int_equal(parse(&f, "-debug=maybe", NULL), -1);
	assert_int_equal(
		parse(&f, "-averyveryveryverylongflagnamethatnobodyuses", NULL),
		-1);
}

static void test_socket_address(void **state)
{
	char addr[128];

	(void)state;
	/* The same as containerd 1.6's shim.SocketAddress for these. */
	shim_socket_address("/run/containerd/containerd.sock", "default", "t5",
			    addr, sizeof(addr));
	assert_string_equal(
		addr,
		"unix:///run/containerd/s/ce0e2df620ec26a54d642c3c03a668d96be1677aa50a3dc16ff35b48b57344af");
	/* Too small a buffer is cut, never overrun. */
	memset(addr, 'X', sizeof(addr));
	shim_socket_address("/a", "b", "c", addr, 30);
	assert_int_equal(strlen(addr), 29);
	assert_int_equal(addr[30], 'X');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_socket_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
