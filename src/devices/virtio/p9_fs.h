/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file-system operations behind a 9P share, confined to the shared
 * directory. This is the security boundary of --share:
 *
 * - A share path is a string of names relative to the share root ("" is
 *   the root), built only by p9_path_join() from names that passed
 *   p9_name_valid() (no '/', not "." or "..") and shortened only by
 *   p9_path_parent(), so ".." is resolved lexically and stops at the root.
 * - Every path is resolved with openat2(root, path, RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) and O_NOFOLLOW: the kernel
 *   refuses any symlink on the way, whoever made it and whenever it was
 *   swapped in, and anything that would leave the root. Where openat2 is
 *   missing (Linux < 5.6, qemu-user) the same rules hold by an fd walk:
 *   one name at a time, each opened O_NOFOLLOW from the last. Operations on a
 *   name use the *at() call on the resolved parent directory with the
 *   no-follow flag; none takes a host path.
 * - Only regular files and directories are ever opened for I/O: a host
 *   device node, FIFO or socket in the share is visible but not opened.
 * - Ownership (enum p9_id_mode): with P9_IDS_HOST the guest sees host
 *   ownership and modes, files it creates belong to hintvm's user, set-id
 *   bits are stripped, chown and mknod are refused (EPERM); opening a
 *   set-id file for writing clears its set-id bits first (root's writes do
 *   not). With P9_IDS_MAPPED the guest's uid, gid, mode and device number
 *   live in user.hintvm.{uid,gid,mode,rdev} xattrs of a host file that is
 *   never set-id and never a device node (QEMU's mapped-xattr model).
 * - A read-only share fails every mutating operation with EROFS.
 *
 * Functions return 0 (or a count) or a negative errno, and are safe to
 * call from several threads at once.
 */
#ifndef HVM_DEVICES_VIRTIO_P9_FS_H
#define HVM_DEVICES_VIRTIO_P9_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>

#include "devices/virtio/p9_proto.h"

#define P9_NAME_MAX 255
#define P9_PATH_MAX 4096
#define P9_XATTR_SIZE_MAX 65536

/* The xattrs of P9_IDS_MAPPED; guests can neither see nor set them. */
#define P9_MAPPED_XATTR_PREFIX "user.hintvm."

enum p9_id_mode { P9_IDS_HOST, P9_IDS_MAPPED };

struct p9_fs {
	int root_fd; /* O_PATH directory */
	dev_t root_dev;
	bool readonly;
	enum p9_id_mode ids;
};

struct p9_attr {
	struct p9_qid qid;
	uint32_t mode, uid, gid;
	uint64_t nlink, rdev, size, blksize, blocks;
	struct timespec atime, mtime, ctime;
};

struct p9_setattr {
	uint32_t valid; /* P9_SETATTR_* */
	uint32_t mode, uid, gid;
	uint64_t size;
	struct timespec atime, mtime;
};

/* Open DIR as the share root. 0 or -errno (message in hvm_error_message). */
int p9_fs_open(struct p9_fs *fs, const char *dir, bool readonly,
	       enum p9_id_mode ids);
void p9_fs_close(struct p9_fs *fs);
/*
 * On a thread about to confine itself to serve FS: its Landlock domain
 * allows FS's tree (read-only for a read-only share) and nothing else of
 * the file system (sandbox/landlock.h). 0 or -errno.
 */
int p9_fs_grant(const struct p9_fs *fs);
/* Tests: confine by the fd walk even where openat2 exists. */
void p9_fs_force_fd_walk(bool on);

bool p9_name_valid(const char *name);
/* OUT = DIR/NAME (NAME valid): 0, -EINVAL or -ENAMETOOLONG. */
int p9_path_join(char *out, size_t cap, const char *dir, const char *name);
/* Drop the last name of PATH in place; the root stays the root. */
void p9_path_parent(char *path);

/* The qid of a host file: its type from MODE, path from DEV and INO. */
struct p9_qid p9_fs_qid(const struct p9_fs *fs, dev_t dev, ino_t ino,
			mode_t mode);

int p9_fs_getattr(const struct p9_fs *fs, const char *path,
		  struct p9_attr *attr);
/* Only the qid (a walk's answer): no mapped xattrs are read. */
int p9_fs_qid_of(const struct p9_fs *fs, const char *path, struct p9_qid *qid);
/*
 * Open PATH for I/O with Tlopen FLAGS (P9_DOTL_*). *FD gets the open
 * file, *IS_DIR whether it is a directory.
 */
int p9_fs_lopen(const struct p9_fs *fs, const char *path, uint32_t flags,
		int *fd, bool *is_dir);
/* Tlcreate: create and open DIR/NAME; *QID describes it. */
int p9_fs_lcreate(const struct p9_fs *fs, const char *dir, const char *name,
		  uint32_t flags, uint32_t mode, uint32_t uid, uint32_t gid,
		  int *fd, struct p9_qid *qid);
int p9_fs_mkdir(const struct p9_fs *fs, const char *dir, const char *name,
		uint32_t mode, uint32_t uid, uint32_t gid, struct p9_qid *qid);
int p9_fs_symlink(const struct p9_fs *fs, const char *dir, const char *name,
		  const char *target, uint32_t uid, uint32_t gid,
		  struct p9_qid *qid);
int p9_fs_mknod(const struct p9_fs *fs, const char *dir, const char *name,
		uint32_t mode, uint32_t major, uint32_t minor, uint32_t uid,
		uint32_t gid, struct p9_qid *qid);
/* A hard link DIR/NAME to the file at TARGET (both inside the share). */
int p9_fs_link(const struct p9_fs *fs, const char *target, const char *dir,
	       const char *name);
int p9_fs_rename(const struct p9_fs *fs, const char *olddir,
		 const char *oldname, const char *newdir, const char *newname);
int p9_fs_unlink(const struct p9_fs *fs, const char *dir, const char *name,
		 bool rmdir);
/* Tremove: unlink whatever PATH is (never the root). */
int p9_fs_remove(const struct p9_fs *fs, const char *path);
/* The target of the symlink at PATH into BUF (NUL-terminated); length. */
int p9_fs_readlink(const struct p9_fs *fs, const char *path, char *buf,
		   size_t cap);
int p9_fs_setattr(const struct p9_fs *fs, const char *path,
		  const struct p9_setattr *sa);
int p9_fs_statfs(const struct p9_fs *fs, struct statfs *st);

/*
 * Extended attributes of PATH, in the guest's view: only the "user."
 * namespace, never P9_MAPPED_XATTR_PREFIX. Get/list with CAP 0 return the
 * size; a name outside the namespace reads as absent (-ENODATA) and
 * cannot be set (-EOPNOTSUPP).
 */
int p9_fs_xattr_get(const struct p9_fs *fs, const char *path, const char *name,
		    void *buf, size_t cap);
int p9_fs_xattr_list(const struct p9_fs *fs, const char *path, char *buf,
		     size_t cap);
/* Set NAME (FLAGS: XATTR_CREATE/REPLACE); LEN 0 with REMOVE removes it. */
int p9_fs_xattr_set(const struct p9_fs *fs, const char *path, const char *name,
		    const void *value, size_t len, int flags, bool remove);

#endif
