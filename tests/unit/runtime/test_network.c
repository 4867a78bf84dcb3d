// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the runtime hands the guest about the container's network
 * (src/runtime/network.c): the "net" file oci-init reads, and the IPv6
 * default gateway from /proc/net/ipv6_route's format.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/network.h"

static void test_ipv4_only(void **state)
{
	struct rt_net net = { .address = "10.89.0.7",
			      .prefix = 24,
			      .gateway = "10.89.0.1",
			      .mtu = 1500 };
	char buf[512];

	assert_int_equal(rt_net_guest_line(&net, buf, sizeof(buf)),
			 (int)strlen("10.89.0.7 24 10.89.0.1 1500\n"));
	assert_string_equal(buf, "10.89.0.7 24 10.89.0.1 1500\n");
}

static void test_dual_stack_and_ipv6_only(void **state)
{
	struct rt_net net = { .address = "10.89.0.7",
			      .prefix = 24,
			      .mtu = 1400,
			      .nr_v6 = 2,
			      .address6 = { "fd00:89::7", "2001:db8::7" },
			      .prefix6 = { 64, 48 },
			      .gateway6 = "fd00:89::1" };
	char buf[512];

	assert_true(rt_net_guest_line(&net, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "10.89.0.7 24 - 1400\n"
				 "inet6 fd00:89::7 64 fd00:89::1\n"
				 "inet6 2001:db8::7 48 fd00:89::1\n");
	/* No IPv4 address: the first line still carries the MTU. */
	net.address[0] = '\0';
	net.prefix = 0;
	net.nr_v6 = 1;
	net.gateway6[0] = '\0';
	assert_true(rt_net_guest_line(&net, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "- 0 - 1400\ninet6 fd00:89::7 64 -\n");
}

static void test_too_small_a_buffer(void **state)
{
	struct rt_net net = { .address = "10.89.0.7",
			      .prefix = 24,
			      .mtu = 1500,
			      .nr_v6 = 1,
			      .address6 = { "fd00:89::7" },
			      .prefix6 = { 64 } };
	char buf[24];

	assert_int_equal(rt_net_guest_line(&net, buf, sizeof(buf)), -ENOSPC);
	assert_int_equal(rt_net_guest_line(&net, buf, 8), -ENOSPC);
}

static void test_ipv6_default_route(void **state)
{
	/* As the kernel writes it: local routes, a prefix route, the
	 * default route via fd00:89::1 on eth0, another on eth1. */
	static const char table[] =
		"fd000089000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000089000000000000000000000009 00000400 00000001 00000000 00000003     eth1\n"
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000089000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n"
		"00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n";
	char gw[RT_NET_V6_LEN];
	FILE *f = fmemopen((void *)table, sizeof(table) - 1, "r");

	assert_non_null(f);
	rt_net_parse_ipv6_route(f, "eth0", gw);
	assert_string_equal(gw, "fd00:89::1");
	rewind(f);
	rt_net_parse_ipv6_route(f, "eth2", gw);
	assert_string_equal(gw, "");
	fclose(f);
	/* A default route without a next hop (a device route) is none. */
	static const char direct[] =
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 00000400 00000001 00000000 00000001     eth0\n";
	f = fmemopen((void *)direct, sizeof(direct) - 1, "r");
	rt_net_parse_ipv6_route(f, "eth0", gw);
	assert_string_equal(gw, "");
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_only),
		cmocka_unit_test(test_dual_stack_and_ipv6_only),
		cmocka_unit_test(test_too_small_a_buffer),
		cmocka_unit_test(test_ipv6_default_route),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
