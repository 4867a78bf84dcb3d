// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "abi/vm_name.h"
#include "base/log.h"
#include "control/registry.h"
#include "hintvm/hintvm.h"

#define ENTRY_SUFFIX ".sock"

int registry_dir(char *buf, size_t len)
{
	const char *env = getenv("HINTVM_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/run/hintvm");
	else if ((env = getenv("XDG_RUNTIME_DIR")) && *env == '/')
		n = snprintf(buf, len, "%s/hintvm", env);
	else
		n = snprintf(buf, len, "/tmp/hintvm-%u",
			     (unsigned int)geteuid());
	if (n < 0 || (size_t)n >= len)
		return hvm_set_error(-ENAMETOOLONG,
				     "the runtime directory path is too long");
	return 0;
}

/*
 * Whether PATH (a runtime directory, or the socket an entry names) may be
 * trusted as our VMs': only we or root can have made it, and nobody else
 * can replace what is in it. Another local user who made /tmp/hintvm-UID
 * first, or planted NAME.sock, must not receive our requests (the argv and
 * environment of `hintvm exec`, a stop).
 */
static int check_trusted(const char *what, const char *path,
			 const struct stat *st)
{
	uid_t me = geteuid();

	if ((st->st_uid == me || st->st_uid == 0) && !(st->st_mode & 0022))
		return 0;
	return hvm_set_error(
		-EPERM,
		"%s %s belongs to uid %u with mode %04o; hintvm trusts only one that uid %u or root owns and nobody else may write (remove it, or set HINTVM_RUNTIME_DIR)",
		what, path, (unsigned int)st->st_uid,
		(unsigned int)(st->st_mode & 07777), (unsigned int)me);
}

int registry_trust_dir(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return errno == ENOENT
			       ? 0
			       : hvm_set_errno_error("cannot use %s", dir);
	if (!S_ISDIR(st.st_mode))
		return hvm_set_error(
			-ENOTDIR, "the runtime directory %s is not a directory",
			dir);
	return check_trusted("the runtime directory", dir, &st);
}

int registry_open_dir(char *buf, size_t len)
{
	struct stat st;
	int r = registry_dir(buf, len);

	if (r < 0)
		return r;
	r = mkdir(buf, 0700) < 0 ? -errno : 0;
	/* A bare system (an initramfs) may have no /run or /tmp yet. */
	if (r == -ENOENT &&
	    (!strcmp(buf, "/run/hintvm") || !strncmp(buf, "/tmp/", 5))) {
		mkdir(buf[1] == 'r' ? "/run" : "/tmp",
		      buf[1] == 'r' ? 0755 : 01777);
		r = mkdir(buf, 0700) < 0 ? -errno : 0;
	}
	if (r < 0 && r != -EEXIST)
		return hvm_set_error(
			r, "cannot create the runtime directory %s: %s", buf,
			strerror(-r));
	if (lstat(buf, &st) < 0)
		return hvm_set_errno_error("cannot use %s", buf);
	if (!S_ISDIR(st.st_mode))
		return hvm_set_error(
			-ENOTDIR, "the runtime directory %s is not a directory",
			buf);
	/* Anyone who can write here could plant a socket we would trust. */
	if (st.st_uid != geteuid() || (st.st_mode & 0022))
		return hvm_set_error(
			-EPERM,
			"the runtime directory %s must belong to uid %u and not be writable by others",
			buf, (unsigned int)geteuid());
	return 0;
}

void registry_default_name(char *buf, size_t len)
{
	static atomic_uint count;
	unsigned int n = atomic_fetch_add(&count, 1);

	if (n == 0)
		snprintf(buf, len, "vm-%d", (int)getpid());
	else
		snprintf(buf, len, "vm-%d-%u", (int)getpid(), n + 1);
}

int registry_entry_path(const char *dir, const char *name, char *buf,
			size_t len)
{
	int n = snprintf(buf, len, "%s/%s" ENTRY_SUFFIX, dir, name);

	if (n < 0 || (size_t)n >= len || (size_t)n >= REGISTRY_PATH_MAX)
		return hvm_set_error(
			-ENAMETOOLONG,
			"%s/%s" ENTRY_SUFFIX
			" is longer than the %zu bytes a Unix socket address holds",
			dir, name, REGISTRY_PATH_MAX - 1);
	return 0;
}

int registry_probe(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	if (r < 0)
		r = -errno;
	close(fd);
	if (r == 0)
		return 1;
	/* A full backlog (EAGAIN) is a busy VM, not a dead one. */
	if (r == -EAGAIN)
		return 1;
	if (r == -ECONNREFUSED || r == -ENOENT || r == -ENOTSOCK)
		return 0;
	return r;
}

