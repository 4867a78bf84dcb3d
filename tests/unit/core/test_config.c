// SPDX-License-Identifier: LGPL-2.1-or-later
/* The option table and config files, as a user meets them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "base/parse.h"
#include "core/config.h"

static void test_sizes(void **state)
{
	uint64_t b;

	assert_int_equal(parse_size("512M", &b), 0);
	assert_int_equal(b, 512ULL << 20);
	assert_int_equal(parse_size("2G", &b), 0);
	assert_int_equal(b, 2ULL << 30);
	assert_int_equal(parse_size("2GiB", &b), 0);
	assert_int_equal(b, 2ULL << 30);
	assert_int_equal(parse_size("1024", &b), 0); /* MiB by default */
	assert_int_equal(b, 1ULL << 30);
	assert_int_equal(parse_size("64k", &b), 0);
	assert_int_equal(b, 64ULL << 10);
	assert_int_equal(parse_size("12q", &b), -EINVAL);
	assert_int_equal(parse_size("", &b), -EINVAL);
	assert_int_equal(parse_size("-1G", &b), -EINVAL);
	assert_int_equal(parse_size("1GX", &b), -EINVAL);
	assert_int_equal(parse_size("99999999999999999999", &b), -EINVAL);
	assert_int_equal(parse_size("17179869184T", &b), -EINVAL);
}

static void test_rates(void **state)
{
	uint64_t b;

	assert_int_equal(parse_rate("1048576", &b), 0); /* bytes, not MiB */
	assert_int_equal(b, 1048576);
	assert_int_equal(parse_rate("10M", &b), 0);
	assert_int_equal(b, 10ULL << 20);
	assert_int_equal(parse_rate("512K/s", &b), 0);
	assert_int_equal(b, 512ULL << 10);
	assert_int_equal(parse_rate("1GiB/s", &b), 0);
	assert_int_equal(b, 1ULL << 30);
	assert_int_equal(parse_rate("0", &b), -EINVAL);
	assert_int_equal(parse_rate("/s", &b), -EINVAL);
	assert_int_equal(parse_rate("10M/h", &b), -EINVAL);
	assert_int_equal(parse_rate("fast", &b), -EINVAL);
}

/* --disk iops=/bw= and --net bw=, and the sandbox switch and its default. */
static void test_limits_and_sandbox(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_int_equal(hvm_config_set(cfg, "disk", "a.img,iops=200,bw=4M/s"),
			 0);
	assert_int_equal(cfg->disks[0].iops, 200);
	assert_int_equal(cfg->disks[0].bw, 4ULL << 20);
	assert_int_equal(hvm_config_set(cfg, "disk", "b.img,iops=0"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "'iops=0' is not a rate"));
	assert_int_equal(hvm_config_set(cfg, "disk", "b.img,bw=lots"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "net", "tap=t0,bw=1M"), 0);
	assert_int_equal(cfg->nets[0].bw, 1ULL << 20);
	assert_int_equal(hvm_config_set(cfg, "net", "tap=t0,bw=x"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "'bw=x' is not a rate"));

	assert_false(cfg->sandbox); /* the library's default */
	assert_int_equal(hvm_config_set_default(cfg, "sandbox", "on"), 0);
	assert_true(cfg->sandbox);
	/* A default leaves the option open to a config file. */
	{
		char path[] = "/tmp/hvm-cfg-XXXXXX";
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "sandbox = off\n", 14), 14);
		close(fd);
		assert_int_equal(hvm_config_load_file(cfg, path), 0);
		unlink(path);
	}
	assert_false(cfg->sandbox);
	hvm_config_free(cfg);
}

