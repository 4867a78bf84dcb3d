// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of src/runtime/guest_config.c: the runtime configuration
 * file and linux.resources -> vCPUs, RAM and pinning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/guest_config.h"

static void test_file(void **state)
{
	struct rt_guest_config g;
	char err[256] = "";

	rt_guest_config_defaults(&g);
	assert_non_null(g.kernel);
	assert_non_null(strstr(g.kernel, "/boot/vmlinuz-"));
	assert_true(g.rootfs_share);
	assert_int_equal(rt_guest_config_parse(&g,
					       "# comment\n"
					       "rootfs = initramfs\n"
					       "kernel = /k  \n"
					       "initrd=/agent.cpio\n"
					       "mem = 512M # trailing\n"
					       "mem-overhead = 32M\n"
					       "cpus = 2\n"
					       "halt-poll = off\n"
					       "hugepages\n",
					       err, sizeof(err)),
			 0);
	assert_string_equal(g.kernel, "/k");
	assert_false(g.rootfs_share);
	assert_string_equal(g.initrd, "/agent.cpio");
	assert_int_equal(g.mem_mib, 512);
	assert_int_equal(g.overhead_mib, 32);
	assert_int_equal(g.cpus, 2);
	assert_int_equal(g.noptions, 2);
	assert_string_equal(g.options[0].key, "halt-poll");
	assert_string_equal(g.options[0].value, "off");
	assert_string_equal(g.options[1].key, "hugepages");
	assert_null(g.options[1].value);
	rt_guest_config_free(&g);

	rt_guest_config_defaults(&g);
	assert_int_not_equal(
		rt_guest_config_parse(&g, "cpus = 0\n", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "line 1"));
	assert_int_not_equal(
		rt_guest_config_parse(&g, "\nmem = lots\n", err, sizeof(err)),
		0);
	assert_non_null(strstr(err, "line 2"));
	rt_guest_config_free(&g);
}

/*
 * template = auto|off is the runtime's own switch (the node owner's), not
 * hintvm's option of that name: off by default, kept out of the options
 * every VM gets, and any other value refused naming the line.
 */
static void test_template_switch(void **state)
{
	struct rt_guest_config g;
	char err[256] = "";

	(void)state;
	rt_guest_config_defaults(&g);
	assert_false(g.template_auto);
	assert_int_equal(rt_guest_config_parse(&g,
					       "template = auto\n"
					       "template-dir = /var/lib/t\n",
					       err, sizeof(err)),
			 0);
	assert_true(g.template_auto);
	assert_int_equal(g.noptions, 1);
	assert_string_equal(g.options[0].key, "template-dir");
	assert_int_equal(
		rt_guest_config_parse(&g, "template = off\n", err, sizeof(err)),
		0);
	assert_false(g.template_auto);
	assert_int_not_equal(rt_guest_config_parse(&g, "\ntemplate = 3f1c\n",
						   err, sizeof(err)),
			     0);
	assert_string_equal(err,
			    "line 2: template = \"3f1c\": use auto or off");
	rt_guest_config_free(&g);
}

static void test_sizes(void **state)
{
	uint64_t mib;

	assert_int_equal(rt_parse_mib("256M", &mib), 0);
	assert_int_equal(mib, 256);
	assert_int_equal(rt_parse_mib("2G", &mib), 0);
	assert_int_equal(mib, 2048);
	assert_int_equal(rt_parse_mib("1048577", &mib), 0);
	assert_int_equal(mib, 2); /* bytes round up */
	assert_int_equal(rt_parse_mib("64MiB", &mib), 0);
	assert_int_equal(mib, 64);
	assert_int_not_equal(rt_parse_mib("-1M", &mib), 0);
	assert_int_not_equal(rt_parse_mib("12X", &mib), 0);
	assert_int_not_equal(rt_parse_mib("99999999999999999999G", &mib), 0);
}

static void test_resources(void **state)
{
	struct rt_guest_config g;
	struct oci_resources r = { 0 };
	struct rt_vm_resources out;
	char err[256];

	rt_guest_config_defaults(&g);
	/* Nothing asked: the defaults. */
	assert_int_equal(rt_map_resources(&g, &r, 8, &out, err, sizeof(err)),
			 0);
	assert_int_equal(out.cpus, 1);
	assert_int_equal(out.mem_mib, RT_DEFAULT_MEM_MIB);
	assert_string_equal(out.pin, "");

	/* 1.5 CPUs of quota -> 2 vCPUs. */
	r.cpu_quota = 150000;
	r.cpu_period = 100000;
	assert_int_equal(rt_map_resources(&g, &r, 8, &out, err, sizeof(err)),
			 0);
	assert_int_equal(out.cpus, 2);
	/* ... never more than the host has. */
	r.cpu_quota = 1600000;
	assert_int_equal(rt_map_resources(&g, &r, 8, &out, err, sizeof(err)),
			 0);
	assert_int_equal(out.cpus, 8);

	/* A cpuset: as many vCPUs, pinned there. */
	r.cpu_quota = 0;
	r.cpuset_cpus = "2-3,6";
	assert_int_equal(rt_map_resources(&g, &r, 8, &out, err, sizeof(err)),
			 0);
	assert_int_equal(out.cpus, 3);
	assert_string_equal(out.pin, "2-3,6");
	r.cpuset_cpus = "3-1";
	assert_int_not_equal(
		rt_map_resources(&g, &r, 8, &out, err, sizeof(err)), 0);
	r.cpuset_cpus = NULL;

	/* Memory limit: the VM fits it, overhead included. */
	r.memory_limit = 512ll << 20;
	assert_int_equal(rt_map_resources(&g, &r, 8, &out, err, sizeof(err)),
			 0);
	assert_int_equal(out.mem_mib, 512 - RT_DEFAULT_OVERHEAD_MIB);
	r.memory_limit = 64ll << 20;
	assert_int_not_equal(
		rt_map_resources(&g, &r, 8, &out, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "below what a VM needs"));
	rt_guest_config_free(&g);
}

static void test_annotation_allow_list(void **state)
{
	struct rt_guest_config g;
	char err[64];

	rt_guest_config_defaults(&g);
	assert_true(rt_annotation_allowed(&g, "halt-poll"));
	assert_true(rt_annotation_allowed(&g, "sched-hints"));
	assert_false(rt_annotation_allowed(&g, "kernel"));
	assert_false(rt_annotation_allowed(&g, "disk"));
	assert_false(rt_annotation_allowed(&g, "halt"));
	assert_int_equal(rt_guest_config_parse(&g, "annotations = kernel , pin",
					       err, sizeof(err)),
			 0);
	assert_true(rt_annotation_allowed(&g, "kernel"));
	assert_true(rt_annotation_allowed(&g, "pin"));
	assert_false(rt_annotation_allowed(&g, "halt-poll"));
	rt_guest_config_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_template_switch),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_annotation_allow_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
