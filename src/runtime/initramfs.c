// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A newc cpio writer for the console-mode initramfs (see initramfs.h).
 * The tree is walked with nftw(FTW_PHYS): symbolic links are stored as
 * links, never followed, so a rootfs cannot pull host files in; hard links
 * become separate copies; sockets are left out.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "abi/agent_proto.h"
#include "errbuf.h"
#include "initramfs.h"

struct cpio {
	FILE *f;
	unsigned int ino;
	size_t rootfs_len; /* strlen of the tree's top directory */
	const char *prefix; /* archive path of the tree's top */
	int error;
};

/* nftw has no user pointer: one archive at a time per process. */
static struct cpio *walk_cpio;

static void pad4(struct cpio *c, size_t len)
{
	static const char zeros[4];

	if (len & 3)
		fwrite(zeros, 1, 4 - (len & 3), c->f);
}

static void entry(struct cpio *c, const char *name, mode_t mode,
		  const struct stat *st, const void *data, size_t size)
{
	size_t namesize = strlen(name) + 1;
	unsigned int rmaj = 0, rmin = 0;

	if (st && (S_ISCHR(mode) || S_ISBLK(mode))) {
		rmaj = major(st->st_rdev);
		rmin = minor(st->st_rdev);
	}
	fprintf(c->f,
		"070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
		++c->ino, (unsigned int)mode, st ? (unsigned int)st->st_uid : 0,
		st ? (unsigned int)st->st_gid : 0, 1u,
		st ? (unsigned int)st->st_mtime : 0, size, 0u, 0u, rmaj, rmin,
		namesize, 0u);
	fwrite(name, 1, namesize, c->f);
	pad4(c, 110 + namesize);
	if (size) {
		fwrite(data, 1, size, c->f);
		pad4(c, size);
	}
}

static int copy_file(struct cpio *c, const char *name, const char *path,
		     const struct stat *st)
{
	void *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	if (st->st_size) {
		buf = malloc((size_t)st->st_size);
		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		n = read(fd, buf, (size_t)st->st_size);
	}
	close(fd);
	if (n != st->st_size) {
		free(buf);
		return -EIO;
	}
	entry(c, name, st->st_mode, st, buf, (size_t)st->st_size);
	free(buf);
	return 0;
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	struct cpio *c = walk_cpio;
	char name[PATH_MAX + 64], target[PATH_MAX];
	ssize_t n;

	(void)type;
	(void)ftw;
	snprintf(name, sizeof(name), "%s%s", c->prefix, path + c->rootfs_len);
	if (S_ISDIR(st->st_mode)) {
		entry(c, name, st->st_mode, st, NULL, 0);
	} else if (S_ISREG(st->st_mode)) {
		c->error = copy_file(c, name, path, st);
	} else if (S_ISLNK(st->st_mode)) {
		n = readlink(path, target, sizeof(target));
		if (n < 0 || n == sizeof(target))
			c->error = -EIO;
		else
			entry(c, name, st->st_mode, st, target, (size_t)n);
	} else if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ||
		   S_ISFIFO(st->st_mode)) {
		entry(c, name, st->st_mode, st, NULL, 0);
	}
	return c->error ? 1 : 0;
}

/* Bind-mounted host files (copied) and markers for shared directories. */
static int add_mounts(struct cpio *c, const struct rt_initramfs_extra *x)
{
	char name[64];
	struct stat st;

	for (size_t i = 0; i < x->nmounts; i++) {
		if (x->mount_kind[i] == 's') {
			snprintf(name, sizeof(name), "hintvm/shares/%zu", i);
			entry(c, name, S_IFREG | 0644, NULL, NULL, 0);
		} else if (x->mount_kind[i] == 'f') {
			int ret;

			snprintf(name, sizeof(name), "hintvm/files/%zu", i);
			if (stat(x->mount_src[i], &st) || !S_ISREG(st.st_mode))
				return -ENOENT;
			ret = copy_file(c, name, x->mount_src[i], &st);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* BASE's bytes first: the kernel unpacks concatenated archives in turn. */
static int copy_base(FILE *f, const char *base)
{
	char buf[65536];
	size_t n;
	FILE *in = fopen(base, "re");

	if (!in)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, f);
	fclose(in);
	return 0;
}

int rt_initramfs_write(const char *out, const char *base,
		       const char *guest_init, const uint8_t *frame, size_t len,
		       const struct rt_initramfs_extra *x, char *err,
		       size_t errlen)
{
	const char *rootfs = x->rootfs;
	struct cpio c = { .prefix = "hintvm/root" };
	struct stat st;
	int ret = 0;

	if (stat(guest_init, &st) || !S_ISREG(st.st_mode))
		return rt_fail(err, errlen, -ENOENT, "guest init %s: %s",
			       guest_init, strerror(errno ? errno : EINVAL));
	if (rootfs && (stat(rootfs, &st) || !S_ISDIR(st.st_mode)))
		return rt_fail(err, errlen, -ENOENT,
			       "root %s is not a directory", rootfs);
	c.f = fopen(out, "we");
	if (!c.f)
		return rt_fail(err, errlen, -errno, "%s: %s", out,
			       strerror(errno));
	if (base && copy_base(c.f, base)) {
		fclose(c.f);
		unlink(out);
		return rt_fail(err, errlen, -ENOENT, "initrd %s: %s", base,
			       strerror(errno));
	}
	for (const char *const *d =
		     (const char *const[]){ "proc", "dev", "hintvm", NULL };
	     *d; d++)
		entry(&c, *d, S_IFDIR | 0755, NULL, NULL, 0);
	if (stat(guest_init, &st) == 0)
		ret = copy_file(&c, "hintvm/oci-init", guest_init, &st);
	if (!ret) {
		entry(&c, &AGENT_CONTAINER_FILE[1] /* no leading / */,
		      S_IFREG | 0600, NULL, frame, len);
		entry(&c, "hintvm/files", S_IFDIR | 0755, NULL, NULL, 0);
		entry(&c, "hintvm/shares", S_IFDIR | 0755, NULL, NULL, 0);
		ret = add_mounts(&c, x);
		if (x->net_share) {
			entry(&c, "hintvm/cfg", S_IFDIR | 0755, NULL, NULL, 0);
			entry(&c, "hintvm/cfg-share", S_IFREG | 0644, NULL,
			      NULL, 0);
		}
	}
	if (!ret && rootfs) {
		c.rootfs_len = strlen(rootfs);
		walk_cpio = &c;
		if (nftw(rootfs, walk_one, 32, FTW_PHYS) || c.error)
			ret = c.error ? c.error : -EIO;
		walk_cpio = NULL;
	} else if (!ret) {
		/* The root comes as a 9p share (tag "rootfs"). */
		entry(&c, "hintvm/root", S_IFDIR | 0755, NULL, NULL, 0);
		entry(&c, "hintvm/root-share", S_IFREG | 0644, NULL, NULL, 0);
	}
	entry(&c, "TRAILER!!!", 0, NULL, NULL, 0);
	if (fclose(c.f) && !ret)
		ret = -EIO;
	if (ret) {
		unlink(out);
		return rt_fail(err, errlen, ret, "packing %s: %s",
			       rootfs ? rootfs : "the initramfs",
			       strerror(-ret));
	}
	return 0;
}
