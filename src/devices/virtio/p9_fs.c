// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "base/log.h"
#include "sandbox/landlock.h"
#include "devices/virtio/p9_fs.h"

/*
 * How every share path is resolved: inside the root, through no symlink
 * and no /proc magic link. RESOLVE_NO_SYMLINKS also covers the trailing
 * name, except for O_PATH | O_NOFOLLOW, which yields the symlink itself.
 */
#define P9_RESOLVE \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
/* Host mode bits a guest may never set on a host file (P9_IDS_HOST). */
#define SETID_BITS (S_ISUID | S_ISGID)

static atomic_bool no_openat2; /* the kernel (or qemu-user) lacks it */

void p9_fs_force_fd_walk(bool on)
{
	atomic_store(&no_openat2, on);
}

/*
 * Without openat2: the same rules by hand, one name at a time from DIRFD,
 * each opened with O_NOFOLLOW, so no symlink is followed (ELOOP) and no
 * name leaves DIRFD ("", ".", ".." and absolute paths: EXDEV, as
 * RESOLVE_BENEATH says).
 */
static int walk_at(int dirfd, const char *name, int flags, mode_t mode)
{
	char part[P9_NAME_MAX + 1];
	const char *p = name;
	int cur = dirfd, r;

	if (!*name) {
		int fd = openat(dirfd, ".", flags | O_CLOEXEC);

		return fd < 0 ? -errno : fd;
	}
	if (*name == '/')
		return -EXDEV;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		struct stat st;
		int next;

		if (len == 0 || len > P9_NAME_MAX)
			r = len ? -ENAMETOOLONG : -EXDEV;
		else
			r = 0;
		if (!r) {
			memcpy(part, p, len);
			part[len] = '\0';
			if (!strcmp(part, ".") || !strcmp(part, ".."))
				r = -EXDEV;
		}
		if (r)
			break;
		if (!slash) {
			next = openat(cur, part, flags | O_CLOEXEC | O_NOFOLLOW,
				      mode);
			r = next < 0 ? -errno : next;
			break;
		}
		next = openat(cur, part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			r = -errno;
			break;
		}
		if (fstat(next, &st) < 0)
			r = -errno;
		else if (!S_ISDIR(st.st_mode))
			r = S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
		if (r) {
			close(next);
			break;
		}
		if (cur != dirfd)
			close(cur);
		cur = next;
		p = slash + 1;
	}
	if (cur != dirfd)
		close(cur);
	return r;
}

/* Resolve NAME (a share path or a single name) under DIRFD. */
static int resolve_at(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = P9_RESOLVE,
	};

	if (atomic_load(&no_openat2))
		return walk_at(dirfd, name, flags | O_NOFOLLOW,
			       (flags & O_CREAT) ? mode : 0);
	/* EAGAIN: a concurrent rename raced with a ".."-free lookup. */
	for (int tries = 0; tries < 16; tries++) {
		long fd = syscall(SYS_openat2, dirfd, *name ? name : ".", &how,
				  sizeof(how));

		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS) {
			atomic_store(&no_openat2, true);
			return walk_at(dirfd, name, flags | O_NOFOLLOW,
				       (flags & O_CREAT) ? mode : 0);
		}
		if (errno != EAGAIN)
			return -errno;
	}
	return -EAGAIN;
}

static int resolve(const struct p9_fs *fs, const char *path, int flags)
{
	return resolve_at(fs->root_fd, path, flags, 0);
}

/* The directory a (dir, name) operation works in, after checking NAME. */
static int open_dir(const struct p9_fs *fs, const char *dir, const char *name)
{
	if (!p9_name_valid(name))
		return -EINVAL;
	return resolve(fs, dir, O_PATH | O_DIRECTORY);
}

/* PATH's parent directory; *BASE points at PATH's last name. */
static int open_parent(const struct p9_fs *fs, const char *path,
		       const char **base)
{
	char dir[P9_PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!*path)
		return -EBUSY; /* the root has no parent in the share */
	if (!slash) {
		*base = path;
		return resolve(fs, "", O_PATH | O_DIRECTORY);
	}
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*base = slash + 1;
	return resolve(fs, dir, O_PATH | O_DIRECTORY);
}

static int fstat_errno(int fd, struct stat *st)
{
	return fstat(fd, st) < 0 ? -errno : 0;
}

