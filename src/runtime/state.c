// SPDX-License-Identifier: LGPL-2.1-or-later
/* Container state directories (see state.h). */
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec.h"
#include "state.h"

bool rt_valid_id(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > RT_MAX_ID || id[0] == '.')
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_.+-", *p)))
			return false;
	return true;
}

/*
 * The state root and the directories above it, as runc makes them: on a
 * node where hintvm-runtime is containerd's first runtime, even
 * /run/containerd/runc (above --root .../runc/default) does not exist.
 */
static int make_state_root(const char *root)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s", root) >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int rt_container_init(struct rt_container *c, const char *id, bool create_root)
{
	int ret;

	memset(c, 0, sizeof(*c));
	if (!rt_valid_id(id)) {
		rt_error("invalid container id \"%s\": use up to %d of "
			 "A-Z a-z 0-9 _ . + -, not starting with '.'",
			 id, RT_MAX_ID);
		return -EINVAL;
	}
	snprintf(c->id, sizeof(c->id), "%s", id);
	ret = create_root ? make_state_root(rt.root) : 0;
	if (ret) {
		rt_error("cannot create the state root %s: %s", rt.root,
			 strerror(-ret));
		return ret;
	}
	if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s/%s", rt.root, id) >=
	    sizeof(c->dir)) {
		rt_error("state root %s is too long", rt.root);
		return -ENAMETOOLONG;
	}
	return 0;
}

void rt_container_path(const struct rt_container *c, const char *name,
		       char *path, size_t len)
{
	snprintf(path, len, "%s/%s", c->dir, name);
}

int rt_container_load(struct rt_container *c, const char *id)
{
	char path[PATH_MAX + 16];
	struct json_object *o, *v;
	int ret = rt_container_init(c, id, false);

	if (ret)
		return ret;
	rt_container_path(c, "state.json", path, sizeof(path));
	o = json_object_from_file(path);
	if (!o) {
		rt_error("container \"%s\" does not exist", id);
		return -ENOENT;
	}
	if (json_object_object_get_ex(o, "bundle", &v))
		snprintf(c->bundle, sizeof(c->bundle), "%s",
			 json_object_get_string(v));
	if (json_object_object_get_ex(o, "pid", &v))
		c->pid = (pid_t)json_object_get_int(v);
	if (json_object_object_get_ex(o, "pidStart", &v))
		c->pid_start = (unsigned long long)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "netns", &v))
		snprintf(c->netns, sizeof(c->netns), "%s",
			 json_object_get_string(v));
	if (json_object_object_get_ex(o, "created", &v))
		snprintf(c->created, sizeof(c->created), "%s",
			 json_object_get_string(v));
	json_object_put(o);
	return 0;
}

int rt_container_save(const struct rt_container *c)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
	struct json_object *o = json_object_new_object();
	int ret = 0;

	json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "bundle", json_object_new_string(c->bundle));
	json_object_object_add(o, "pid", json_object_new_int(c->pid));
	json_object_object_add(o, "pidStart",
			       json_object_new_int64((int64_t)c->pid_start));
	json_object_object_add(o, "created",
			       json_object_new_string(c->created));
	json_object_object_add(o, "netns", json_object_new_string(c->netns));
	rt_container_path(c, "state.json", path, sizeof(path));
	rt_container_path(c, ".state.json.tmp", tmp, sizeof(tmp));
	if (json_object_to_file_ext(tmp, o,
				    JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE) ||
	    rename(tmp, path)) {
		rt_error("cannot write %s: %s", path, strerror(errno));
		ret = -EIO;
	}
	json_object_put(o);
	return ret;
}

unsigned long long rt_process_start_time(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: skip past it. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ") " come fields 3 (state) ... 22 (starttime). */
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		start = strtoull(p, NULL, 10);
	return start;
}

static bool process_is_zombie(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

bool rt_process_alive(pid_t pid, unsigned long long start)
{
	if (pid <= 0)
		return false;
	if (rt_process_start_time(pid) != start || !start)
		return false;
	/* A zombie has exited: its status waits for the shim to reap it. */
	return !process_is_zombie(pid);
}

enum rt_status rt_container_status(const struct rt_container *c)
{
	char path[PATH_MAX + 16];

	if (!c->pid)
		return RT_CREATING;
	if (!rt_process_alive(c->pid, c->pid_start))
		return RT_STOPPED;
	rt_container_path(c, "exec.fifo", path, sizeof(path));
	if (!access(path, F_OK))
		return RT_CREATED;
	rt_container_path(c, "paused", path, sizeof(path));
	if (!access(path, F_OK))
		return RT_PAUSED;
	return RT_RUNNING;
}

const char *rt_status_name(enum rt_status status)
{
	static const char *const names[] = { "creating", "created", "running",
					     "paused", "stopped" };

	return names[status];
}

/* The annotations of the config.json create kept, into O. */
static void add_annotations(const struct rt_container *c, struct json_object *o)
{
	char path[PATH_MAX + 16];
	struct json_object *cfg, *ann;

	rt_container_path(c, "config.json", path, sizeof(path));
	cfg = json_object_from_file(path);
	if (cfg && json_object_object_get_ex(cfg, "annotations", &ann) &&
	    json_object_is_type(ann, json_type_object))
		json_object_object_add(o, "annotations", json_object_get(ann));
	json_object_put(cfg);
}

char *rt_container_state_json(const struct rt_container *c)
{
	struct json_object *o = json_object_new_object();
	enum rt_status status = rt_container_status(c);
	char *text;

	json_object_object_add(o, "ociVersion",
			       json_object_new_string("1.0.2"));
	json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "status",
			       json_object_new_string(rt_status_name(status)));
	json_object_object_add(
		o, "pid",
		json_object_new_int(status == RT_STOPPED ? 0 : c->pid));
	json_object_object_add(o, "bundle", json_object_new_string(c->bundle));
	/* runc's extra members, which podman and the shims read. */
	json_object_object_add(o, "created",
			       json_object_new_string(c->created));
	json_object_object_add(o, "owner", json_object_new_string(""));
	add_annotations(c, o);
	text = strdup(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return text;
}

static int remove_one(const char *path, const struct stat *st, int type,
		      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

int rt_container_remove(const struct rt_container *c)
{
	/* Depth first, links not followed: only what create made lives here. */
	if (nftw(c->dir, remove_one, 8, FTW_DEPTH | FTW_PHYS) &&
	    errno != ENOENT) {
		rt_error("cannot remove %s: %s", c->dir, strerror(errno));
		return -errno;
	}
	if (!access(c->dir, F_OK)) {
		rt_error("cannot remove %s", c->dir);
		return -ENOTEMPTY;
	}
	return 0;
}

int rt_container_oom_kills(const struct rt_container *c, unsigned long long *n)
{
	char path[PATH_MAX + 16], text[32], *end;
	ssize_t len;
	int fd;

	rt_container_path(c, RT_OOM_FILE, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	len = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (len <= 0)
		return -ENOENT;
	text[len] = 0;
	errno = 0;
	*n = strtoull(text, &end, 10);
	if (end == text || text[0] == '-' || errno ||
	    (*end && strcmp(end, "\n"))) {
		rt_error("%s: \"%.*s\" is no count of OOM kills", path,
			 (int)strcspn(text, "\n"), text);
		return -EINVAL;
	}
	return 0;
}
