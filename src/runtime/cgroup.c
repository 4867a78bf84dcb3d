// SPDX-License-Identifier: LGPL-2.1-or-later
/* Placing the VMM process in the container's cgroup (see cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
		write_to(dir, "memory.max", val);
	}
	if (res->cpu_quota > 0 && res->cpu_period > 0) {
		snprintf(val, sizeof(val), "%lld %llu",
			 (long long)res->cpu_quota,
			 (unsigned long long)res->cpu_period);
		write_to(dir, "cpu.max", val);
	}
	snprintf(val, sizeof(val), "%d", (int)getpid());
	ret = write_to(dir, "cgroup.procs", val);
	if (ret)
		snprintf(err, errlen, "cannot join cgroup %s: %s", dir,
			 strerror(-ret));
	return ret;
}

static int enter_v1(const char *rel, const struct oci_resources *res, char *err,
		    size_t errlen)
{
	static const char *const controllers[] = { "cpu,cpuacct", "memory",
						   "pids", NULL };
	char dir[PATH_MAX + 64], val[64];

	snprintf(val, sizeof(val), "%d", (int)getpid());
	for (const char *const *c = controllers; *c; c++) {
		char base[64];
		int ret;

		snprintf(base, sizeof(base), CGROUP_ROOT "/%s", *c);
		if (access(base, F_OK))
			continue;
		snprintf(dir, sizeof(dir), "%s%s%s", base,
			 rel[0] == '/' ? "" : "/", rel);
		ret = mkdir_p(dir);
		if (!ret && !strcmp(*c, "memory") && res->memory_limit > 0) {
			char lim[32];

			snprintf(lim, sizeof(lim), "%lld",
				 (long long)res->memory_limit);
			write_to(dir, "memory.limit_in_bytes", lim);
		}
		if (!ret && !strcmp(*c, "cpu,cpuacct") && res->cpu_quota > 0 &&
		    res->cpu_period > 0) {
			char num[32];

			snprintf(num, sizeof(num), "%llu",
				 (unsigned long long)res->cpu_period);
			write_to(dir, "cpu.cfs_period_us", num);
			snprintf(num, sizeof(num), "%lld",
				 (long long)res->cpu_quota);
			write_to(dir, "cpu.cfs_quota_us", num);
		}
		if (!ret)
			ret = write_to(dir, "cgroup.procs", val);
		if (ret) {
			snprintf(err, errlen, "cannot join cgroup %s: %s", dir,
				 strerror(-ret));
			return ret;
		}
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