/*
 * A real (not O_PATH) descriptor of the regular file or directory at
 * PATH, which fstat said is ST: for xattrs, fchmod, futimens. The inode
 * is checked again, so a file swapped in between is not touched.
 */
static int meta_fd(const struct p9_fs *fs, const char *path,
		   const struct stat *st, int access)
{
	struct stat now;
	int fd;

	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		return -EOPNOTSUPP;
	fd = resolve(fs, path,
		     (S_ISDIR(st->st_mode) ? O_RDONLY | O_DIRECTORY : access) |
			     O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return fd;
	if (fstat(fd, &now) < 0 || now.st_ino != st->st_ino ||
	    now.st_dev != st->st_dev) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int p9_fs_open(struct p9_fs *fs, const char *dir, bool readonly,
	       enum p9_id_mode ids)
{
	struct stat st;
	int probe;

	*fs = (struct p9_fs){ .root_fd = -1, .readonly = readonly, .ids = ids };
	fs->root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0)
		return hvm_set_errno_error(
			"--share %s: cannot open the directory", dir);
	if (fstat(fs->root_fd, &st) < 0) {
		int r = hvm_set_errno_error("--share %s: stat", dir);

		p9_fs_close(fs);
		return r;
	}
	fs->root_dev = st.st_dev;
	probe = resolve(fs, "", O_PATH | O_DIRECTORY);
	if (probe < 0) {
		p9_fs_close(fs);
		return hvm_set_error(probe, "--share %s: %s", dir,
				     strerror(-probe));
	}
	close(probe);
	if (atomic_load(&no_openat2))
		pr_info("--share %s: no openat2 here, confining by walking one name at a time",
			dir);
	return 0;
}

int p9_fs_grant(const struct p9_fs *fs)
{
	return sandbox_grant_beneath(fs->root_fd,
				     fs->readonly ? SANDBOX_GRANT_SHARE_RO
						  : SANDBOX_GRANT_SHARE);
}

void p9_fs_close(struct p9_fs *fs)
{
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	fs->root_fd = -1;
}

bool p9_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len && len <= P9_NAME_MAX && !strchr(name, '/') &&
	       strcmp(name, ".") && strcmp(name, "..");
}

int p9_path_join(char *out, size_t cap, const char *dir, const char *name)
{
	int n;

	if (!p9_name_valid(name))
		return -EINVAL;
	n = *dir ? snprintf(out, cap, "%s/%s", dir, name)
		 : snprintf(out, cap, "%s", name);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

void p9_path_parent(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash)
		*slash = '\0';
	else
		path[0] = '\0';
}

struct p9_qid p9_fs_qid(const struct p9_fs *fs, dev_t dev, ino_t ino,
			mode_t mode)
{
	struct p9_qid qid = { .path = ino };

	/* A mount inside the share: keep its inode numbers apart. */
	if (dev != fs->root_dev)
		qid.path ^= (uint64_t)dev << 40;
	if (S_ISDIR(mode))
		qid.type = P9_QTDIR;
	else if (S_ISLNK(mode))
		qid.type = P9_QTSYMLINK;
	return qid;
}

/* --- ids=mapped: the guest's ownership in user.hintvm.* xattrs --- */

static bool read_u32_xattr(int fd, const char *name, uint32_t *v)
{
	uint32_t le;

	if (fgetxattr(fd, name, &le, sizeof(le)) != sizeof(le))
		return false;
	*v = le32toh(le);
	return true;
}

/* Replace ST's ownership, mode and rdev with the mapped ones present. */
static void mapped_apply(int fd, struct stat *st)
{
	uint32_t v;
	uint64_t rdev;

	if (read_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "uid", &v))
		st->st_uid = v;
	if (read_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "gid", &v))
		st->st_gid = v;
	if (read_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "mode", &v)) {
		mode_t type = v & S_IFMT;

		/* A directory stays a directory whatever the xattr says. */
		if (S_ISDIR(st->st_mode))
			type = S_IFDIR;
		else if (type == S_IFDIR || type == S_IFLNK || !type)
			type = S_IFREG;
		st->st_mode = type | (v & 07777);
	}
	if (fgetxattr(fd, P9_MAPPED_XATTR_PREFIX "rdev", &rdev, sizeof(rdev)) ==
	    sizeof(rdev))
		st->st_rdev = le64toh(rdev);
}

