// SPDX-License-Identifier: LGPL-2.1-or-later
/* Placing the VMM process in the container's cgroup (see cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/* "a-b-c.slice" -> "a.slice/a-b.slice/a-b-c.slice" (systemd's nesting). */
static int expand_slice(const char *slice, char *out, size_t len)
{
	size_t used = 0, n = strlen(slice);
	const char *stem_end;

	out[0] = '\0';
	if (n < 6 || strcmp(slice + n - 6, ".slice"))
		return -EINVAL;
	if (!strcmp(slice, "-.slice"))
		return 0;
	stem_end = slice + n - 6;
	for (const char *p = slice; p <= stem_end; p++) {
		if (p != stem_end && *p != '-')
			continue;
		int w = snprintf(out + used, len - used, "%s%.*s.slice",
				 used ? "/" : "", (int)(p - slice), slice);

		if (w < 0 || (size_t)w >= len - used)
			return -ENAMETOOLONG;
		used += (size_t)w;
	}
	return 0;
}

int rt_cgroup_resolve(const char *path, char *out, size_t len)
{
	const char *c1 = strchr(path, ':'), *c2;
	char slice[PATH_MAX];
	int ret;

	if (!c1 || path[0] == '/') {
		if (strstr(path, "..") ||
		    snprintf(out, len, "%s", path) >= (int)len)
			return -EINVAL;
		return 0;
	}
	c2 = strchr(c1 + 1, ':');
	if (!c2 || strchr(c2 + 1, '/') || strstr(path, ".."))
		return -EINVAL;
	snprintf(slice, sizeof(slice), "%.*s", (int)(c1 - path), path);
	ret = expand_slice(slice[0] ? slice : "system.slice", out, len);
	if (ret)
		return ret;
	if ((size_t)snprintf(out + strlen(out), len - strlen(out),
			     "/%.*s-%s.scope", (int)(c2 - c1 - 1), c1 + 1,
			     c2 + 1) >= len - strlen(out))
		return -ENAMETOOLONG;
	return 0;
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

static int write_to(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX + 64];
	int fd, ret = 0;

	/* A cut path would name another file: refuse it. */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A limit the container asked for: written, or the container is not
 * created (runc fails the same way). A VM outside its limits would be
 * the engine's accounting lying.
 */
static int set_limit(const char *dir, const char *file, const char *value,
		     const char *what, char *err, size_t errlen)
{
	int ret = write_to(dir, file, value);

	if (ret)
		snprintf(err, errlen, "cannot set %s = %s: %s/%s: %s", what,
			 value, dir, file, strerror(-ret));
	return ret;
}

/*
 * cgroup v2 hands a controller to a child only when the parent's
 * cgroup.subtree_control lists it: enable CONTROLLER at every level from
 * the root down to DIR's parent, as runc does. A level that refuses (it
 * has processes of its own, or the controller is not delegated to it)
 * leaves the limit unset: an error naming that level.
 */
static int enable_v2(const char *dir, const char *controller, const char *what,
		     char *err, size_t errlen)
{
	char parent[PATH_MAX + 64], op[32];
	size_t root_len = strlen(CGROUP_ROOT);
	int ret;

	snprintf(op, sizeof(op), "+%s", controller);
	snprintf(parent, sizeof(parent), "%s", dir);
	/* Each '/' below the root ends an ancestor of DIR: root, a, a/b... */
	for (char *p = parent + root_len; (p = strchr(p, '/')); p++) {
		*p = '\0';
		ret = write_to(parent, "cgroup.subtree_control", op);
		if (ret) {
			snprintf(
				err, errlen,
				"cannot set %s: the %s controller cannot be enabled in %s/cgroup.subtree_control: %s",
				what, controller, parent, strerror(-ret));
			return ret;
		}
		*p = '/';
	}
	return 0;
}

/* A v2 limit: its CONTROLLER enabled down to DIR, then VALUE in FILE. */
static int limit_v2(const char *dir, const char *controller, const char *file,
		    const char *value, const char *what, char *err,
		    size_t errlen)
{
	int ret = enable_v2(dir, controller, what, err, errlen);

	return ret ? ret : set_limit(dir, file, value, what, err, errlen);
}

static int enter_v2(const char *rel, const struct oci_resources *res, char *err,
		    size_t errlen)
{
	char dir[PATH_MAX + 64], val[64];
	int ret;

	snprintf(dir, sizeof(dir), CGROUP_ROOT "%s%s", rel[0] == '/' ? "" : "/",
		 rel);
	ret = mkdir_p(dir);
	if (ret) {
		snprintf(err, errlen, "cgroup %s: %s", dir, strerror(-ret));
		return ret;
	}
	/* Limits first, so the VM never runs outside them. */
	if (res->memory_limit > 0) {
		snprintf(val, sizeof(val), "%lld",
			 (long long)res->memory_limit);
		ret = limit_v2(dir, "memory", "memory.max", val,
			       "linux.resources.memory.limit", err, errlen);
		if (ret)
			return ret;
	}
	if (res->cpu_quota > 0 && res->cpu_period > 0) {
		snprintf(val, sizeof(val), "%lld %llu",
			 (long long)res->cpu_quota,
			 (unsigned long long)res->cpu_period);
		ret = limit_v2(dir, "cpu", "cpu.max", val,
			       "linux.resources.cpu.quota", err, errlen);
		if (ret)
			return ret;
	}
	snprintf(val, sizeof(val), "%d", (int)getpid());
	ret = write_to(dir, "cgroup.procs", val);
	if (ret)
		snprintf(err, errlen, "cannot join cgroup %s: %s", dir,
			 strerror(-ret));
	return ret;
}

/*
 * Where cgroup v1 mounted the hierarchy that has CONTROLLER, from
 * /proc/self/mountinfo: co-mounted ("cpu,cpuacct") or apart (cpu and
 * cpuacct each on its own, as on hosts whose init mounts them so).
 */
static int v1_mount_of(const char *controller, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[32], opts[512], *sep, *o, *save;

		/* id parent maj:min root MOUNT opts [tags] - FSTYPE SRC SUPER */
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%31s %*s %511s", fstype, opts) != 2 ||
		    strcmp(fstype, "cgroup"))
			continue;
		for (o = strtok_r(opts, ",", &save); o;
		     o = strtok_r(NULL, ",", &save)) {
			if (!strcmp(o, controller) &&
			    (size_t)snprintf(out, len, "%s", mnt) < len) {
				ret = 0;
				break;
			}
		}
	}
	fclose(f);
	return ret;
}

