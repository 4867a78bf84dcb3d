// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/observe.h"

/* Parse an unsigned decimal at *P, advancing it; no sign, no overflow. */
static bool parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
			return false;
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

/* "12.34" as 1234; at most two decimals, at most 100.00 (a percentage). */
static bool parse_percent_centi(const char **p, uint32_t *out)
{
	uint64_t whole, frac = 0;
	int digits = 0;

	if (!parse_u64(p, &whole) || whole > 100)
		return false;
	if (**p == '.') {
		(*p)++;
		while (isdigit((unsigned char)**p)) {
			if (digits < 2)
				frac = frac * 10 + (uint64_t)(**p - '0');
			digits++;
			(*p)++;
		}
		if (digits == 0)
			return false;
		if (digits == 1)
			frac *= 10;
	}
	if (whole * 100 + frac > 10000)
		return false;
	*out = (uint32_t)(whole * 100 + frac);
	return true;
}

static void skip_blanks(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

static bool at_line_end(const char *p)
{
	return *p == '\0' || *p == '\n';
}

int observe_parse_schedstat(const char *text, struct thread_sched *out)
{
	const char *p = text;
	uint64_t v[3];

	for (int i = 0; i < 3; i++) {
		skip_blanks(&p);
		if (!parse_u64(&p, &v[i]))
			return -EINVAL;
	}
	skip_blanks(&p);
	if (!at_line_end(p))
		return -EINVAL;
	*out = (struct thread_sched){ v[0], v[1], v[2] };
	return 0;
}

int observe_parse_pressure(const char *text, struct cpu_pressure *out)
{
	const char *p = text;
	struct cpu_pressure r = { 0 };
	bool have_avg10 = false, have_total = false;

	/* Find the "some" line; the kernel puts it first, be lenient. */
	while (strncmp(p, "some ", 5) != 0) {
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	p += 5;
	while (!at_line_end(p)) {
		skip_blanks(&p);
		if (strncmp(p, "avg10=", 6) == 0) {
			p += 6;
			if (!parse_percent_centi(&p, &r.avg10_centi))
				return -EINVAL;
			have_avg10 = true;
		} else if (strncmp(p, "avg60=", 6) == 0) {
			p += 6;
			if (!parse_percent_centi(&p, &r.avg60_centi))
				return -EINVAL;
		} else if (strncmp(p, "total=", 6) == 0) {
			p += 6;
			if (!parse_u64(&p, &r.total_us))
				return -EINVAL;
			have_total = true;
		} else {
			/* avg300 or a future field: skip the token. */
			while (!at_line_end(p) && *p != ' ')
				p++;
		}
		skip_blanks(&p);
	}
	if (!have_avg10 || !have_total)
		return -EINVAL;
	*out = r;
	return 0;
}

int observe_parse_cpu_stat(const char *text, struct cgroup_cpu_stat *out)
{
	struct cgroup_cpu_stat r = { 0 };
	const char *p = text;
	int lines = 0;

	while (*p) {
		const char *key = p, *val;
		size_t key_len;
		uint64_t v;

		while (*p && *p != ' ' && *p != '\n')
			p++;
		key_len = (size_t)(p - key);
		if (*p != ' ' || key_len == 0)
			return -EINVAL;
		skip_blanks(&p);
		val = p;
		if (!parse_u64(&val, &v))
			return -EINVAL;
		p = val;
		skip_blanks(&p);
		if (!at_line_end(p))
			return -EINVAL;
		if (*p == '\n')
			p++;
		lines++;

#define KEY_IS(s) (key_len == sizeof(s) - 1 && memcmp(key, s, key_len) == 0)
		if (KEY_IS("nr_periods"))
			r.nr_periods = v;
		else if (KEY_IS("nr_throttled"))
			r.nr_throttled = v;
		else if (KEY_IS("throttled_time")) /* v1: ns */
			r.throttled_ns = v;
		else if (KEY_IS("throttled_usec")) /* v2: us */
			r.throttled_ns =
				v > UINT64_MAX / 1000 ? UINT64_MAX : v * 1000;
#undef KEY_IS
	}
	if (lines == 0)
		return -EINVAL;
	*out = r;
	return 0;
}

int observe_parse_cpulist(const char *text, cpu_set_t *set)
{
	const char *p = text;

	CPU_ZERO(set);
	skip_blanks(&p);
	if (at_line_end(p))
		return 0;
	for (;;) {
		uint64_t first, last;

		if (!parse_u64(&p, &first))
			return -EINVAL;
		last = first;
		if (*p == '-') {
			p++;
			if (!parse_u64(&p, &last))
				return -EINVAL;
		}
		if (first > last || last >= CPU_SETSIZE)
			return -EINVAL;
		for (uint64_t c = first; c <= last; c++)
			CPU_SET((int)c, set);
		if (*p != ',')
			break;
		p++;
	}
	skip_blanks(&p);
	return at_line_end(p) && (*p == '\0' || p[1] == '\0') ? 0 : -EINVAL;
}

char *observe_format_cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int end = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
			end++;
		if (end == c)
			n = snprintf(buf + used, len - used, "%s%d",
				     used ? "," : "", c);
		else
			n = snprintf(buf + used, len - used, "%s%d-%d",
				     used ? "," : "", c, end);
		if (n < 0 || (size_t)n >= len - used)
			break; /* truncated, still NUL-terminated */
		used += (size_t)n;
		c = end;
	}
	return buf;
}