static int write_u32_xattr(int fd, const char *name, uint32_t v)
{
	uint32_t le = htole32(v);

	return fsetxattr(fd, name, &le, sizeof(le), 0) < 0 ? -errno : 0;
}

/* Record the guest's view of a file hintvm just created (fd is open). */
static int mapped_create(int fd, uint32_t uid, uint32_t gid, uint32_t mode,
			 uint64_t rdev)
{
	int r = write_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "uid", uid);

	if (!r)
		r = write_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "gid", gid);
	if (!r)
		r = write_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "mode", mode);
	if (!r && rdev) {
		uint64_t le = htole64(rdev);

		if (fsetxattr(fd, P9_MAPPED_XATTR_PREFIX "rdev", &le,
			      sizeof(le), 0) < 0)
			r = -errno;
	}
	return r;
}

/* Host permission bits for a file the guest creates with MODE. */
static mode_t host_perm(const struct p9_fs *fs, uint32_t mode, bool dir)
{
	if (fs->ids == P9_IDS_MAPPED)
		return (mode & 0777) | (dir ? 0700 : 0600);
	return mode & (dir ? 01777 : 0777); /* never set-id */
}

static void fill_attr(const struct p9_fs *fs, const struct stat *st,
		      struct p9_attr *attr)
{
	*attr = (struct p9_attr){
		.qid = p9_fs_qid(fs, st->st_dev, st->st_ino, st->st_mode),
		.mode = st->st_mode,
		.uid = st->st_uid,
		.gid = st->st_gid,
		.nlink = st->st_nlink,
		.rdev = st->st_rdev,
		.size = (uint64_t)st->st_size,
		.blksize = (uint64_t)st->st_blksize,
		.blocks = (uint64_t)st->st_blocks,
		.atime = st->st_atim,
		.mtime = st->st_mtim,
		.ctime = st->st_ctim,
	};
}

/* lstat() of a share path, with the mapped view applied. */
static int stat_path(const struct p9_fs *fs, const char *path, struct stat *st)
{
	int fd = resolve(fs, path, O_PATH);
	int r;

	if (fd < 0)
		return fd;
	r = fstat_errno(fd, st);
	close(fd);
	if (r || fs->ids != P9_IDS_MAPPED)
		return r;
	fd = meta_fd(fs, path, st, O_RDONLY);
	if (fd >= 0) {
		mapped_apply(fd, st);
		close(fd);
	}
	return 0;
}

int p9_fs_qid_of(const struct p9_fs *fs, const char *path, struct p9_qid *qid)
{
	struct stat st;
	int fd = resolve(fs, path, O_PATH);
	int r;

	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	close(fd);
	if (!r)
		*qid = p9_fs_qid(fs, st.st_dev, st.st_ino, st.st_mode);
	return r;
}

int p9_fs_getattr(const struct p9_fs *fs, const char *path,
		  struct p9_attr *attr)
{
	struct stat st;
	int r = stat_path(fs, path, &st);

	if (!r)
		fill_attr(fs, &st, attr);
	return r;
}

/* Tlopen/Tlcreate flags to open(2) flags; refuses writes on a ro share. */
static int open_flags(const struct p9_fs *fs, uint32_t dotl, int *flags)
{
	static const int access[] = { O_RDONLY, O_WRONLY, O_RDWR };
	uint32_t acc = dotl & P9_DOTL_ACCMODE;

	if (acc > 2)
		return -EINVAL;
	*flags = access[acc];
	if (dotl & P9_DOTL_TRUNC)
		*flags |= O_TRUNC;
	if (dotl & P9_DOTL_DSYNC)
		*flags |= O_DSYNC;
	if (dotl & P9_DOTL_SYNC)
		*flags |= O_SYNC;
	/* O_APPEND is left out: the guest sends the offset of every write. */
	if (fs->readonly && (acc != 0 || (dotl & P9_DOTL_TRUNC)))
		return -EROFS;
	return 0;
}

/* P9_IDS_HOST: writing to a set-id file clears its set-id bits first. */
static int drop_setid(const struct p9_fs *fs, int fd, const struct stat *st)
{
	if (fs->ids != P9_IDS_HOST || !(st->st_mode & SETID_BITS))
		return 0;
	return fchmod(fd, st->st_mode & 07777 & ~SETID_BITS) < 0 ? -errno : 0;
}