/*
 * cgroup v1: one directory per hierarchy, each limit in the hierarchy of
 * its controller, the process joins each. A limit whose controller is not
 * mounted is an error, not a silent no-op.
 */
static int enter_v1(const char *rel, const struct oci_resources *res, char *err,
		    size_t errlen)
{
	static const char *const controllers[] = { "cpu", "cpuacct", "memory",
						   "pids", NULL };
	char joined[4][PATH_MAX];
	unsigned int nr_joined = 0;
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (const char *const *c = controllers; *c; c++) {
		char base[PATH_MAX], dir[PATH_MAX + 64], num[32];
		bool quota = !strcmp(*c, "cpu") && res->cpu_quota > 0 &&
			     res->cpu_period > 0;
		bool memory = !strcmp(*c, "memory") && res->memory_limit > 0;
		bool done = false;
		int ret;

		if (v1_mount_of(*c, base, sizeof(base))) {
			if (!quota && !memory)
				continue;
			snprintf(
				err, errlen,
				"cannot set %s: no cgroup v1 hierarchy has the %s controller",
				quota ? "linux.resources.cpu.quota"
				      : "linux.resources.memory.limit",
				*c);
			return -ENOENT;
		}
		/* cpu and cpuacct co-mounted: one directory, one join. */
		for (unsigned int i = 0; i < nr_joined; i++)
			done |= !strcmp(joined[i], base);
		/* A cut path would name another cgroup: refuse it. */
		if ((size_t)snprintf(dir, sizeof(dir), "%s%s%s", base,
				     rel[0] == '/' ? "" : "/",
				     rel) >= sizeof(dir)) {
			snprintf(err, errlen, "cgroup path too long: %s", rel);
			return -ENAMETOOLONG;
		}
		ret = mkdir_p(dir);
		if (ret) {
			snprintf(err, errlen, "cgroup %s: %s", dir,
				 strerror(-ret));
			return ret;
		}
		if (memory) {
			snprintf(num, sizeof(num), "%lld",
				 (long long)res->memory_limit);
			ret = set_limit(dir, "memory.limit_in_bytes", num,
					"linux.resources.memory.limit", err,
					errlen);
		}
		if (!ret && quota) {
			snprintf(num, sizeof(num), "%llu",
				 (unsigned long long)res->cpu_period);
			ret = set_limit(dir, "cpu.cfs_period_us", num,
					"linux.resources.cpu.period", err,
					errlen);
			snprintf(num, sizeof(num), "%lld",
				 (long long)res->cpu_quota);
			if (!ret)
				ret = set_limit(dir, "cpu.cfs_quota_us", num,
						"linux.resources.cpu.quota",
						err, errlen);
		}
		if (ret)
			return ret;
		if (done)
			continue;
		ret = write_to(dir, "cgroup.procs", pid);
		if (ret) {
			snprintf(err, errlen, "cannot join cgroup %s: %s", dir,
				 strerror(-ret));
			return ret;
		}
		snprintf(joined[nr_joined++], sizeof(joined[0]), "%s", base);
	}
	return 0;
}

int rt_cgroup_enter(const char *path, const struct oci_resources *res,
		    char *err, size_t errlen)
{
	char rel[PATH_MAX];

	if (rt_cgroup_resolve(path, rel, sizeof(rel))) {
		snprintf(err, errlen,
			 "linux.cgroupsPath \"%s\" is not a cgroup path", path);
		return -EINVAL;
	}
	if (!access(CGROUP_ROOT "/cgroup.controllers", F_OK))
		return enter_v2(rel, res, err, errlen);
	return enter_v1(rel, res, err, errlen);
}