/* Remove ENTRY when nobody answers on it; 1 when it stays (live). */
static int remove_if_stale(const char *entry)
{
	struct stat st;
	int r;

	if (lstat(entry, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode) && !S_ISLNK(st.st_mode))
		return hvm_set_error(
			-EEXIST,
			"%s is neither a socket nor a link to one; refusing to replace it",
			entry);
	r = registry_probe(entry);
	if (r != 0)
		return r;
	if (unlink(entry) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int registry_claim(const char *dir, const char *name, char *entry, size_t len)
{
	int r = vm_name_check(name);

	if (r < 0)
		return r;
	r = registry_entry_path(dir, name, entry, len);
	if (r < 0)
		return r;
	r = remove_if_stale(entry);
	if (r == 1)
		return hvm_set_error(-EADDRINUSE,
				     "a VM named '%s' is already running (%s)",
				     name, entry);
	if (r < 0 && !strstr(hvm_error_message(), entry))
		hvm_set_error(r, "cannot claim the name '%s' at %s: %s", name,
			      entry, strerror(-r));
	return r;
}

int registry_link(const char *entry, const char *target)
{
	if (symlink(target, entry) < 0)
		return hvm_set_errno_error("cannot register %s as %s", target,
					   entry);
	return 0;
}

static int compare_entries(const void *a, const void *b)
{
	return strcmp(((const struct registry_entry *)a)->name,
		      ((const struct registry_entry *)b)->name);
}

int registry_list(const char *dir, bool remove_stale,
		  struct registry_entry **out, size_t *count)
{
	struct registry_entry *list = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*out = NULL;
	*count = 0;
	if (d && registry_trust_dir(dir) < 0) {
		closedir(d);
		return -EPERM;
	}
	if (!d)
		return errno == ENOENT
			       ? 0
			       : hvm_set_errno_error("cannot read %s", dir);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), suffix = strlen(ENTRY_SUFFIX);
		struct registry_entry e;
		int live;

		if (len <= suffix || len - suffix > VM_NAME_MAX ||
		    strcmp(de->d_name + len - suffix, ENTRY_SUFFIX))
			continue;
		memcpy(e.name, de->d_name, len - suffix);
		e.name[len - suffix] = '\0';
		if (vm_name_check(e.name) < 0 ||
		    registry_entry_path(dir, e.name, e.path, sizeof(e.path)) <
			    0)
			continue;
		live = registry_probe(e.path);
		if (live == 0) {
			struct stat st;

			/* Only what a VM left behind; other files stay. */
			if (remove_stale && lstat(e.path, &st) == 0 &&
			    (S_ISSOCK(st.st_mode) || S_ISLNK(st.st_mode)))
				unlink(e.path);
			continue;
		}
		if (n == cap) {
			struct registry_entry *grown;

			cap = cap ? cap * 2 : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				free(list);
				closedir(d);
				return hvm_set_error(-ENOMEM, "out of memory");
			}
			list = grown;
		}
		list[n++] = e;
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), compare_entries);
	*out = list;
	*count = n;
	return 0;
}

int registry_resolve(const char *name_or_path, char *buf, size_t len)
{
	char dir[REGISTRY_PATH_MAX];
	struct stat st;
	int r;

	if (strchr(name_or_path, '/')) {
		if (strlen(name_or_path) >= len ||
		    strlen(name_or_path) >= REGISTRY_PATH_MAX)
			return hvm_set_error(
				-ENAMETOOLONG,
				"socket path '%s' is longer than a Unix socket address holds",
				name_or_path);
		strcpy(buf, name_or_path);
		return 0;
	}
	if (vm_name_check(name_or_path) < 0)
		return hvm_set_error(
			-EINVAL,
			"'%s' is neither a VM name nor a socket path (paths contain a '/')",
			name_or_path);
	r = registry_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	r = registry_entry_path(dir, name_or_path, buf, len);
	if (r < 0)
		return r;
	r = registry_trust_dir(dir);
	if (r < 0)
		return r;
	if (lstat(buf, &st) < 0)
		return hvm_set_error(
			-ENOENT,
			"no VM named '%s' in %s (see hintvm ls; a socket path needs a '/', e.g. ./%s)",
			name_or_path, dir, name_or_path);
	/* The socket itself (an entry may link to one elsewhere). */
	if (stat(buf, &st) == 0)
		return check_trusted("the control socket", buf, &st);
	return 0;
}

/*
 * Who listens: a name must lead to a VM of ours or root's, whatever the
 * files say by the time we connect (SO_PEERCRED: who called listen()).
 */
static int check_peer(int fd, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return hvm_set_errno_error("cannot tell who listens on %s",
					   path);
	if (cred.uid == geteuid() || cred.uid == 0)
		return 0;
	return hvm_set_error(
		-EPERM,
		"%s is served by uid %u (pid %d), neither you nor root; not sending it anything",
		path, (unsigned int)cred.uid, (int)cred.pid);
}

/* ---- the public face (hintvm.h) ---- */

int hvm_runtime_dir(char *buf, size_t len)
{
	return registry_dir(buf, len);
}

int hvm_list_vms(struct hvm_vm_entry **entries, size_t *count)
{
	struct registry_entry *list;
	struct hvm_vm_entry *out;
	char dir[REGISTRY_PATH_MAX];
	size_t n;
	int r;

	*entries = NULL;
	*count = 0;
	r = registry_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	r = registry_list(dir, true, &list, &n);
	if (r < 0)
		return r;
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out) {
		free(list);
		return hvm_set_error(-ENOMEM, "out of memory");
	}
	_Static_assert(sizeof(out->name) == sizeof(list->name), "name size");
	_Static_assert(sizeof(out->socket) == sizeof(list->path), "path size");
	for (size_t i = 0; i < n; i++) {
		memcpy(out[i].name, list[i].name, sizeof(out[i].name));
		memcpy(out[i].socket, list[i].path, sizeof(out[i].socket));
	}
	free(list);
	*entries = out;
	*count = n;
	return 0;
}

int hvm_control_connect(const char *name_or_path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r;

	if (!name_or_path)
		return hvm_set_error(-EINVAL, "no VM name or socket path");
	r = registry_resolve(name_or_path, addr.sun_path,
			     sizeof(addr.sun_path));
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hvm_set_errno_error("cannot create a socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = -errno;
		close(fd);
		return hvm_set_error(
			r, "cannot connect to %s: %s (is the VM running?)",
			addr.sun_path, strerror(-r));
	}
	/* A path is the caller's own choice; a name is the registry's. */
	if (!strchr(name_or_path, '/') && check_peer(fd, addr.sun_path) < 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}