int p9_fs_lopen(const struct p9_fs *fs, const char *path, uint32_t dotl,
		int *out, bool *is_dir)
{
	struct stat st, now;
	int flags, fd, r;

	r = open_flags(fs, dotl, &flags);
	if (r)
		return r;
	fd = resolve(fs, path, O_PATH);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	close(fd);
	if (r)
		return r;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	/* Device nodes, FIFOs and sockets are never opened on the host. */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -EACCES;
	if (S_ISDIR(st.st_mode)) {
		if (flags & (O_WRONLY | O_RDWR | O_TRUNC))
			return -EISDIR;
		flags = O_RDONLY | O_DIRECTORY;
	}
	fd = resolve(fs, path, flags | O_NONBLOCK | O_NOCTTY | O_LARGEFILE);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &now);
	if (!r && (now.st_ino != st.st_ino || now.st_dev != st.st_dev ||
		   (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT)))
		r = -ESTALE; /* swapped between the check and the open */
	if (!r && (flags & (O_WRONLY | O_RDWR | O_TRUNC)))
		r = drop_setid(fs, fd, &now);
	if (!r)
		r = fcntl(fd, F_SETFL, 0) < 0 ? -errno : 0; /* blocking I/O */
	if (r) {
		close(fd);
		return r;
	}
	*out = fd;
	*is_dir = S_ISDIR(st.st_mode);
	return 0;
}

/*
 * lcreate of a name that exists opens it, but only a regular file: its
 * type is looked at through an O_PATH descriptor first, so a device node
 * or FIFO in the share is never opened on the host (an open alone can
 * block, or act, as a tape's rewind does), and the open must reach the
 * same inode.
 */
static int open_existing_file(int dfd, const char *name, int flags)
{
	struct stat st, now;
	int fd, r;

	fd = resolve_at(dfd, name, O_PATH, 0);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	close(fd);
	if (r)
		return r;
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* as an open with O_NOFOLLOW says */
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EACCES;
	fd = resolve_at(dfd, name, flags, 0);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &now);
	if (!r && (now.st_ino != st.st_ino || now.st_dev != st.st_dev ||
		   !S_ISREG(now.st_mode)))
		r = -ESTALE; /* swapped between the check and the open */
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

int p9_fs_lcreate(const struct p9_fs *fs, const char *dir, const char *name,
		  uint32_t dotl, uint32_t mode, uint32_t uid, uint32_t gid,
		  int *out, struct p9_qid *qid)
{
	mode_t perm = host_perm(fs, mode, false);
	bool created = true;
	struct stat st;
	int dfd, fd, flags, r;

	if (fs->readonly)
		return -EROFS;
	r = open_flags(fs, dotl, &flags);
	if (r)
		return r;
	dfd = open_dir(fs, dir, name);
	if (dfd < 0)
		return dfd;
	flags |= O_NONBLOCK | O_NOCTTY | O_LARGEFILE;
	fd = resolve_at(dfd, name, flags | O_CREAT | O_EXCL, perm);
	if (fd == -EEXIST && !(dotl & P9_DOTL_EXCL)) {
		created = false;
		fd = open_existing_file(dfd, name, flags);
	}
	close(dfd);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	if (!r && !S_ISREG(st.st_mode))
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EACCES;
	/* Exactly the guest's mode: hintvm's umask is no business of it. */
	if (!r && created && fchmod(fd, perm) < 0)
		r = -errno;
	if (!r && created && fs->ids == P9_IDS_MAPPED)
		r = mapped_create(fd, uid, gid, S_IFREG | (mode & 07777), 0);
	if (!r && !created && (flags & (O_WRONLY | O_RDWR | O_TRUNC)))
		r = drop_setid(fs, fd, &st);
	if (!r)
		r = fcntl(fd, F_SETFL, 0) < 0 ? -errno : 0;
	if (r) {
		close(fd);
		return r;
	}
	*qid = p9_fs_qid(fs, st.st_dev, st.st_ino, st.st_mode);
	*out = fd;
	return 0;
}

