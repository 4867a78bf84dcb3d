// SPDX-License-Identifier: LGPL-2.1-or-later
/* Host observation parsers against synthetic and malformed files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "sched/observe.h"

static void test_schedstat(void **state)
{
	struct thread_sched s;

	assert_int_equal(observe_parse_schedstat("234402 41202 1\n", &s), 0);
	assert_int_equal(s.run_ns, 234402);
	assert_int_equal(s.wait_ns, 41202);
	assert_int_equal(s.timeslices, 1);
	assert_int_equal(
		observe_parse_schedstat("18446744073709551615 0 0", &s), 0);
	assert_true(s.run_ns == UINT64_MAX);
}

static void test_schedstat_malformed(void **state)
{
	struct thread_sched s = { 7, 7, 7 };
	const char *bad[] = {
		"",
		"\n",
		"1 2\n",
		"1 2 x\n",
		"-1 2 3\n",
		"1 2 3 4\n",
		"18446744073709551616 0 0\n", /* 2^64: overflow */
		"1,2,3\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(observe_parse_schedstat(bad[i], &s), -EINVAL);
	/* Untouched on failure. */
	assert_int_equal(s.run_ns, 7);
}

static void test_pressure(void **state)
{
	struct cpu_pressure p;

	assert_int_equal(
		observe_parse_pressure(
			"some avg10=62.04 avg60=19.38 avg300=5.00 total=18318127\n"
			"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			&p),
		0);
	assert_int_equal(p.avg10_centi, 6204);
	assert_int_equal(p.avg60_centi, 1938);
	assert_int_equal(p.total_us, 18318127);

	/* One decimal, no decimals, 100%, and a future field. */
	assert_int_equal(observe_parse_pressure("some avg10=0.5 avg60=3 "
						"avg300=0 total=1 new=9\n",
						&p),
			 0);
	assert_int_equal(p.avg10_centi, 50);
	assert_int_equal(p.avg60_centi, 300);
	assert_int_equal(
		observe_parse_pressure(
			"some avg10=100.00 avg60=0 avg300=0 total=1", &p),
		0);
	assert_int_equal(p.avg10_centi, 10000);
	/* "full" first is tolerated. */
	assert_int_equal(observe_parse_pressure(
				 "full avg10=1.00 avg60=0 avg300=0 total=5\n"
				 "some avg10=2.00 avg60=0 avg300=0 total=6\n",
				 &p),
			 0);
	assert_int_equal(p.avg10_centi, 200);
	assert_int_equal(p.total_us, 6);
}

static void test_pressure_malformed(void **state)
{
	struct cpu_pressure p;
	const char *bad[] = {
		"",
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=abc avg60=0 avg300=0 total=1\n",
		"some avg10=100.01 avg60=0 avg300=0 total=1\n",
		"some avg10=101 avg60=0 avg300=0 total=1\n",
		"some avg10=1. avg60=0 avg300=0 total=1\n",
		"some avg60=0 avg300=0 total=1\n", /* no avg10 */
		"some avg10=1.00 avg60=0 avg300=0\n", /* no total */
		"some avg10=1.00 total=99999999999999999999\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(observe_parse_pressure(bad[i], &p), -EINVAL);
}

static void test_cpu_stat_v1_and_v2(void **state)
{
	struct cgroup_cpu_stat s;

	assert_int_equal(observe_parse_cpu_stat("nr_periods 10\n"
						"nr_throttled 3\n"
						"throttled_time 123456789\n"
						"nr_bursts 0\n"
						"burst_time 0\n",
						&s),
			 0);
	assert_int_equal(s.nr_periods, 10);
	assert_int_equal(s.nr_throttled, 3);
	assert_int_equal(s.throttled_ns, 123456789);

	assert_int_equal(observe_parse_cpu_stat("usage_usec 1000\n"
						"user_usec 600\n"
						"system_usec 400\n"
						"nr_periods 5\n"
						"nr_throttled 2\n"
						"throttled_usec 250\n",
						&s),
			 0);
	assert_int_equal(s.nr_throttled, 2);
	assert_int_equal(s.throttled_ns, 250000);

	/* v2 without the cpu controller: usage only, no throttling. */
	assert_int_equal(observe_parse_cpu_stat("usage_usec 1\nuser_usec 1\n"
						"system_usec 0\n",
						&s),
			 0);
	assert_int_equal(s.nr_throttled, 0);
	assert_int_equal(s.throttled_ns, 0);
}

static void test_cpu_stat_malformed(void **state)
{
	struct cgroup_cpu_stat s;
	const char *bad[] = {
		"",
		"nr_periods\n",
		"nr_periods x\n",
		"nr_periods 1 2\n",
		" 5\n",
		"nr_throttled -1\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(observe_parse_cpu_stat(bad[i], &s), -EINVAL);
}

static void test_cpulist(void **state)
{
	cpu_set_t set;
	char buf[64];

	assert_int_equal(observe_parse_cpulist("0-3,8,10-11\n", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 7);
	assert_true(CPU_ISSET(8, &set));
	assert_false(CPU_ISSET(9, &set));
	assert_string_equal(observe_format_cpulist(&set, buf, sizeof(buf)),
			    "0-3,8,10-11");
	assert_int_equal(observe_parse_cpulist("\n", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 0);
	assert_string_equal(observe_format_cpulist(&set, buf, sizeof(buf)), "");
	assert_int_equal(observe_parse_cpulist("5", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);

	assert_int_equal(observe_parse_cpulist("3-1", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("0-", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("1,,2", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("1,", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("0-4096", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("a", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("1 2", &set), -EINVAL);
	assert_int_equal(observe_parse_cpulist("1\n2\n", &set), -EINVAL);
}

static void test_cpulist_format_truncates_safely(void **state)
{
	cpu_set_t set;
	char buf[6];

	assert_int_equal(observe_parse_cpulist("0,2,4,6,8,10", &set), 0);
	observe_format_cpulist(&set, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf));
}

/* What this development host has: cgroup v1 plus an empty v2 mount. */
static const char host_cgroup[] = "9:name=systemd:/\n"
				  "4:memory:/process_api/3a1c\n"
				  "3:cpuset:/\n"
				  "2:cpuacct:/\n"
				  "1:cpu:/\n"
				  "0::/\n";
static const char host_mountinfo[] =
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup "
	"rw,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup "
	"rw,cpuset\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 "
	"rw\n";

static void test_cgroup_v1(void **state)
{
	char dir[256];
	bool v2 = true;

	assert_int_equal(observe_find_cgroup_dir(host_cgroup, host_mountinfo,
						 "cpu", dir, sizeof(dir), &v2),
			 0);
	assert_string_equal(dir, "/sys/fs/cgroup/cpu");
	assert_false(v2);
	assert_int_equal(observe_find_cgroup_dir(host_cgroup, host_mountinfo,
						 "cpuset", dir, sizeof(dir),
						 &v2),
			 0);
	assert_string_equal(dir, "/sys/fs/cgroup/cpuset");
	/* "cpu" must not match "cpuacct" or "cpuset" by prefix. */
	assert_int_equal(observe_find_cgroup_dir(host_cgroup, host_mountinfo,
						 "cpuacct", dir, sizeof(dir),
						 &v2),
			 0);
	assert_string_equal(dir, "/sys/fs/cgroup/cpuacct");
}

static void test_cgroup_v1_combined_and_nested(void **state)
{
	char dir[256];
	bool v2;

	assert_int_equal(
		observe_find_cgroup_dir(
			"5:cpu,cpuacct:/machine/vm1\n",
			"40 31 0:40 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup "
			"cgroup rw,cpu,cpuacct\n",
			"cpu", dir, sizeof(dir), &v2),
		0);
	assert_string_equal(dir, "/sys/fs/cgroup/cpu,cpuacct/machine/vm1");
	/* A container sees a bind mount of its own sub-tree. */
	assert_int_equal(
		observe_find_cgroup_dir(
			"5:cpu:/docker/abc\n",
			"40 31 0:40 /docker/abc /sys/fs/cgroup/cpu ro - cgroup "
			"cgroup rw,cpu\n",
			"cpu", dir, sizeof(dir), &v2),
		0);
	assert_string_equal(dir, "/sys/fs/cgroup/cpu");
}

static void test_cgroup_v2(void **state)
{
	char dir[256];
	bool v2 = false;

	assert_int_equal(
		observe_find_cgroup_dir(
			"0::/user.slice/session-1.scope\n",
			"25 20 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"cpu", dir, sizeof(dir), &v2),
		0);
	assert_true(v2);
	assert_string_equal(dir, "/sys/fs/cgroup/user.slice/session-1.scope");
}

static void test_cgroup_missing_or_malformed(void **state)
{
	char dir[256], tiny[8];
	bool v2;

	assert_int_equal(
		observe_find_cgroup_dir("", "", "cpu", dir, sizeof(dir), &v2),
		-ENOENT);
	assert_int_equal(observe_find_cgroup_dir("garbage", "garbage - x",
						 "cpu", dir, sizeof(dir), &v2),
			 -ENOENT);
	/* A controller listed in /proc/self/cgroup but not mounted. */
	assert_int_equal(observe_find_cgroup_dir("1:cpu:/\n", "", "cpu", dir,
						 sizeof(dir), &v2),
			 -ENOENT);
	assert_int_equal(observe_find_cgroup_dir(host_cgroup, host_mountinfo,
						 "cpu", tiny, sizeof(tiny),
						 &v2),
			 -ENAMETOOLONG);
	assert_int_equal(observe_find_cgroup_dir(host_cgroup, host_mountinfo,
						 "", dir, sizeof(dir), &v2),
			 -EINVAL);
}

/* The live wrappers on this machine: only claims every Linux host meets. */
static void test_live_files(void **state)
{
	struct thread_sched s;
	cpu_set_t set;

	assert_int_equal(observe_read_thread(gettid(), &s), 0);
	assert_true(s.run_ns > 0);
	assert_true(observe_allowed_cpus(&set) >= 1);
	assert_int_equal(observe_read_thread(-5, &s), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_schedstat_malformed),
		cmocka_unit_test(test_pressure),
		cmocka_unit_test(test_pressure_malformed),
		cmocka_unit_test(test_cpu_stat_v1_and_v2),
		cmocka_unit_test(test_cpu_stat_malformed),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_cpulist_format_truncates_safely),
		cmocka_unit_test(test_cgroup_v1),
		cmocka_unit_test(test_cgroup_v1_combined_and_nested),
		cmocka_unit_test(test_cgroup_v2),
		cmocka_unit_test(test_cgroup_missing_or_malformed),
		cmocka_unit_test(test_live_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