static void test_option_values(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_int_equal(cfg->cpus, 1);
	assert_int_equal(hvm_config_set(cfg, "cpus", "4"), 0);
	assert_int_equal(cfg->cpus, 4);
	assert_int_equal(hvm_config_set(cfg, "cpus", "0"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "--cpus: '0'"));
	assert_int_equal(hvm_config_set(cfg, "cpus", "9999"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "cpus", "2x"), -EINVAL);
	assert_int_equal(cfg->cpus, 4); /* bad values change nothing */

	/* The guest-object budget: 64 MiB unless asked; 256 KiB at least. */
	assert_int_equal(cfg->guest_objects, 64ULL << 20);
	assert_int_equal(hvm_config_set(cfg, "guest-objects", "1G"), 0);
	assert_int_equal(cfg->guest_objects, 1ULL << 30);
	assert_int_equal(hvm_config_set(cfg, "guest-objects", "100K"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(),
			       "--guest-objects: '100K' is too small"));
	assert_int_equal(hvm_config_set(cfg, "guest-objects", "lots"), -EINVAL);
	assert_non_null(
		strstr(hvm_last_error(), "'lots' is not a memory size"));
	assert_int_equal(cfg->guest_objects, 1ULL << 30);

	/* --user: none in the library; auto, none, UID or UID:GID; never 0. */
	assert_int_equal(cfg->user_mode, HVM_USER_NONE);
	assert_int_equal(hvm_config_set(cfg, "user", "1000"), 0);
	assert_int_equal(cfg->user_mode, HVM_USER_ID);
	assert_int_equal(cfg->user_uid, 1000);
	assert_int_equal(cfg->user_gid, 1000);
	assert_int_equal(hvm_config_set(cfg, "user", "1000:27"), 0);
	assert_int_equal(cfg->user_gid, 27);
	assert_int_equal(hvm_config_set(cfg, "user", "0"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "--user 0: expected auto"));
	assert_int_equal(hvm_config_set(cfg, "user", "1:0"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "user", "4294967295"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "user", "web"), -EINVAL);
	assert_int_equal(cfg->user_uid, 1000); /* bad values change nothing */
	assert_int_equal(hvm_config_set(cfg, "user", "auto"), 0);
	assert_int_equal(cfg->user_mode, HVM_USER_AUTO);
	assert_int_equal(cfg->user_first, HVM_USER_RANGE_FIRST);
	assert_int_equal(hvm_config_set(cfg, "user-range", "5000-5009"), 0);
	assert_int_equal(cfg->user_first, 5000);
	assert_int_equal(cfg->user_last, 5009);
	assert_int_equal(hvm_config_set(cfg, "user-range", "9-5"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "FIRST <= LAST"));
	assert_int_equal(hvm_config_set(cfg, "user-range", "5000"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "user-range", "0-9"), -EINVAL);
	assert_int_equal(cfg->user_last, 5009);

	assert_int_equal(hvm_config_set(cfg, "mem", "0"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "too small"));
	assert_int_equal(hvm_config_set(cfg, "mem", "12q"), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "'12q' is not a memory size"));
	assert_int_equal(hvm_config_set(cfg, "mem", "4097K"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(cfg->mem, 64ULL << 20);

	assert_int_equal(hvm_config_set(cfg, "hugepages", NULL), 0);
	assert_true(cfg->hugepages);
	assert_int_equal(hvm_config_set(cfg, "hugepages", "off"), 0);
	assert_false(cfg->hugepages);
	assert_int_equal(hvm_config_set(cfg, "hugepages", "maybe"), -EINVAL);

	/* --core-sched: off unless asked; a bad mode changes nothing. */
	assert_int_equal(cfg->core_sched, HVM_CORE_SCHED_OFF);
	assert_int_equal(hvm_config_set(cfg, "core-sched", "vcpu"), 0);
	assert_int_equal(cfg->core_sched, HVM_CORE_SCHED_VCPU);
	assert_int_equal(hvm_config_set(cfg, "core-sched", "vm"), 0);
	assert_int_equal(cfg->core_sched, HVM_CORE_SCHED_VM);
	assert_int_equal(hvm_config_set(cfg, "core-sched", "on"), -EINVAL);
	assert_non_null(
		strstr(hvm_last_error(),
		       "--core-sched: 'on' is not a core scheduling mode"));
	assert_int_equal(hvm_config_set(cfg, "core-sched", NULL), -EINVAL);
	assert_int_equal(cfg->core_sched, HVM_CORE_SCHED_VM);
	assert_string_equal(config_core_sched_name(cfg->core_sched), "vm");
	assert_int_equal(hvm_config_set(cfg, "core-sched", "off"), 0);
	assert_int_equal(cfg->core_sched, HVM_CORE_SCHED_OFF);

	assert_int_equal(hvm_config_set(cfg, "console", "ttyS9"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "kernel", ""), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "no-such-option", "1"), -EINVAL);
	assert_non_null(
		strstr(hvm_last_error(), "unknown option 'no-such-option'"));
	hvm_config_free(cfg);
}

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/hintvm-config-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_config_file_and_precedence(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	char *path = write_temp("# a VM profile\n"
				"cpus = 2\n"
				"  mem=128M   # trailing comment\n"
				"\n"
				"--cmdline = console=ttyS0 test=ipi\n"
				"hugepages\n");

	/* Set on the command line before the file: the command line wins. */
	assert_int_equal(hvm_config_set(cfg, "cpus", "3"), 0);
	assert_int_equal(hvm_config_load_file(cfg, path), 0);
	assert_int_equal(cfg->cpus, 3);
	assert_int_equal(cfg->mem, 128ULL << 20);
	assert_string_equal(cfg->cmdline, "console=ttyS0 test=ipi");
	assert_true(cfg->hugepages);
	unlink(path);
	free(path);
	hvm_config_free(cfg);
}

static void test_config_file_errors_name_file_and_line(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	char *path = write_temp("cpus = 2\nmemory = 1G\n");
	char expect[128];

	assert_int_equal(hvm_config_load_file(cfg, path), -EINVAL);
	snprintf(expect, sizeof(expect), "%s:2: unknown option 'memory'", path);
	assert_non_null(strstr(hvm_last_error(), expect));
	unlink(path);
	free(path);

	path = write_temp("mem = lots\n");
	assert_int_equal(hvm_config_load_file(cfg, path), -EINVAL);
	snprintf(expect, sizeof(expect), "%s:1: --mem: 'lots'", path);
	assert_non_null(strstr(hvm_last_error(), expect));
	unlink(path);
	free(path);

	path = write_temp("cpus\n");
	assert_int_equal(hvm_config_load_file(cfg, path), -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "needs a value"));
	unlink(path);
	free(path);

	assert_true(hvm_config_load_file(cfg, "/nonexistent/x.conf") < 0);
	assert_non_null(strstr(hvm_last_error(), "/nonexistent/x.conf"));
	hvm_config_free(cfg);
}

static void test_config_file_cannot_include_itself_forever(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	char *path = write_temp("");
	char text[128];
	FILE *f;

	snprintf(text, sizeof(text), "config = %s\n", path);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	assert_int_equal(hvm_config_load_file(cfg, path), -ELOOP);
	unlink(path);
	free(path);
	hvm_config_free(cfg);
}

static void test_option_table_is_described(void **state)
{
	size_t n;
	const struct hvm_option_info *opts = hvm_options(&n);

	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(opts[i].name);
		assert_non_null(opts[i].help);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_limits_and_sandbox),
		cmocka_unit_test(test_option_values),
		cmocka_unit_test(test_config_file_and_precedence),
		cmocka_unit_test(test_config_file_errors_name_file_and_line),
		cmocka_unit_test(
			test_config_file_cannot_include_itself_forever),
		cmocka_unit_test(test_option_table_is_described),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