int p9_fs_mkdir(const struct p9_fs *fs, const char *dir, const char *name,
		uint32_t mode, uint32_t uid, uint32_t gid, struct p9_qid *qid)
{
	mode_t perm = host_perm(fs, mode, true);
	struct stat st;
	int dfd, fd, r = 0;

	if (fs->readonly)
		return -EROFS;
	dfd = open_dir(fs, dir, name);
	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, name, perm) < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	fd = resolve_at(dfd, name, O_RDONLY | O_DIRECTORY, 0);
	close(dfd);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	if (!r && fchmod(fd, perm) < 0)
		r = -errno;
	if (!r && fs->ids == P9_IDS_MAPPED)
		r = mapped_create(fd, uid, gid, S_IFDIR | (mode & 07777), 0);
	close(fd);
	if (!r)
		*qid = p9_fs_qid(fs, st.st_dev, st.st_ino, S_IFDIR);
	return r;
}

int p9_fs_symlink(const struct p9_fs *fs, const char *dir, const char *name,
		  const char *target, uint32_t uid, uint32_t gid,
		  struct p9_qid *qid)
{
	struct stat st;
	int dfd, r = 0;

	(void)uid, (void)gid; /* symlinks cannot carry user.* xattrs */
	if (fs->readonly)
		return -EROFS;
	if (!*target || strlen(target) >= P9_PATH_MAX)
		return -EINVAL;
	dfd = open_dir(fs, dir, name);
	if (dfd < 0)
		return dfd;
	/* The target is stored, never followed by hintvm: it may say anything. */
	if (symlinkat(target, dfd, name) < 0 ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	close(dfd);
	if (!r)
		*qid = p9_fs_qid(fs, st.st_dev, st.st_ino, st.st_mode);
	return r;
}

int p9_fs_mknod(const struct p9_fs *fs, const char *dir, const char *name,
		uint32_t mode, uint32_t major, uint32_t minor, uint32_t uid,
		uint32_t gid, struct p9_qid *qid)
{
	uint32_t type = mode & S_IFMT;
	struct stat st;
	int dfd, fd, r;

	if (fs->readonly)
		return -EROFS;
	/* No device node, FIFO or socket is ever made on the host. */
	if (fs->ids != P9_IDS_MAPPED)
		return -EPERM;
	if (type != S_IFCHR && type != S_IFBLK && type != S_IFIFO &&
	    type != S_IFSOCK && type != S_IFREG)
		return -EINVAL;
	dfd = open_dir(fs, dir, name);
	if (dfd < 0)
		return dfd;
	/* ids=mapped: a plain 0600 file whose xattrs say what it is. */
	fd = resolve_at(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK,
			0600);
	close(dfd);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	if (!r)
		r = mapped_create(fd, uid, gid, type | (mode & 07777),
				  makedev(major, minor));
	close(fd);
	if (!r)
		*qid = p9_fs_qid(fs, st.st_dev, st.st_ino, type);
	return r;
}

int p9_fs_link(const struct p9_fs *fs, const char *target, const char *dir,
	       const char *name)
{
	const char *base;
	int tdfd, dfd, r = 0;

	if (fs->readonly)
		return -EROFS;
	dfd = open_dir(fs, dir, name);
	if (dfd < 0)
		return dfd;
	tdfd = open_parent(fs, target, &base);
	if (tdfd < 0) {
		close(dfd);
		return tdfd;
	}
	/* Flags 0: a symlink is linked itself, never what it points to. */
	if (linkat(tdfd, base, dfd, name, 0) < 0)
		r = -errno;
	close(tdfd);
	close(dfd);
	return r;
}

int p9_fs_rename(const struct p9_fs *fs, const char *olddir,
		 const char *oldname, const char *newdir, const char *newname)
{
	int odfd, ndfd, r = 0;

	if (fs->readonly)
		return -EROFS;
	odfd = open_dir(fs, olddir, oldname);
	if (odfd < 0)
		return odfd;
	ndfd = open_dir(fs, newdir, newname);
	if (ndfd < 0) {
		close(odfd);
		return ndfd;
	}
	if (renameat(odfd, oldname, ndfd, newname) < 0)
		r = -errno;
	close(odfd);
	close(ndfd);
	return r;
}

int p9_fs_unlink(const struct p9_fs *fs, const char *dir, const char *name,
		 bool rmdir)
{
	int dfd, r = 0;

	if (fs->readonly)
		return -EROFS;
	dfd = open_dir(fs, dir, name);
	if (dfd < 0)
		return dfd;
	if (unlinkat(dfd, name, rmdir ? AT_REMOVEDIR : 0) < 0)
		r = -errno;
	close(dfd);
	return r;
}

int p9_fs_remove(const struct p9_fs *fs, const char *path)
{
	const char *base;
	struct stat st;
	int dfd, r = 0;

	if (fs->readonly)
		return -EROFS;
	dfd = open_parent(fs, path, &base);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    unlinkat(dfd, base, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
		r = -errno;
	close(dfd);
	return r;
}

int p9_fs_readlink(const struct p9_fs *fs, const char *path, char *buf,
		   size_t cap)
{
	int fd = resolve(fs, path, O_PATH);
	ssize_t n;

	if (fd < 0)
		return fd;
	/* An O_PATH fd of the symlink itself, read with an empty name. */
	n = readlinkat(fd, "", buf, cap);
	close(fd);
	if (n < 0)
		return errno == ENOENT ? -EINVAL : -errno;
	if ((size_t)n >= cap)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return (int)n;
}

static int set_mode(const struct p9_fs *fs, const char *path,
		    const struct stat *st, uint32_t mode)
{
	int fd, r;

	if (S_ISLNK(st->st_mode))
		return 0; /* a symlink's mode means nothing on Linux */
	fd = meta_fd(fs, path, st, O_RDONLY);
	if (fd < 0)
		return fd == -EOPNOTSUPP ? -EPERM : fd;
	if (fs->ids == P9_IDS_MAPPED)
		r = write_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "mode",
				    (st->st_mode & S_IFMT) | (mode & 07777));
	else
		r = fchmod(fd, mode & 07777 & ~SETID_BITS) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int set_owner(const struct p9_fs *fs, const char *path,
		     const struct stat *st, const struct p9_setattr *sa)
{
	int fd, r = 0;

	if (fs->ids != P9_IDS_MAPPED) {
		/* Refused, unless it changes nothing (cp -p, tar as root). */
		if (((sa->valid & P9_SETATTR_UID) && sa->uid != st->st_uid) ||
		    ((sa->valid & P9_SETATTR_GID) && sa->gid != st->st_gid))
			return -EPERM;
		return 0;
	}
	if (S_ISLNK(st->st_mode))
		return 0; /* no user.* xattrs on symlinks: host ownership */
	fd = meta_fd(fs, path, st, O_RDONLY);
	if (fd < 0)
		return fd == -EOPNOTSUPP ? -EPERM : fd;
	if (sa->valid & P9_SETATTR_UID)
		r = write_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "uid", sa->uid);
	if (!r && (sa->valid & P9_SETATTR_GID))
		r = write_u32_xattr(fd, P9_MAPPED_XATTR_PREFIX "gid", sa->gid);
	close(fd);
	return r;
}

static int set_size(const struct p9_fs *fs, const char *path,
		    const struct stat *host, uint64_t size)
{
	int fd, r;

	if (S_ISDIR(host->st_mode))
		return -EISDIR;
	if (!S_ISREG(host->st_mode))
		return -EINVAL;
	if (size > INT64_MAX)
		return -EFBIG;
	fd = meta_fd(fs, path, host, O_WRONLY);
	if (fd < 0)
		return fd;
	r = drop_setid(fs, fd, host);
	if (!r && ftruncate(fd, (off_t)size) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int set_times(const struct p9_fs *fs, const char *path,
		     const struct stat *st, const struct p9_setattr *sa)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };
	const char *base;
	int fd, r = 0;

	if (sa->valid & P9_SETATTR_ATIME)
		ts[0] = (sa->valid & P9_SETATTR_ATIME_SET)
				? sa->atime
				: (struct timespec){ .tv_nsec = UTIME_NOW };
	if (sa->valid & P9_SETATTR_MTIME)
		ts[1] = (sa->valid & P9_SETATTR_MTIME_SET)
				? sa->mtime
				: (struct timespec){ .tv_nsec = UTIME_NOW };
	if (!*path) {
		fd = meta_fd(fs, path, st, O_RDONLY);
		if (fd < 0)
			return fd;
		if (futimens(fd, ts) < 0)
			r = -errno;
		close(fd);
		return r;
	}
	fd = open_parent(fs, path, &base);
	if (fd < 0)
		return fd;
	if (utimensat(fd, base, ts, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	close(fd);
	return r;
}

int p9_fs_setattr(const struct p9_fs *fs, const char *path,
		  const struct p9_setattr *sa)
{
	struct stat host, view;
	int fd, r;

	if (fs->readonly)
		return -EROFS;
	fd = resolve(fs, path, O_PATH);
	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &host);
	close(fd);
	if (r)
		return r;
	view = host;
	if (fs->ids == P9_IDS_MAPPED && (sa->valid & P9_SETATTR_MODE)) {
		r = stat_path(fs, path, &view); /* keeps a mapped file type */
		if (r)
			return r;
	}
	if (sa->valid & (P9_SETATTR_UID | P9_SETATTR_GID))
		r = set_owner(fs, path, &host, sa);
	if (!r && (sa->valid & P9_SETATTR_MODE)) {
		struct stat with_type = host;

		with_type.st_mode =
			(host.st_mode & ~S_IFMT) | (view.st_mode & S_IFMT);
		r = set_mode(fs, path, &with_type, sa->mode);
		if (r == -ESTALE && !S_ISREG(host.st_mode))
			r = -EPERM;
	}
	if (!r && (sa->valid & P9_SETATTR_SIZE))
		r = set_size(fs, path, &host, sa->size);
	if (!r && (sa->valid & (P9_SETATTR_ATIME | P9_SETATTR_MTIME)))
		r = set_times(fs, path, &host, sa);
	return r;
}

int p9_fs_statfs(const struct p9_fs *fs, struct statfs *st)
{
	return fstatfs(fs->root_fd, st) < 0 ? -errno : 0;
}

/* Which xattr names a guest may see and set. */
static bool xattr_visible(const char *name)
{
	return !strncmp(name, "user.", 5) &&
	       strncmp(name, P9_MAPPED_XATTR_PREFIX,
		       strlen(P9_MAPPED_XATTR_PREFIX));
}

/* A descriptor to read or write PATH's xattrs (regular files, dirs). */
static int xattr_fd(const struct p9_fs *fs, const char *path)
{
	struct stat st;
	int fd = resolve(fs, path, O_PATH);
	int r;

	if (fd < 0)
		return fd;
	r = fstat_errno(fd, &st);
	close(fd);
	if (r)
		return r;
	return meta_fd(fs, path, &st, O_RDONLY);
}

int p9_fs_xattr_get(const struct p9_fs *fs, const char *path, const char *name,
		    void *buf, size_t cap)
{
	ssize_t n;
	int fd;

	if (!xattr_visible(name))
		return -ENODATA;
	fd = xattr_fd(fs, path);
	if (fd < 0)
		return fd == -EOPNOTSUPP ? -ENODATA : fd;
	n = fgetxattr(fd, name, buf, cap);
	if (n < 0)
		n = -errno;
	close(fd);
	return (int)n;
}

int p9_fs_xattr_list(const struct p9_fs *fs, const char *path, char *buf,
		     size_t cap)
{
	char all[P9_XATTR_SIZE_MAX];
	size_t out = 0;
	ssize_t n;
	int fd;

	fd = xattr_fd(fs, path);
	if (fd == -EOPNOTSUPP)
		return 0;
	if (fd < 0)
		return fd;
	n = flistxattr(fd, all, sizeof(all));
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	for (size_t off = 0; off < (size_t)n;) {
		const char *name = all + off;
		size_t len = strnlen(name, (size_t)n - off) + 1;

		off += len;
		if (!xattr_visible(name))
			continue;
		if (cap && out + len > cap)
			return -ERANGE;
		if (cap)
			memcpy(buf + out, name, len);
		out += len;
	}
	return (int)out;
}

int p9_fs_xattr_set(const struct p9_fs *fs, const char *path, const char *name,
		    const void *value, size_t len, int flags, bool remove)
{
	int fd, r = 0;

	if (fs->readonly)
		return -EROFS;
	if (!xattr_visible(name))
		return -EOPNOTSUPP;
	if (len > P9_XATTR_SIZE_MAX)
		return -E2BIG;
	fd = xattr_fd(fs, path);
	if (fd < 0)
		return fd == -EOPNOTSUPP ? -EPERM : fd;
	if (remove ? fremovexattr(fd, name)
		   : fsetxattr(fd, name, value, len, flags))
		r = -errno;
	close(fd);
	return r;
}