/* Copy line-field number IDX (0-based, SEP-separated) of LINE into OUT. */
static bool line_field(const char *line, char sep, int idx, char *out,
		       size_t len)
{
	const char *p = line, *end;

	for (int i = 0; i < idx; i++) {
		while (*p && *p != '\n' && *p != sep)
			p++;
		if (*p != sep)
			return false;
		p++;
	}
	end = p;
	while (*end && *end != '\n' && *end != sep)
		end++;
	if ((size_t)(end - p) >= len)
		return false;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return true;
}

static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && memcmp(p, item, n) == 0)
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/* This process's cgroup path in hierarchy CONTROLLER ("" = v2). */
static bool proc_cgroup_path(const char *proc_cgroup, const char *controller,
			     char *path, size_t len)
{
	for (const char *line = proc_cgroup; line && *line;) {
		char controllers[256];

		if (line_field(line, ':', 1, controllers,
			       sizeof(controllers)) &&
		    ((controller[0] == '\0' && controllers[0] == '\0') ||
		     (controller[0] && list_has(controllers, controller))) &&
		    line_field(line, ':', 2, path, len))
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

/*
 * The mount of a cgroup hierarchy: v1 (FSTYPE "cgroup" with CONTROLLER in
 * the super options) or v2 (CONTROLLER == "": FSTYPE "cgroup2").
 */
static bool cgroup_mount(const char *mountinfo, const char *controller,
			 char *root, char *mnt, size_t len)
{
	for (const char *line = mountinfo; line && *line;) {
		const char *dash = strstr(line, " - ");
		const char *eol = strchr(line, '\n');
		char fstype[32], opts[512];

		if (dash && (!eol || dash < eol) &&
		    line_field(dash + 3, ' ', 0, fstype, sizeof(fstype)) &&
		    line_field(dash + 3, ' ', 2, opts, sizeof(opts)) &&
		    line_field(line, ' ', 3, root, len) &&
		    line_field(line, ' ', 4, mnt, len)) {
			if (controller[0] == '\0' &&
			    strcmp(fstype, "cgroup2") == 0)
				return true;
			if (controller[0] && strcmp(fstype, "cgroup") == 0 &&
			    list_has(opts, controller))
				return true;
		}
		line = eol ? eol + 1 : NULL;
	}
	return false;
}

static int join_cgroup_dir(const char *mnt, const char *root, const char *path,
			   char *dir, size_t len)
{
	size_t root_len = strlen(root);
	int n;

	/* A bind mount of a sub-tree: strip the mount's root from the path. */
	if (strcmp(root, "/") != 0 && strncmp(path, root, root_len) == 0 &&
	    (path[root_len] == '/' || path[root_len] == '\0'))
		path += root_len;
	if (strcmp(path, "/") == 0)
		path = "";
	n = snprintf(dir, len, "%s%s", mnt, path);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int observe_find_cgroup_dir(const char *proc_cgroup, const char *mountinfo,
			    const char *controller, char *dir, size_t len,
			    bool *is_v2)
{
	char path[1024], root[1024], mnt[1024];

	if (!controller[0])
		return -EINVAL;
	if (proc_cgroup_path(proc_cgroup, controller, path, sizeof(path)) &&
	    cgroup_mount(mountinfo, controller, root, mnt, sizeof(mnt))) {
		*is_v2 = false;
		return join_cgroup_dir(mnt, root, path, dir, len);
	}
	if (proc_cgroup_path(proc_cgroup, "", path, sizeof(path)) &&
	    cgroup_mount(mountinfo, "", root, mnt, sizeof(mnt))) {
		*is_v2 = true;
		return join_cgroup_dir(mnt, root, path, dir, len);
	}
	return -ENOENT;
}

/* ---- live files ---- */

/* Read a small text file whole into BUF (NUL-terminated). */
static int read_text(const char *path, char *buf, size_t len)
{
	size_t used = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (used + 1 < len) {
		ssize_t n = read(fd, buf + used, len - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	return 0;
}

int observe_read_thread(pid_t tid, struct thread_sched *out)
{
	char path[64], buf[128];
	int ret;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	ret = read_text(path, buf, sizeof(buf));
	return ret ? ret : observe_parse_schedstat(buf, out);
}

int observe_read_pressure(struct cpu_pressure *out)
{
	char buf[512];
	int ret = read_text("/proc/pressure/cpu", buf, sizeof(buf));

	return ret ? ret : observe_parse_pressure(buf, out);
}

static int find_live_cgroup_dir(const char *controller, char *dir, size_t len,
				bool *is_v2)
{
	const size_t cgroup_len = 4096, mountinfo_len = 65536;
	/* On the heap: several VMs' sched threads may call this at once. */
	char *cgroup = malloc(cgroup_len), *mountinfo = malloc(mountinfo_len);
	int ret = -ENOMEM;

	if (cgroup && mountinfo)
		ret = read_text("/proc/self/cgroup", cgroup, cgroup_len);
	if (!ret)
		ret = read_text("/proc/self/mountinfo", mountinfo,
				mountinfo_len);
	if (!ret)
		ret = observe_find_cgroup_dir(cgroup, mountinfo, controller,
					      dir, len, is_v2);
	free(cgroup);
	free(mountinfo);
	return ret;
}

int observe_read_cpu_stat(struct cgroup_cpu_stat *out)
{
	char dir[1100], path[1200], buf[1024];
	bool v2;
	int ret = find_live_cgroup_dir("cpu", dir, sizeof(dir), &v2);

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	ret = read_text(path, buf, sizeof(buf));
	return ret ? ret : observe_parse_cpu_stat(buf, out);
}

int observe_allowed_cpus(cpu_set_t *set)
{
	char dir[1100], path[1200], buf[1024];
	cpu_set_t cpuset, both;
	bool v2;

	if (sched_getaffinity(0, sizeof(*set), set) < 0)
		return -errno;
	if (find_live_cgroup_dir("cpuset", dir, sizeof(dir), &v2) == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 v2 ? "cpuset.cpus.effective"
			    : "cpuset.effective_cpus");
		/* An empty or unreadable cpuset adds no information. */
		if (read_text(path, buf, sizeof(buf)) == 0 &&
		    observe_parse_cpulist(buf, &cpuset) == 0) {
			CPU_AND(&both, set, &cpuset);
			if (CPU_COUNT(&both) > 0)
				*set = both;
		}
	}
	return CPU_COUNT(set);
}
