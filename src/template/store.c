// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The template store (docs/template.md): a directory holding one
 * directory per template, named by its key, with the snapshot's `state`
 * and `memory`, the key's text (`key`) and where its files came from
 * (`origin`). Whoever can write any of them chooses what every clone
 * runs, so the store, each template and each file must be owned by root
 * or the caller and writable by nobody else; anything else is refused,
 * naming owner and mode, never used. A template whose key can no longer
 * match (another CPU or snapshot format, a kernel, initrd or agent that
 * changed or is gone) is removed when the store is listed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/sha256.h"
#include "hintvm/hintvm.h"
#include "image/builtin_agent.h"
#include "image/builtin_kernel.h"
#include "snapshot/format.h"
#include "template/template.h"

static const char *const template_files[] = {
	SNAP_STATE_FILE,
	SNAP_MEMORY_FILE,
	TEMPLATE_KEY_FILE,
	TEMPLATE_ORIGIN_FILE,
};
#define NR_TEMPLATE_FILES (sizeof(template_files) / sizeof(template_files[0]))

int template_dir_default(char *buf, size_t len)
{
	const char *env = getenv("HINTVM_TEMPLATE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (env && env[0])
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/var/cache/hintvm/templates");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/hintvm/templates", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/hintvm/templates", home);
	else
		return hvm_set_error(
			-ENOENT,
			"no template directory: set HINTVM_TEMPLATE_DIR or HOME");
	if (n < 0 || (size_t)n >= len)
		return hvm_set_error(-ENAMETOOLONG,
				     "template directory name too long");
	return 0;
}

int template_dir_or_default(const char **dir, char *buf, size_t len)
{
	int r = *dir ? 0 : template_dir_default(buf, len);

	if (r == 0 && !*dir)
		*dir = buf;
	return r;
}

int hvm_template_dir(char *buf, size_t len)
{
	return template_dir_default(buf, len);
}

/* Owned by root or the caller, writable by nobody else. */
static int check_owner(const struct stat *st, const char *what,
		       const char *path)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return hvm_set_error(
			-EPERM,
			"%s %s is owned by uid %u, not by you (uid %u) or root: refusing it (its owner chooses what every clone runs)",
			what, path, (unsigned int)st->st_uid,
			(unsigned int)geteuid());
	if (st->st_mode & 022)
		return hvm_set_error(
			-EPERM,
			"%s %s has mode %04o: others may write it; refusing it (expected 0700, or 0600 for a file)",
			what, path, (unsigned int)(st->st_mode & 07777));
	return 0;
}

/* mkdir -p for the parents (0755), the last one 0700. */
static int make_dir(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return hvm_set_error(-ENAMETOOLONG,
				     "template directory '%s': bad length",
				     dir);
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return hvm_set_errno_error(
				"template directory: mkdir %s", path);
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return hvm_set_errno_error("template directory: mkdir %s",
					   path);
	return 0;
}

