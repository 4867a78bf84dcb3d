// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The task's cgroup in a container VM (docs/shim.md, Stats): hintvm-oci-init
 * makes it before anything of the container runs, moves itself into it
 * (so that the agent, the container's process and every exec inherit it)
 * and hands the agent an open directory of it; the agent reads the
 * numbers from there on STATS. cgroup v2 only: the guest kernel is ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "agent.h"

int agent_task_cgroup_setup(const char *mnt)
{
	int root, dir, fd;

	if (mkdir(mnt, 0755) && errno != EEXIST)
		return -errno;
	if (mount("cgroup2", mnt, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL))
		return -errno;
	root = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	/* Each on its own: a kernel without one still counts the others. */
	static const char *const controllers[] = { "+cpu", "+memory", "+pids" };
	for (unsigned int i = 0; i < 3; i++) {
		fd = openat(root, "cgroup.subtree_control",
			    O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, controllers[i], strlen(controllers[i])) <
			    0)
				agent_log("cgroup: %s: %s", controllers[i],
					  strerror(errno));
			close(fd);
		}
	}
	if (mkdirat(root, "task", 0755) && errno != EEXIST) {
		int e = -errno;

		close(root);
		return e;
	}
	dir = openat(root, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(root);
	if (dir < 0)
		return -errno;
	fd = openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		int e = -errno;

		if (fd >= 0)
			close(fd);
		close(dir);
		return e;
	}
	close(fd);
	return dir;
}

/* The file NAME of DIR into BUF (NUL-terminated); its length or -errno. */
static ssize_t read_small(int dir, const char *name, char *buf, size_t cap)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* A file of one number, or "max" (MAX_VALUE then). */
static uint64_t read_number(int dir, const char *name, uint64_t max_value)
{
	char buf[64], *end;
	uint64_t v;

	if (read_small(dir, name, buf, sizeof(buf)) <= 0)
		return AGENT_STATS_UNKNOWN;
	if (!strncmp(buf, "max", 3))
		return max_value;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return AGENT_STATS_UNKNOWN;
	return v;
}

/* KEY's value in a flat keyed file's text ("key value\n" lines). */
static uint64_t keyed(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');

		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtoull(p + klen + 1, NULL, 10);
		if (!nl)
			break;
		p = nl + 1;
	}
	return AGENT_STATS_UNKNOWN;
}

static uint64_t usec_to_ns(uint64_t usec)
{
	return usec == AGENT_STATS_UNKNOWN ? usec : usec * 1000;
}

void agent_task_cgroup_read(int dir, struct agent_stats *s)
{
	char buf[2048];
	struct sysinfo si;
	uint64_t ram = AGENT_STATS_UNKNOWN;

	for (unsigned int i = 0; i < AGENT_STATS_COUNT; i++)
		s->value[i] = AGENT_STATS_UNKNOWN;
	if (!sysinfo(&si))
		ram = (uint64_t)si.totalram * si.mem_unit;
	if (read_small(dir, "cpu.stat", buf, sizeof(buf)) > 0) {
		s->value[AGENT_STAT(AGENT_ATTR_CPU_USAGE_NS)] =
			usec_to_ns(keyed(buf, "usage_usec"));
		s->value[AGENT_STAT(AGENT_ATTR_CPU_USER_NS)] =
			usec_to_ns(keyed(buf, "user_usec"));
		s->value[AGENT_STAT(AGENT_ATTR_CPU_SYSTEM_NS)] =
			usec_to_ns(keyed(buf, "system_usec"));
	}
	s->value[AGENT_STAT(AGENT_ATTR_MEM_USAGE)] =
		read_number(dir, "memory.current", AGENT_STATS_UNKNOWN);
	/* No limit of its own: the VM's memory is the task's limit. */
	s->value[AGENT_STAT(AGENT_ATTR_MEM_LIMIT)] =
		read_number(dir, "memory.max", ram);
	s->value[AGENT_STAT(AGENT_ATTR_PIDS_CURRENT)] =
		read_number(dir, "pids.current", AGENT_STATS_UNKNOWN);
	s->value[AGENT_STAT(AGENT_ATTR_PIDS_LIMIT)] =
		read_number(dir, "pids.max", 0);
	if (read_small(dir, "memory.events", buf, sizeof(buf)) > 0)
		s->value[AGENT_STAT(AGENT_ATTR_OOM_KILLS)] =
			keyed(buf, "oom_kill");
}

/*
 * A pod container's cgroup (EXEC's CGROUP): "ctr-NAME" beside "task"
 * under the cgroup2 root, not inside it: a cgroup with processes (the
 * task's holds the agent) cannot hand controllers to children, and the
 * root is exempt from that rule. The prefix keeps a container named
 * "task" off the task's.
 */
static int ctr_cgroup_path(const char *name, char *buf, size_t len)
{
	if (!agent_cgroup_name_valid(name, strlen(name)))
		return -EINVAL;
	return snprintf(buf, len, "../ctr-%s", name) >= (int)len ? -ENAMETOOLONG
								 : 0;
}

int agent_ctr_cgroup_open(int task_dir, const char *name)
{
	char path[AGENT_MAX_CGROUP_NAME + 16];
	int r = ctr_cgroup_path(name, path, sizeof(path)), dir;

	if (r)
		return r;
	dir = openat(task_dir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dir < 0 ? -errno : dir;
}

/* VALUE (a number) into FILE of DIR; -errno. */
static int write_number(int dir, const char *file, uint64_t value)
{
	char buf[32];
	int fd = openat(dir, file, O_WRONLY | O_CLOEXEC), len, r = 0;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%" PRIu64, value);
	if (write(fd, buf, (size_t)len) != len)
		r = -errno;
	close(fd);
	return r;
}

int agent_ctr_cgroup_prepare(int task_dir, const char *name,
			     uint64_t memory_max)
{
	char path[AGENT_MAX_CGROUP_NAME + 16];
	int r = ctr_cgroup_path(name, path, sizeof(path)), dir, procs;

	if (r)
		return r;
	if (mkdirat(task_dir, path, 0755) && errno != EEXIST)
		return -errno;
	dir = openat(task_dir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	/* Never run a process outside the limit it was given. */
	if (memory_max)
		r = write_number(dir, "memory.max", memory_max);
	if (!r) {
		procs = openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC);
		r = procs < 0 ? -errno : procs;
	}
	close(dir);
	return r;
}

int agent_ctr_cgroup_set(int task_dir, const struct agent_cgroup_set *c)
{
	char cpu[48];
	int dir = agent_ctr_cgroup_open(task_dir, c->cgroup), fd, len, r = 0;

	if (dir < 0)
		return dir;
	if (c->memory_max)
		r = write_number(dir, "memory.max", c->memory_max);
	if (!r && c->set_cpu) {
		if (c->cpu_quota)
			len = snprintf(cpu, sizeof(cpu), "%" PRIu64 " %" PRIu64,
				       c->cpu_quota, c->cpu_period);
		else
			len = snprintf(cpu, sizeof(cpu), "max %" PRIu64,
				       c->cpu_period);
		fd = openat(dir, "cpu.max", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, cpu, (size_t)len) != len)
			r = -errno;
		if (fd >= 0)
			close(fd);
	}
	close(dir);
	return r;
}
