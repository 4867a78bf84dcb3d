// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest agent's STATS numbers (guest-firmware/agent/task_cgroup.c),
 * read from a directory laid out as cgroup v2 lays out the task's cgroup:
 * the values as the shim's Stats reports them, "max" as the guest's RAM
 * (memory) or no limit (pids), and what is missing or garbled as unknown.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/agent.h"

void agent_log(const char *fmt, ...)
{
	(void)fmt;
}

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static uint64_t stat_of(const struct agent_stats *s, int attr)
{
	return s->value[AGENT_STAT(attr)];
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/hvm-task-cgroup-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_numbers(void **state)
{
	struct agent_stats s;
	struct sysinfo si;
	int fd;

	(void)state;
	put("cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"
			"nr_periods 0\n");
	put("memory.current", "4096\n");
	put("memory.max", "max\n");
	put("pids.current", "3\n");
	put("pids.max", "max\n");
	/* "oom" is not "oom_kill". */
	put("memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\n");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	agent_task_cgroup_read(fd, &s);
	assert_int_equal(stat_of(&s, AGENT_ATTR_CPU_USAGE_NS), 1500000);
	assert_int_equal(stat_of(&s, AGENT_ATTR_CPU_USER_NS), 1000000);
	assert_int_equal(stat_of(&s, AGENT_ATTR_CPU_SYSTEM_NS), 500000);
	assert_int_equal(stat_of(&s, AGENT_ATTR_MEM_USAGE), 4096);
	/* No limit of its own: the guest's memory is the limit. */
	assert_int_equal(sysinfo(&si), 0);
	assert_int_equal(stat_of(&s, AGENT_ATTR_MEM_LIMIT),
			 (uint64_t)si.totalram * si.mem_unit);
	assert_int_equal(stat_of(&s, AGENT_ATTR_PIDS_CURRENT), 3);
	assert_int_equal(stat_of(&s, AGENT_ATTR_PIDS_LIMIT), 0);
	assert_int_equal(stat_of(&s, AGENT_ATTR_OOM_KILLS), 1);

	put("memory.max", "268435456\n");
	put("pids.max", "128\n");
	agent_task_cgroup_read(fd, &s);
	assert_int_equal(stat_of(&s, AGENT_ATTR_MEM_LIMIT), 268435456);
	assert_int_equal(stat_of(&s, AGENT_ATTR_PIDS_LIMIT), 128);
	close(fd);
}

static void test_missing_and_garbled(void **state)
{
	struct agent_stats s;
	int fd;

	(void)state;
	put("memory.current", "lots\n");
	put("cpu.stat", "nr_periods 0\n");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	agent_task_cgroup_read(fd, &s);
	for (int a = AGENT_ATTR_CPU_USAGE_NS; a <= AGENT_ATTR_OOM_KILLS; a++)
		assert_true(stat_of(&s, a) == AGENT_STATS_UNKNOWN);
	close(fd);
}

static void read_back(const char *name, char *buf, size_t len)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	fclose(f);
}

/*
 * A pod container's cgroup beside the task's ("ctr-NAME" under the root):
 * its memory.max written, its cgroup.procs handed back for the process to
 * join; a name that is no container id refused; a limit that cannot be
 * written (no memory controller there) is an error, never ignored.
 */
static void test_container_cgroup(void **state)
{
	char buf[128];
	int task, fd;

	(void)state;
	snprintf(buf, sizeof(buf), "%s/task", dir);
	assert_int_equal(mkdir(buf, 0755), 0);
	/* What cgroup2 would show in a new cgroup's directory. */
	snprintf(buf, sizeof(buf), "%s/ctr-c1", dir);
	assert_int_equal(mkdir(buf, 0755), 0);
	put("ctr-c1/memory.max", "max\n");
	put("ctr-c1/cgroup.procs", "");
	put("ctr-c1/memory.events", "oom 1\noom_kill 1\n");
	snprintf(buf, sizeof(buf), "%s/task", dir);
	task = open(buf, O_RDONLY | O_DIRECTORY);
	assert_true(task >= 0);

	fd = agent_ctr_cgroup_prepare(task, "c1", 33554432);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0", 1), 1);
	close(fd);
	read_back("ctr-c1/memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "33554432");
	read_back("ctr-c1/cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	/* An exec joining it leaves the limit alone. */
	fd = agent_ctr_cgroup_prepare(task, "c1", 0);
	assert_true(fd >= 0);
	close(fd);
	read_back("ctr-c1/memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "33554432");
	/* STATS for it: its own numbers. */
	fd = agent_ctr_cgroup_open(task, "c1");
	assert_true(fd >= 0);
	{
		struct agent_stats s;

		agent_task_cgroup_read(fd, &s);
		assert_int_equal(stat_of(&s, AGENT_ATTR_OOM_KILLS), 1);
		assert_int_equal(stat_of(&s, AGENT_ATTR_MEM_LIMIT), 33554432);
	}
	close(fd);

	assert_int_equal(agent_ctr_cgroup_open(task, "c2"), -ENOENT);
	assert_int_equal(agent_ctr_cgroup_open(task, "../task"), -EINVAL);
	assert_int_equal(agent_ctr_cgroup_prepare(task, "a/b", 0), -EINVAL);
	assert_int_equal(agent_ctr_cgroup_prepare(task, ".x", 0), -EINVAL);
	/* A plain directory has no memory.max: the limit cannot be set. */
	assert_int_equal(agent_ctr_cgroup_prepare(task, "c3", 1 << 20),
			 -ENOENT);
	close(task);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_garbled, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_container_cgroup, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