int template_dir_open(const char *dir, bool create)
{
	struct stat st;
	int fd, r;

	if (create) {
		r = make_dir(dir);
		if (r < 0)
			return r;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hvm_set_errno_error("template directory %s", dir);
	if (fstat(fd, &st) < 0) {
		r = hvm_set_errno_error("template directory %s: fstat", dir);
	} else {
		r = check_owner(&st, "template directory", dir);
		if (r == 0)
			return fd;
	}
	close(fd);
	return r;
}

/* A file of template NAME, read whole into BUF (NUL-terminated). */
static int read_small(int tdir, const char *path, const char *name, char *buf,
		      size_t size, size_t *len)
{
	int fd = openat(tdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	struct stat st;
	ssize_t n;
	int r;

	if (fd < 0)
		return hvm_set_errno_error("template %s/%s", path, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hvm_set_error(-EINVAL,
				     "template %s/%s: not a regular file", path,
				     name);
	}
	r = check_owner(&st, "template file", path);
	while (r == 0 && got < size - 1 &&
	       (n = read(fd, buf + got, size - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = hvm_set_errno_error("template %s/%s: read", path,
						name);
		else
			got += (size_t)n;
	}
	close(fd);
	if (r == 0 && (size_t)st.st_size >= size)
		r = hvm_set_error(-EINVAL,
				  "template %s/%s: %lld bytes, more than %zu",
				  path, name, (long long)st.st_size, size - 1);
	buf[got] = '\0';
	*len = got;
	return r;
}

int template_load(int dirfd, const char *dir, const char *name,
		  struct template_key *k, uint64_t *disk, uint64_t *mem)
{
	char path[4096 + 80], hex[65];
	uint8_t sum[32];
	struct stat st;
	int tdir, r = 0;

	memset(k, 0, sizeof(*k));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!template_key_valid(name))
		return hvm_set_error(
			-EINVAL,
			"template %s: the name is not a key (64 hex digits)",
			path);
	tdir = openat(dirfd, name,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tdir < 0)
		return errno == ENOENT
			       ? hvm_set_error(-ENOENT, "no template %s", path)
			       : hvm_set_errno_error("template %s", path);
	if (fstat(tdir, &st) < 0)
		r = hvm_set_errno_error("template %s: fstat", path);
	if (r == 0)
		r = check_owner(&st, "template", path);
	*disk = 0;
	*mem = 0;
	for (size_t i = 0; r == 0 && i < NR_TEMPLATE_FILES; i++) {
		if (fstatat(tdir, template_files[i], &st, AT_SYMLINK_NOFOLLOW) <
		    0) {
			r = hvm_set_errno_error("template %s/%s", path,
						template_files[i]);
			break;
		}
		r = S_ISREG(st.st_mode)
			    ? check_owner(&st, "template file", path)
			    : hvm_set_error(
				      -EINVAL,
				      "template %s/%s: not a regular file",
				      path, template_files[i]);
		*disk += (uint64_t)st.st_blocks * 512;
		if (!strcmp(template_files[i], SNAP_MEMORY_FILE))
			*mem = (uint64_t)st.st_size;
	}
	if (r == 0)
		r = read_small(tdir, path, TEMPLATE_KEY_FILE, k->text,
			       sizeof(k->text), &k->len);
	if (r == 0)
		r = read_small(tdir, path, TEMPLATE_ORIGIN_FILE, k->origin,
			       sizeof(k->origin), &k->origin_len);
	close(tdir);
	if (r < 0)
		return r;
	/* The name is the key: a text that does not hash to it is not it. */
	sha256(k->text, k->len, sum);
	sha256_hex(sum, hex);
	if (strcmp(hex, name))
		return hvm_set_error(
			-EINVAL,
			"template %s: corrupt: its key file hashes to %.16s..., not to its name",
			path, hex);
	memcpy(k->hex, hex, sizeof(hex));
	return 0;
}

/* Does part NAME (a file's "sha256:HEX") still hold at its origin? */
static int file_part_stale(const struct template_key *k, const char *name,
			   const void *builtin, size_t builtin_len, char *why,
			   size_t len)
{
	char want[80], from[4096], hex[65], have[72];
	uint8_t sum[32];

	if (template_text_get(k->text, k->len, name, want, sizeof(want)) ||
	    template_text_get(k->origin, k->origin_len, name, from,
			      sizeof(from))) {
		snprintf(why, len, "its key has no %s", name);
		return 1;
	}
	if (!strcmp(want, "none"))
		return 0;
	if (!strcmp(from, "built-in") && builtin) {
		sha256(builtin, builtin_len, sum);
		sha256_hex(sum, hex);
	} else if (from[0] != '/' ||
		   template_file_sha256(from, name, hex) < 0) {
		snprintf(why, len, "its %s %s is gone", name, from);
		return 1;
	}
	snprintf(have, sizeof(have), "sha256:%s", hex);
	if (strcmp(have, want)) {
		snprintf(why, len, "its %s %s changed since", name, from);
		return 1;
	}
	return 0;
}

int template_stale(const struct template_key *k,
		   const struct template_host *host, bool files, char *why,
		   size_t len)
{
	char v[256], want[32];

	snprintf(want, sizeof(want), "%u", TEMPLATE_KEY_VERSION);
	if (template_text_get(k->text, k->len, "template", v, sizeof(v)) ||
	    strcmp(v, want)) {
		snprintf(why, len,
			 "its key is of layout %s, this hintvm's is %s", v,
			 want);
		return 1;
	}
	snprintf(want, sizeof(want), "%u", host->snapshot_format);
	if (template_text_get(k->text, k->len, "snapshot-format", v,
			      sizeof(v)) ||
	    strcmp(v, want)) {
		snprintf(why, len,
			 "made for snapshot format %s, this hintvm writes %s",
			 v, want);
		return 1;
	}
	snprintf(want, sizeof(want), "%u", host->virtio_state);
	if (template_text_get(k->text, k->len, "virtio-state", v, sizeof(v)) ||
	    strcmp(v, want)) {
		snprintf(
			why, len,
			"made with virtio state version %s, this hintvm has %s",
			v, want);
		return 1;
	}
	if (template_text_get(k->text, k->len, "cpu", v, sizeof(v)) ||
	    strcmp(v, host->cpu)) {
		snprintf(why, len, "made on another CPU (%.120s)", v);
		return 1;
	}
	if (!files)
		return 0;
	if (file_part_stale(k, "kernel", hvm_builtin_kernel_start,
			    hvm_builtin_kernel_size(), why, len) ||
	    file_part_stale(k, "initrd", NULL, 0, why, len) ||
	    file_part_stale(k, "agent-initramfs", NULL, 0, why, len))
		return 1;
	/* The agent part is this library's built-in agent, or none. */
	if (template_text_get(k->text, k->len, "agent", v, sizeof(v))) {
		snprintf(why, len, "its key has no agent");
		return 1;
	}
	if (strcmp(v, "none")) {
		uint8_t sum[32];
		char hex[65], have[72];

		sha256(hvm_builtin_agent_start, hvm_builtin_agent_size(), sum);
		sha256_hex(sum, hex);
		snprintf(have, sizeof(have), "sha256:%s", hex);
		if (strcmp(have, v)) {
			snprintf(why, len,
				 "made with another build's guest agent");
			return 1;
		}
	}
	return 0;
}

int template_remove(int dirfd, const char *dir, const char *name)
{
	int tdir, r = 0;

	if (!template_key_valid(name) && strncmp(name, ".tmp-", 5))
		return hvm_set_error(-EINVAL,
				     "template %s/%s: not a template's name",
				     dir, name);
	tdir = openat(dirfd, name,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tdir < 0)
		return errno == ENOENT
			       ? hvm_set_error(-ENOENT, "no template %s/%s",
					       dir, name)
			       : hvm_set_errno_error("template %s/%s", dir,
						     name);
	/* Only the files a template has: anything else stays, and says so. */
	for (size_t i = 0; i < NR_TEMPLATE_FILES; i++)
		if (unlinkat(tdir, template_files[i], 0) < 0 && errno != ENOENT)
			r = hvm_set_errno_error("template %s/%s: remove %s",
						dir, name, template_files[i]);
	close(tdir);
	if (r == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		r = hvm_set_errno_error(
			"template %s/%s: remove the directory (files other than a template's in it?)",
			dir, name);
	return r;
}

/*
 * A make's directory, .tmp-<key prefix>-<pid>: removed when that process
 * is gone (it died before it could rename or remove it), left alone while
 * it may still be making.
 */
static void remove_abandoned(int dirfd, const char *dir, const char *name)
{
	const char *dash = strrchr(name, '-');
	char *end;
	long pid;

	if (!dash)
		return;
	pid = strtol(dash + 1, &end, 10);
	if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return;
	if (template_remove(dirfd, dir, name) < 0)
		pr_warn("%s", hvm_last_error());
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct hvm_template *)a)->key,
		      ((const struct hvm_template *)b)->key);
}

/* One listed entry: usable, stale (then removed) or refused. */
static int list_one(int dirfd, const char *dir, const char *name,
		    const struct template_host *host, struct template_key *k,
		    struct hvm_template *t)
{
	char why[256];
	int r;

	memset(t, 0, sizeof(*t));
	snprintf(t->key, sizeof(t->key), "%.64s", name);
	r = template_load(dirfd, dir, name, k, &t->disk_bytes, &t->mem_bytes);
	if (r < 0) {
		snprintf(t->problem, sizeof(t->problem), "%s",
			 hvm_last_error());
		return 0;
	}
	t->parts = strdup(k->text);
	t->origin = strdup(k->origin);
	if (!t->parts || !t->origin)
		return hvm_set_error(-ENOMEM, "out of memory");
	if (template_stale(k, host, true, why, sizeof(why))) {
		r = template_remove(dirfd, dir, name);
		snprintf(t->problem, sizeof(t->problem), "stale: %s%s%.200s",
			 why, r < 0 ? "; cannot remove it: " : "",
			 r < 0 ? hvm_last_error() : "");
		t->removed = r == 0;
	}
	return 0;
}

int hvm_template_list(const char *dir, struct hvm_template **out, size_t *count)
{
	char def[4096];
	struct template_host host;
	struct template_key *k = NULL;
	struct hvm_template *list = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = NULL;
	int fd, r;

	*out = NULL;
	*count = 0;
	r = template_dir_or_default(&dir, def, sizeof(def));
	if (r < 0)
		return r;
	r = template_host_this(&host);
	if (r < 0)
		return r;
	fd = template_dir_open(dir, false);
	if (fd == -ENOENT)
		return 0; /* no store yet: no templates */
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	k = malloc(sizeof(*k));
	if (!d || !k) {
		r = hvm_set_error(-ENOMEM, "out of memory");
		goto out;
	}
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, ".tmp-", 5)) {
			remove_abandoned(dirfd(d), dir, e->d_name);
			continue;
		}
		if (!template_key_valid(e->d_name))
			continue; /* ".", ".." */
		if (n == cap) {
			struct hvm_template *grown;

			cap = cap ? cap * 2 : 8;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				r = hvm_set_error(-ENOMEM, "out of memory");
				goto out;
			}
			list = grown;
		}
		r = list_one(dirfd(d), dir, e->d_name, &host, k, &list[n]);
		if (r < 0)
			goto out;
		n++;
	}
	qsort(list, n, sizeof(*list), by_key);
	*out = list;
	*count = n;
	list = NULL;
	n = 0;
