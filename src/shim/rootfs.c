// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The task's root: containerd hands Create the snapshot as mounts (an
 * overlay, or a bind of a directory) and leaves the bundle's rootfs
 * empty; the shim mounts them there, in order, before the runtime reads
 * the bundle, as containerd's runc shim does. Options in the mount(8)
 * spelling are split into mount(2)'s flags and its data string.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "shim/shim.h"

static const struct {
	const char *name;
	bool clear;
	unsigned long flag;
} mount_flags[] = {
	{ "ro", false, MS_RDONLY },	   { "rw", true, MS_RDONLY },
	{ "nosuid", false, MS_NOSUID },	   { "suid", true, MS_NOSUID },
	{ "nodev", false, MS_NODEV },	   { "dev", true, MS_NODEV },
	{ "noexec", false, MS_NOEXEC },	   { "exec", true, MS_NOEXEC },
	{ "bind", false, MS_BIND },	   { "rbind", false, MS_BIND | MS_REC },
	{ "noatime", false, MS_NOATIME },  { "relatime", false, MS_RELATIME },
	{ "sync", false, MS_SYNCHRONOUS }, { "defaults", false, 0 },
};

/* Split M's options into FLAGS and DATA (the rest, comma-joined). */
static int split_options(const Containerd__Types__Mount *m,
			 unsigned long *flags, char *data, size_t len,
			 char *err, size_t errlen)
{
	size_t used = 0;

	*flags = 0;
	data[0] = '\0';
	for (size_t i = 0; i < m->n_options; i++) {
		const char *o = m->options[i];
		bool known = false;

		for (size_t j = 0;
		     j < sizeof(mount_flags) / sizeof(mount_flags[0]); j++) {
			if (strcmp(o, mount_flags[j].name))
				continue;
			if (mount_flags[j].clear)
				*flags &= ~mount_flags[j].flag;
			else
				*flags |= mount_flags[j].flag;
			known = true;
		}
		if (known)
			continue;
		if (used + strlen(o) + 2 > len) {
			snprintf(
				err, errlen,
				"rootfs mount %s: options longer than %zu bytes",
				m->source, len);
			return -E2BIG;
		}
		used += (size_t)snprintf(data + used, len - used, "%s%s",
					 used ? "," : "", o);
	}
	return 0;
}

void shim_rootfs_unmount(const char *target)
{
	/* Stacked mounts come off one at a time, until none is left. */
	for (int i = 0; i < 64 && !umount2(target, MNT_DETACH); i++)
		;
}

int shim_rootfs_mount(Containerd__Types__Mount *const *m, size_t n,
		      const char *target, char *err, size_t errlen)
{
	/* Overlay's lowerdir lists may be long: a page is mount(2)'s limit. */
	static char data[4096];
	unsigned long flags;
	bool bind;
	int ret;

	if (n && mkdir(target, 0711) && errno != EEXIST) {
		snprintf(err, errlen, "rootfs %s: %s", target, strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < n; i++) {
		const char *type =
			m[i]->type && *m[i]->type ? m[i]->type : "none";

		ret = split_options(m[i], &flags, data, sizeof(data), err,
				    errlen);
		if (ret)
			goto undo;
		if (!strcmp(type, "bind"))
			flags |= MS_BIND;
		bind = flags & MS_BIND;
		/* A bind ignores MS_RDONLY until a remount that says it. */
		if (mount(m[i]->source, target, type,
			  bind ? flags & ~MS_RDONLY : flags,
			  data[0] ? data : NULL)) {
			ret = -errno;
			snprintf(
				err, errlen,
				"rootfs mount %zu (type %s, source %s) on %s: %s",
				i, type, m[i]->source, target, strerror(errno));
			goto undo;
		}
		if (bind && (flags & MS_RDONLY) &&
		    mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			  NULL)) {
			ret = -errno;
			snprintf(err, errlen,
				 "rootfs %s: read-only remount: %s", target,
				 strerror(errno));
			goto undo;
		}
	}
	return 0;
undo:
	shim_rootfs_unmount(target);
	return ret;
}
