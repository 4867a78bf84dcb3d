// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The shim's command line as containerd 1.6 writes it (Go's flag package
 * rules), the socket address containerd's shims derive from (address,
 * namespace, id), and the SHA-256 under it at the block boundaries where
 * padding changes shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shim/sha256.h"
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

static void test_sha256(void **state)
{
	static const struct {
		size_t len;
		const char *hex;
	} v[] = {
		{ 0,
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ 3,
		  "b361d0f9a938a2bb4fbdc9c21dc5a859788041b0040919d8a811c1888184f4df" },
		{ 55,
		  "576a1bf8d4478657e6dc4af9398544765c2a92cde28478b019235cfed315fc09" },
		{ 56,
		  "9b20501dfd1d99161c257950f3444f3e49230c351c5c8e0943ef369f85f5205d" },
		{ 63,
		  "30b345906b493f06f69444b6521113511c242f30e29840462950035043682f1e" },
		{ 64,
		  "d8bc63b4fc1156e5e7d95a418b9bf54cd3174bedbc2db40f74895349b229b3c0" },
		{ 65,
		  "1ee23b0fbcaecc1aff4a9e8f1645f35ab2c8e13609cd73b68df8b5e3f63ce073" },
		{ 119,
		  "7a6589821178918ca8d9edaba5abfc1e9b2669564f4469b66885379c1530b2c8" },
		{ 120,
		  "655250427d56b1b0eeb8497d21428704273458a01772d6881b65c0abac0f8a98" },
		{ 1000,
		  "89f4ff56a25dd1db06a4ce6033603775d705fb96f30f8693733fef602a1ca532" },
	};
	uint8_t data[1000], sum[32];
	char hex[65];

	(void)state;
	/* Bytes i*7: the values Python's hashlib gave for the digests. */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		shim_sha256(data, v[i].len, sum);
		for (int j = 0; j < 32; j++)
			snprintf(hex + 2 * j, 3, "%02x", sum[j]);
		assert_string_equal(hex, v[i].hex);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_socket_address),
		cmocka_unit_test(test_sha256),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