out:
	hvm_template_list_free(list, n);
	free(k);
	if (d)
		closedir(d);
	else
		close(fd);
	return r;
}

void hvm_template_list_free(struct hvm_template *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++) {
		free(list[i].parts);
		free(list[i].origin);
	}
	free(list);
}

int hvm_template_drop(const char *dir, const char *key)
{
	struct hvm_template *list;
	char def[4096];
	size_t n;
	int fd, r;

	r = template_dir_or_default(&dir, def, sizeof(def));
	if (r < 0)
		return r;
	if (key) {
		if (!template_key_valid(key))
			return hvm_set_error(
				-EINVAL,
				"template key '%s': expected 64 lower-case hex digits (hintvm template list shows them)",
				key);
		fd = template_dir_open(dir, false);
		if (fd < 0)
			return fd;
		r = template_remove(fd, dir, key);
		close(fd);
		return r;
	}
	/* All: the listing removes the stale ones on its way. */
	r = hvm_template_list(dir, &list, &n);
	if (r < 0)
		return r;
	fd = n ? template_dir_open(dir, false) : -1;
	for (size_t i = 0; r == 0 && fd >= 0 && i < n; i++)
		if (!list[i].removed)
			r = template_remove(fd, dir, list[i].key);
	if (fd >= 0)
		close(fd);
	hvm_template_list_free(list, n);
	return r;
}
