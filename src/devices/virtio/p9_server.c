// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "devices/virtio/p9_server.h"

/* One handler per T-message: decode everything, check, then act. */
struct p9_call {
	struct p9_server *s;
	struct p9_reader *r;
	struct p9_writer *w;
};

/* A fid from the request, referenced; NULL and *ERR = -EBADF if absent. */
static struct p9_fid *get_fid(struct p9_server *s, uint32_t id, int *err)
{
	struct p9_fid *fid = p9_fid_get(&s->fids, id);

	if (!fid)
		*err = -EBADF;
	return fid;
}

static void put_fid(struct p9_server *s, struct p9_fid *fid)
{
	p9_fid_put(&s->fids, fid);
}

static int fid_path(struct p9_server *s, struct p9_fid *fid, char *buf)
{
	return p9_fid_path(&s->fids, fid, buf, P9_PATH_MAX);
}

/* The open descriptor of FID (stable while referenced), or -EBADF. */
static int open_fd(struct p9_fid *fid, bool *is_dir)
{
	int fd = -EBADF;

	pthread_mutex_lock(&fid->lock);
	if (fid->kind == P9_FID_OPEN) {
		fd = fid->fd;
		if (is_dir)
			*is_dir = fid->is_dir;
	}
	pthread_mutex_unlock(&fid->lock);
	return fd;
}

static int h_version(struct p9_call *c)
{
	uint32_t msize = p9_get_u32(c->r);
	char version[32];

	p9_get_str(c->r, version, sizeof(version));
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	if (msize < P9_MIN_MSIZE)
		return -EINVAL;
	if (msize > c->s->max_msize)
		msize = c->s->max_msize;
	/* A new session: the fids of the old one are gone. */
	p9_fid_table_clear(&c->s->fids);
	atomic_store(&c->s->msize, msize);
	p9_put_u32(c->w, msize);
	if (strcmp(version, P9_VERSION_L))
		p9_put_str(c->w, "unknown", 7);
	else
		p9_put_str(c->w, P9_VERSION_L, strlen(P9_VERSION_L));
	return 0;
}

static int qid_of(struct p9_server *s, const char *path, struct p9_qid *qid)
{
	return p9_fs_qid_of(&s->fs, path, qid);
}

static int h_attach(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r);
	char name[P9_NAME_MAX + 1];
	struct p9_fid *fid;
	struct p9_qid qid;
	uint32_t uid;
	int r;

	p9_get_u32(c->r); /* afid: no authentication */
	p9_get_str(c->r, name, sizeof(name)); /* uname */
	p9_get_str(c->r, name, sizeof(name)); /* aname: one tree per share */
	uid = p9_get_u32(c->r);
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	r = qid_of(c->s, "", &qid);
	if (r)
		return r;
	r = p9_fid_add(&c->s->fids, fid_id, "", uid == P9_NOFID ? 0 : uid,
		       &fid);
	if (r)
		return r;
	put_fid(c->s, fid);
	p9_put_qid(c->w, &qid);
	return 0;
}

static int h_walk(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), newfid_id = p9_get_u32(c->r);
	uint16_t nwname = p9_get_u16(c->r);
	char names[P9_MAXWELEM][P9_NAME_MAX + 1];
	struct p9_qid qids[P9_MAXWELEM];
	char path[P9_PATH_MAX], next[P9_PATH_MAX];
	struct p9_fid *fid, *newfid;
	unsigned int done = 0;
	int r = 0;

	if (nwname > P9_MAXWELEM)
		return -EINVAL;
	for (unsigned int i = 0; i < nwname; i++)
		p9_get_str(c->r, names[i], sizeof(names[i]));
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	r = fid_path(c->s, fid, path);
	for (unsigned int i = 0; !r && i < nwname; i++) {
		/* ".." is lexical and stops at the root: never leaves it. */
		if (!strcmp(names[i], ".."))
			p9_path_parent(strcpy(next, path));
		else
			r = p9_path_join(next, sizeof(next), path, names[i]);
		if (!r)
			r = qid_of(c->s, next, &qids[i]);
		if (!r) {
			strcpy(path, next);
			done++;
		}
	}
	if (done == 0 && nwname > 0) {
		put_fid(c->s, fid);
		return r ? r : -ENOENT;
	}
	r = 0;
	if (done == nwname) {
		if (newfid_id == fid_id) {
			r = p9_fid_set_path(&c->s->fids, fid, path);
		} else {
			r = p9_fid_add(&c->s->fids, newfid_id, path, fid->uid,
				       &newfid);
			if (!r)
				put_fid(c->s, newfid);
		}
	}
	put_fid(c->s, fid);
	if (r)
		return r;
	p9_put_u16(c->w, (uint16_t)done);
	for (unsigned int i = 0; i < done; i++)
		p9_put_qid(c->w, &qids[i]);
	return 0;
}

static void put_time(struct p9_writer *w, const struct timespec *ts)
{
	p9_put_u64(w, (uint64_t)ts->tv_sec);
	p9_put_u64(w, (uint64_t)ts->tv_nsec);
}

static int h_getattr(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r);
	char path[P9_PATH_MAX];
	struct p9_attr a;
	struct p9_fid *fid;
	int r = 0;

	p9_get_u64(c->r); /* request_mask: the basic fields are always sent */
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	r = fid_path(c->s, fid, path);
	put_fid(c->s, fid);
	if (!r)
		r = p9_fs_getattr(&c->s->fs, path, &a);
	if (r)
		return r;
	p9_put_u64(c->w, P9_GETATTR_BASIC);
	p9_put_qid(c->w, &a.qid);
	p9_put_u32(c->w, a.mode);
	p9_put_u32(c->w, a.uid);
	p9_put_u32(c->w, a.gid);
	p9_put_u64(c->w, a.nlink);
	p9_put_u64(c->w, a.rdev);
	p9_put_u64(c->w, a.size);
	p9_put_u64(c->w, a.blksize);
	p9_put_u64(c->w, a.blocks);
	put_time(c->w, &a.atime);
	put_time(c->w, &a.mtime);
	put_time(c->w, &a.ctime);
	put_time(c->w, &(struct timespec){ 0 }); /* btime */
	p9_put_u64(c->w, 0); /* gen */
	p9_put_u64(c->w, 0); /* data_version */
	return 0;
}

static int h_setattr(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r);
	struct p9_setattr sa;
	char path[P9_PATH_MAX];
	struct p9_fid *fid;
	int r = 0;

	sa.valid = p9_get_u32(c->r);
	sa.mode = p9_get_u32(c->r);
	sa.uid = p9_get_u32(c->r);
	sa.gid = p9_get_u32(c->r);
	sa.size = p9_get_u64(c->r);
	sa.atime.tv_sec = (time_t)p9_get_u64(c->r);
	sa.atime.tv_nsec = (long)p9_get_u64(c->r);
	sa.mtime.tv_sec = (time_t)p9_get_u64(c->r);
	sa.mtime.tv_nsec = (long)p9_get_u64(c->r);
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	if (((sa.valid & P9_SETATTR_ATIME_SET) &&
	     (uint64_t)sa.atime.tv_nsec >= 1000000000ull) ||
	    ((sa.valid & P9_SETATTR_MTIME_SET) &&
	     (uint64_t)sa.mtime.tv_nsec >= 1000000000ull))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	r = fid_path(c->s, fid, path);
	put_fid(c->s, fid);
	return r ? r : p9_fs_setattr(&c->s->fs, path, &sa);
}

/* After a successful open: FID now owns FD. */
static int set_open(struct p9_fid *fid, int fd, bool is_dir)
{
	int r = 0;

	pthread_mutex_lock(&fid->lock);
	if (fid->kind != P9_FID_PATH) {
		r = -EBADF; /* opened twice (a racing Tlopen): keep the first */
	} else {
		fid->kind = P9_FID_OPEN;
		fid->fd = fd;
		fid->is_dir = is_dir;
	}
	pthread_mutex_unlock(&fid->lock);
	if (r)
		close(fd);
	return r;
}

static int h_lopen(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), flags = p9_get_u32(c->r);
	char path[P9_PATH_MAX];
	struct p9_fid *fid;
	struct p9_qid qid;
	bool is_dir;
	int fd, r = 0;

	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	r = fid_path(c->s, fid, path);
	if (!r)
		r = qid_of(c->s, path, &qid);
	if (!r)
		r = p9_fs_lopen(&c->s->fs, path, flags, &fd, &is_dir);
	if (!r)
		r = set_open(fid, fd, is_dir);
	put_fid(c->s, fid);
	if (r)
		return r;
	p9_put_qid(c->w, &qid);
	p9_put_u32(c->w, 0); /* iounit: msize decides */
	return 0;
}

static int h_lcreate(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), flags, mode, gid;
	char name[P9_NAME_MAX + 1], path[P9_PATH_MAX], newpath[P9_PATH_MAX];
	struct p9_fid *fid;
	struct p9_qid qid;
	int fd, r = 0;

	p9_get_str(c->r, name, sizeof(name));
	flags = p9_get_u32(c->r);
	mode = p9_get_u32(c->r);
	gid = p9_get_u32(c->r);
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	r = fid_path(c->s, fid, path);
	if (!r)
		r = p9_path_join(newpath, sizeof(newpath), path, name);
	if (!r && open_fd(fid, NULL) >= 0)
		r = -EBADF; /* the directory fid must not be open */
	if (!r)
		r = p9_fs_lcreate(&c->s->fs, path, name, flags, mode, fid->uid,
				  gid, &fd, &qid);
	/* The fid now stands for the new, open file. */
	if (!r) {
		r = p9_fid_set_path(&c->s->fids, fid, newpath);
		if (r)
			close(fd);
	}
	if (!r)
		r = set_open(fid, fd, false);
	put_fid(c->s, fid);
	if (r)
		return r;
	p9_put_qid(c->w, &qid);
	p9_put_u32(c->w, 0);
	return 0;
}

/* The path of the directory fid DFID_ID into DIR. */
static int dir_path(struct p9_server *s, uint32_t dfid_id, char *dir,
		    uint32_t *uid)
{
	struct p9_fid *dfid;
	int r = 0;

	dfid = get_fid(s, dfid_id, &r);
	if (!dfid)
		return r;
	r = fid_path(s, dfid, dir);
	if (uid)
		*uid = dfid->uid;
	put_fid(s, dfid);
	return r;
}

static int h_symlink(struct p9_call *c)
{
	uint32_t dfid = p9_get_u32(c->r), gid, uid = 0;
	char name[P9_NAME_MAX + 1], dir[P9_PATH_MAX];
	char *target = malloc(P9_PATH_MAX);
	struct p9_qid qid;
	int r;

	if (!target)
		return -ENOMEM;
	p9_get_str(c->r, name, sizeof(name));
	p9_get_str(c->r, target, P9_PATH_MAX);
	gid = p9_get_u32(c->r);
	r = p9_reader_ok(c->r) ? dir_path(c->s, dfid, dir, &uid) : -EINVAL;
	if (!r)
		r = p9_fs_symlink(&c->s->fs, dir, name, target, uid, gid, &qid);
	free(target);
	if (!r)
		p9_put_qid(c->w, &qid);
	return r;
}

static int h_mknod(struct p9_call *c)
{
	uint32_t dfid = p9_get_u32(c->r), mode, major, minor, gid, uid = 0;
	char name[P9_NAME_MAX + 1], dir[P9_PATH_MAX];
	struct p9_qid qid;
	int r;

	p9_get_str(c->r, name, sizeof(name));
	mode = p9_get_u32(c->r);
	major = p9_get_u32(c->r);
	minor = p9_get_u32(c->r);
	gid = p9_get_u32(c->r);
	r = p9_reader_ok(c->r) ? dir_path(c->s, dfid, dir, &uid) : -EINVAL;
	if (!r)
		r = p9_fs_mknod(&c->s->fs, dir, name, mode, major, minor, uid,
				gid, &qid);
	if (!r)
		p9_put_qid(c->w, &qid);
	return r;
}

static int h_mkdir(struct p9_call *c)
{
	uint32_t dfid = p9_get_u32(c->r), mode, gid, uid = 0;
	char name[P9_NAME_MAX + 1], dir[P9_PATH_MAX];
	struct p9_qid qid;
	int r;

	p9_get_str(c->r, name, sizeof(name));
	mode = p9_get_u32(c->r);
	gid = p9_get_u32(c->r);
	r = p9_reader_ok(c->r) ? dir_path(c->s, dfid, dir, &uid) : -EINVAL;
	if (!r)
		r = p9_fs_mkdir(&c->s->fs, dir, name, mode, uid, gid, &qid);
	if (!r)
		p9_put_qid(c->w, &qid);
	return r;
}

/* OLD = OLDDIR/OLDNAME moved to NEWDIR/NEWNAME: fids follow. */
static int do_rename(struct p9_server *s, const char *olddir,
		     const char *oldname, const char *newdir,
		     const char *newname)
{
	char old[P9_PATH_MAX], new[P9_PATH_MAX];
	int r = p9_path_join(old, sizeof(old), olddir, oldname);

	if (!r)
		r = p9_path_join(new, sizeof(new), newdir, newname);
	if (!r)
		r = p9_fs_rename(&s->fs, olddir, oldname, newdir, newname);
	if (!r)
		p9_fid_rename(&s->fids, old, new);
	return r;
}

static int h_rename(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), dfid = p9_get_u32(c->r);
	char name[P9_NAME_MAX + 1], path[P9_PATH_MAX], olddir[P9_PATH_MAX];
	char newdir[P9_PATH_MAX];
	const char *slash;
	int r;

	p9_get_str(c->r, name, sizeof(name));
	r = p9_reader_ok(c->r) ? dir_path(c->s, fid_id, path, NULL) : -EINVAL;
	if (!r)
		r = dir_path(c->s, dfid, newdir, NULL);
	if (r)
		return r;
	if (!*path)
		return -EBUSY; /* the root */
	strcpy(olddir, path);
	p9_path_parent(olddir);
	slash = strrchr(path, '/');
	return do_rename(c->s, olddir, slash ? slash + 1 : path, newdir, name);
}

static int h_renameat(struct p9_call *c)
{
	uint32_t odfid = p9_get_u32(c->r), ndfid;
	char oldname[P9_NAME_MAX + 1], newname[P9_NAME_MAX + 1];
	char olddir[P9_PATH_MAX], newdir[P9_PATH_MAX];
	int r;

	p9_get_str(c->r, oldname, sizeof(oldname));
	ndfid = p9_get_u32(c->r);
	p9_get_str(c->r, newname, sizeof(newname));
	r = p9_reader_ok(c->r) ? dir_path(c->s, odfid, olddir, NULL) : -EINVAL;
	if (!r)
		r = dir_path(c->s, ndfid, newdir, NULL);
	return r ? r : do_rename(c->s, olddir, oldname, newdir, newname);
}

static int h_unlinkat(struct p9_call *c)
{
	uint32_t dfid = p9_get_u32(c->r), flags;
	char name[P9_NAME_MAX + 1], dir[P9_PATH_MAX];
	int r;

	p9_get_str(c->r, name, sizeof(name));
	flags = p9_get_u32(c->r);
	r = p9_reader_ok(c->r) ? dir_path(c->s, dfid, dir, NULL) : -EINVAL;
	return r ? r
		 : p9_fs_unlink(&c->s->fs, dir, name, flags & P9_AT_REMOVEDIR);
}

static int h_link(struct p9_call *c)
{
	uint32_t dfid = p9_get_u32(c->r), fid_id = p9_get_u32(c->r);
	char name[P9_NAME_MAX + 1], dir[P9_PATH_MAX], target[P9_PATH_MAX];
	int r;

	p9_get_str(c->r, name, sizeof(name));
	r = p9_reader_ok(c->r) ? dir_path(c->s, dfid, dir, NULL) : -EINVAL;
	if (!r)
		r = dir_path(c->s, fid_id, target, NULL);
	return r ? r : p9_fs_link(&c->s->fs, target, dir, name);
}

static int h_readlink(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r);
	char path[P9_PATH_MAX], target[P9_PATH_MAX];
	int r;

	r = p9_reader_ok(c->r) ? dir_path(c->s, fid_id, path, NULL) : -EINVAL;
	if (!r)
		r = p9_fs_readlink(&c->s->fs, path, target, sizeof(target));
	if (r < 0)
		return r;
	p9_put_str(c->w, target, (size_t)r);
	return 0;
}

static int h_statfs(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r);
	char path[P9_PATH_MAX];
	struct statfs st;
	uint64_t fsid;
	int r;

	r = p9_reader_ok(c->r) ? dir_path(c->s, fid_id, path, NULL) : -EINVAL;
	if (!r)
		r = p9_fs_statfs(&c->s->fs, &st);
	if (r)
		return r;
	memcpy(&fsid, &st.f_fsid, sizeof(fsid));
	p9_put_u32(c->w, (uint32_t)st.f_type);
	p9_put_u32(c->w, (uint32_t)st.f_bsize);
	p9_put_u64(c->w, st.f_blocks);
	p9_put_u64(c->w, st.f_bfree);
	p9_put_u64(c->w, st.f_bavail);
	p9_put_u64(c->w, st.f_files);
	p9_put_u64(c->w, st.f_ffree);
	p9_put_u64(c->w, fsid);
	p9_put_u32(c->w, (uint32_t)st.f_namelen);
	return 0;
}

static int h_xattrwalk(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), newfid_id = p9_get_u32(c->r);
	char name[P9_NAME_MAX + 1], path[P9_PATH_MAX];
	struct p9_fid *fid, *newfid;
	uint8_t *buf = NULL;
	int size = 0, r;

	p9_get_str(c->r, name, sizeof(name));
	r = p9_reader_ok(c->r) ? dir_path(c->s, fid_id, path, NULL) : -EINVAL;
	if (r)
		return r;
	/* The value can change between the size and the read: retry. */
	for (int tries = 0; tries < 4; tries++) {
		size = *name ? p9_fs_xattr_get(&c->s->fs, path, name, NULL, 0)
			     : p9_fs_xattr_list(&c->s->fs, path, NULL, 0);
		if (size < 0)
			return size;
		free(buf);
		buf = malloc(size ? (size_t)size : 1);
		if (!buf)
			return -ENOMEM;
		size = *name ? p9_fs_xattr_get(&c->s->fs, path, name, buf,
					       (size_t)size)
			     : p9_fs_xattr_list(&c->s->fs, path, (char *)buf,
						(size_t)size);
		if (size != -ERANGE)
			break;
	}
	if (size < 0) {
		free(buf);
		return size;
	}
	fid = get_fid(c->s, fid_id, &r);
	if (fid) {
		r = p9_fid_add(&c->s->fids, newfid_id, path, fid->uid, &newfid);
		put_fid(c->s, fid);
	}
	if (r) {
		free(buf);
		return r;
	}
	pthread_mutex_lock(&newfid->lock);
	/* The value stays on the host until the guest reads and clunks. */
	r = p9_fid_charge(&c->s->fids, newfid, size ? (size_t)size : 1);
	if (!r) {
		newfid->kind = P9_FID_XATTR_READ;
		newfid->xattr_buf = buf;
		newfid->xattr_len = (size_t)size;
		buf = NULL;
	}
	pthread_mutex_unlock(&newfid->lock);
	free(buf);
	if (r) {
		/* No half-made fid: the guest's clunk would find one. */
		put_fid(c->s, newfid);
		p9_fid_put(&c->s->fids, p9_fid_take(&c->s->fids, newfid_id));
		return r;
	}
	put_fid(c->s, newfid);
	p9_put_u64(c->w, (uint64_t)size);
	return 0;
}

static int h_xattrcreate(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), flags;
	char name[P9_NAME_MAX + 1];
	struct p9_fid *fid;
	uint64_t size;
	int r = 0;

	p9_get_str(c->r, name, sizeof(name));
	size = p9_get_u64(c->r);
	flags = p9_get_u32(c->r);
	if (!p9_reader_ok(c->r) ||
	    flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	if (c->s->fs.readonly)
		return -EROFS;
	if (size > P9_XATTR_SIZE_MAX)
		return -E2BIG;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	pthread_mutex_lock(&fid->lock);
	if (fid->kind != P9_FID_PATH) {
		r = -EBADF;
	} else if ((r = p9_fid_charge(&c->s->fids, fid,
				      size ? (size_t)size : 1)) == 0) {
		fid->xattr_name = strdup(name);
		fid->xattr_buf = calloc(1, size ? size : 1);
		if (!fid->xattr_name || !fid->xattr_buf) {
			free(fid->xattr_name);
			free(fid->xattr_buf);
			fid->xattr_name = NULL;
			fid->xattr_buf = NULL;
			r = -ENOMEM;
		} else {
			fid->kind = P9_FID_XATTR_WRITE;
			fid->xattr_len = size;
			fid->xattr_filled = 0;
			fid->xattr_flags = (int)flags;
		}
	}
	pthread_mutex_unlock(&fid->lock);
	put_fid(c->s, fid);
	return r;
}

/* The 9P size of a directory entry: qid offset type name. */
#define DIRENT_FIXED (P9_QID_SIZE + 8 + 1 + 2)

static int readdir_fill(struct p9_server *s, int fd, uint64_t offset,
			uint32_t count, struct p9_writer *w)
{
	uint8_t *count_at = p9_put_space(w, 4);
	size_t start = w->off, room = w->cap - w->off;
	char buf[16384] __attribute__((aligned(8)));
	long n;

	if (!count_at)
		return -ENOBUFS;
	if (room > count)
		room = count;
	if (offset > INT64_MAX)
		return -EINVAL;
	if (lseek(fd, (off_t)offset, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (long pos = 0; pos < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + pos);
			size_t len = strlen(d->d_name);
			struct p9_qid qid;
			mode_t type = d->d_type == DT_DIR   ? S_IFDIR
				      : d->d_type == DT_LNK ? S_IFLNK
							    : S_IFREG;

			pos += d->d_reclen;
			if (w->off - start + DIRENT_FIXED + len > room)
				goto full;
			qid = p9_fs_qid(&s->fs, s->fs.root_dev, d->d_ino, type);
			p9_put_qid(w, &qid);
			p9_put_u64(w, (uint64_t)d->d_off);
			p9_put_u8(w, d->d_type);
			p9_put_str(w, d->d_name, len);
		}
	}
full : {
	uint32_t le = htole32((uint32_t)(w->off - start));

	memcpy(count_at, &le, 4);
}
	return 0;
}

static int h_readdir(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), count;
	uint64_t offset = p9_get_u64(c->r);
	struct p9_fid *fid;
	int r = 0;

	count = p9_get_u32(c->r);
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	/* The directory offset is the fid's: one reader at a time. */
	pthread_mutex_lock(&fid->lock);
	if (fid->kind != P9_FID_OPEN || !fid->is_dir)
		r = -ENOTDIR;
	else
		r = readdir_fill(c->s, fid->fd, offset, count, c->w);
	pthread_mutex_unlock(&fid->lock);
	put_fid(c->s, fid);
	return r;
}

static int h_fsync(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), datasync = 0;
	struct p9_fid *fid;
	int fd, r = 0;

	/* Older clients send no datasync field. */
	if (p9_reader_left(c->r) >= 4)
		datasync = p9_get_u32(c->r);
	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	fd = open_fd(fid, NULL);
	if (fd < 0)
		r = fd;
	else if ((datasync ? fdatasync(fd) : fsync(fd)) < 0)
		r = -errno;
	put_fid(c->s, fid);
	return r;
}

static int lock_type(uint8_t type, short *out)
{
	switch (type) {
	case P9_LOCK_TYPE_RDLCK:
		*out = F_RDLCK;
		return 0;
	case P9_LOCK_TYPE_WRLCK:
		*out = F_WRLCK;
		return 0;
	case P9_LOCK_TYPE_UNLCK:
		*out = F_UNLCK;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Tlock/Tgetlock: open-file-description locks on the fid's own file. */
static int h_lock(struct p9_call *c, bool get)
{
	uint32_t fid_id = p9_get_u32(c->r), proc_id;
	uint8_t type = p9_get_u8(c->r);
	char client[P9_NAME_MAX + 1];
	struct flock fl = { .l_whence = SEEK_SET };
	uint64_t start, length;
	struct p9_fid *fid;
	int fd, r = 0;

	if (!get)
		p9_get_u32(c->r); /* flags: BLOCK is answered with BLOCKED */
	start = p9_get_u64(c->r);
	length = p9_get_u64(c->r);
	proc_id = p9_get_u32(c->r);
	p9_get_str(c->r, client, sizeof(client));
	if (!p9_reader_ok(c->r) || lock_type(type, &fl.l_type) ||
	    start > INT64_MAX || length > INT64_MAX)
		return -EINVAL;
	fl.l_start = (off_t)start;
	fl.l_len = (off_t)length;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	fd = open_fd(fid, NULL);
	if (fd < 0) {
		put_fid(c->s, fid);
		return fd;
	}
	/* Never F_OFD_SETLKW: a worker must not wait for another guest. */
	r = fcntl(fd, get ? F_OFD_GETLK : F_OFD_SETLK, &fl) < 0 ? -errno : 0;
	put_fid(c->s, fid);
	if (get) {
		if (r)
			return r;
		p9_put_u8(c->w, fl.l_type == F_RDLCK   ? P9_LOCK_TYPE_RDLCK
				: fl.l_type == F_WRLCK ? P9_LOCK_TYPE_WRLCK
						       : P9_LOCK_TYPE_UNLCK);
		p9_put_u64(c->w, (uint64_t)fl.l_start);
		p9_put_u64(c->w, (uint64_t)fl.l_len);
		p9_put_u32(c->w, fl.l_pid > 0 ? (uint32_t)fl.l_pid : proc_id);
		p9_put_str(c->w, client, strlen(client));
		return 0;
	}
	p9_put_u8(c->w, !r			       ? P9_LOCK_SUCCESS
			: r == -EAGAIN || r == -EACCES ? P9_LOCK_BLOCKED
						       : P9_LOCK_ERROR);
	return 0;
}

static int h_read(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), count;
	uint64_t offset = p9_get_u64(c->r);
	size_t room = c->w->cap - c->w->off;
	struct p9_fid *fid;
	uint8_t *data;
	ssize_t n = 0;
	int fd, r = 0;

	count = p9_get_u32(c->r);
	if (!p9_reader_ok(c->r) || room < 4 || offset > INT64_MAX)
		return -EINVAL;
	if (count > room - 4)
		count = (uint32_t)(room - 4);
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	p9_put_u32(c->w, 0);
	data = c->w->buf + c->w->off;
	pthread_mutex_lock(&fid->lock);
	if (fid->kind == P9_FID_XATTR_READ) {
		if (offset < fid->xattr_len) {
			n = (ssize_t)(fid->xattr_len - offset);
			if (n > count)
				n = count;
			memcpy(data, fid->xattr_buf + offset, (size_t)n);
		}
		pthread_mutex_unlock(&fid->lock);
	} else if (fid->kind == P9_FID_OPEN && !fid->is_dir) {
		fd = fid->fd;
		pthread_mutex_unlock(&fid->lock);
		/* Outside the lock: reads of one fid run in parallel. */
		n = pread(fd, data, count, (off_t)offset);
		if (n < 0)
			r = -errno;
	} else {
		pthread_mutex_unlock(&fid->lock);
		r = -EBADF;
	}
	put_fid(c->s, fid);
	if (r)
		return r;
	c->w->off -= 4;
	p9_put_u32(c->w, (uint32_t)n);
	p9_put_space(c->w, (size_t)n);
	return 0;
}

static int h_write(struct p9_call *c)
{
	uint32_t fid_id = p9_get_u32(c->r), count;
	uint64_t offset = p9_get_u64(c->r);
	const uint8_t *data;
	struct p9_fid *fid;
	ssize_t n = 0;
	int fd, r = 0;

	count = p9_get_u32(c->r);
	data = p9_get_bytes(c->r, count);
	if (!p9_reader_ok(c->r) || offset > INT64_MAX)
		return -EINVAL;
	fid = get_fid(c->s, fid_id, &r);
	if (!fid)
		return r;
	pthread_mutex_lock(&fid->lock);
	if (fid->kind == P9_FID_XATTR_WRITE) {
		if (offset > fid->xattr_len ||
		    count > fid->xattr_len - offset) {
			r = -ENOSPC;
		} else {
			memcpy(fid->xattr_buf + offset, data, count);
			if (offset + count > fid->xattr_filled)
				fid->xattr_filled = offset + count;
			n = count;
		}
		pthread_mutex_unlock(&fid->lock);
	} else if (fid->kind == P9_FID_OPEN && !fid->is_dir) {
		fd = fid->fd;
		pthread_mutex_unlock(&fid->lock);
		n = pwrite(fd, data, count, (off_t)offset);
		if (n < 0)
			r = -errno;
	} else {
		pthread_mutex_unlock(&fid->lock);
		r = -EBADF;
	}
	put_fid(c->s, fid);
	if (r)
		return r;
	p9_put_u32(c->w, (uint32_t)n);
	return 0;
}

/* Clunk of an xattr-create fid: now the attribute is set (or removed). */
static int commit_xattr(struct p9_server *s, struct p9_fid *fid)
{
	char path[P9_PATH_MAX];
	int r;

	if (fid->kind != P9_FID_XATTR_WRITE)
		return 0;
	if (fid->xattr_filled != fid->xattr_len)
		return -EINVAL; /* fewer bytes than announced */
	r = fid_path(s, fid, path);
	if (r)
		return r;
	/* Linux's removexattr is an xattrcreate of size 0 with no data. */
	if (fid->xattr_len == 0 && (fid->xattr_flags & XATTR_REPLACE))
		return p9_fs_xattr_set(&s->fs, path, fid->xattr_name, NULL, 0,
				       0, true);
	return p9_fs_xattr_set(&s->fs, path, fid->xattr_name, fid->xattr_buf,
			       fid->xattr_len, fid->xattr_flags, false);
}

static int h_clunk(struct p9_call *c, bool remove)
{
	uint32_t fid_id = p9_get_u32(c->r);
	char path[P9_PATH_MAX];
	struct p9_fid *fid;
	int r;

	if (!p9_reader_ok(c->r))
		return -EINVAL;
	fid = p9_fid_take(&c->s->fids, fid_id);
	if (!fid)
		return -EBADF;
	pthread_mutex_lock(&fid->lock);
	r = commit_xattr(c->s, fid);
	pthread_mutex_unlock(&fid->lock);
	/* Tremove clunks the fid even when the unlink fails. */
	if (remove) {
		r = fid_path(c->s, fid, path);
		if (!r)
			r = p9_fs_remove(&c->s->fs, path);
	}
	put_fid(c->s, fid);
	return r;
}

static int h_flush(struct p9_call *c)
{
	p9_get_u16(c->r); /* oldtag: the transport ordered the replies */
	return p9_reader_ok(c->r) ? 0 : -EINVAL;
}

static int dispatch(struct p9_call *c, uint8_t type)
{
	switch (type) {
	case P9_TVERSION:
		return h_version(c);
	case P9_TATTACH:
		return h_attach(c);
	case P9_TAUTH:
		return -EOPNOTSUPP;
	case P9_TWALK:
		return h_walk(c);
	case P9_TGETATTR:
		return h_getattr(c);
	case P9_TSETATTR:
		return h_setattr(c);
	case P9_TLOPEN:
		return h_lopen(c);
	case P9_TLCREATE:
		return h_lcreate(c);
	case P9_TSYMLINK:
		return h_symlink(c);
	case P9_TMKNOD:
		return h_mknod(c);
	case P9_TMKDIR:
		return h_mkdir(c);
	case P9_TRENAME:
		return h_rename(c);
	case P9_TRENAMEAT:
		return h_renameat(c);
	case P9_TUNLINKAT:
		return h_unlinkat(c);
	case P9_TLINK:
		return h_link(c);
	case P9_TREADLINK:
		return h_readlink(c);
	case P9_TSTATFS:
		return h_statfs(c);
	case P9_TXATTRWALK:
		return h_xattrwalk(c);
	case P9_TXATTRCREATE:
		return h_xattrcreate(c);
	case P9_TREADDIR:
		return h_readdir(c);
	case P9_TFSYNC:
		return h_fsync(c);
	case P9_TLOCK:
		return h_lock(c, false);
	case P9_TGETLOCK:
		return h_lock(c, true);
	case P9_TREAD:
		return h_read(c);
	case P9_TWRITE:
		return h_write(c);
	case P9_TCLUNK:
		return h_clunk(c, false);
	case P9_TREMOVE:
		return h_clunk(c, true);
	case P9_TFLUSH:
		return h_flush(c);
	default:
		return -EOPNOTSUPP;
	}
}

int p9_peek_header(const uint8_t *msg, size_t len, uint8_t *type, uint16_t *tag)
{
	if (len < P9_HDR_SIZE)
		return -EINVAL;
	*type = msg[4];
	*tag = (uint16_t)(msg[5] | (msg[6] << 8));
	return 0;
}

size_t p9_server_handle(struct p9_server *s, const uint8_t *req, size_t len,
			uint8_t *reply, size_t cap)
{
	struct p9_reader r;
	struct p9_writer w;
	struct p9_call c = { s, &r, &w };
	uint32_t msize = p9_server_msize(s);
	uint8_t type;
	uint16_t tag;
	size_t out;
	int err;

	if (p9_peek_header(req, len, &type, &tag) < 0)
		return 0;
	if (cap > msize)
		cap = msize;
	if (cap < P9_HDR_SIZE + 4)
		return 0;
	if (len > msize)
		return p9_build_lerror(reply, cap, tag, EMSGSIZE);
	if (p9_reader_init(&r, req, len, &type, &tag) < 0 || (type & 1))
		return p9_build_lerror(reply, cap, tag, EINVAL);
	if (s->before_op)
		s->before_op(s->before_op_ctx, type);
	p9_writer_init(&w, reply, cap, (uint8_t)(type + 1), tag);
	err = dispatch(&c, type);
	out = err ? 0 : p9_writer_finish(&w);
	if (!err && !out)
		err = -ENOBUFS; /* the reply did not fit the guest's buffer */
	if (err)
		return p9_build_lerror(reply, cap, tag, (uint32_t)-err);
	return out;
}

int p9_server_init(struct p9_server *s, const char *dir, bool readonly,
		   enum p9_id_mode ids, unsigned int max_fids,
		   uint32_t max_msize, struct budget *budget)
{
	int r;

	memset(s, 0, sizeof(*s));
	r = p9_fs_open(&s->fs, dir, readonly, ids);
	if (r)
		return r;
	p9_fid_table_init(&s->fids, max_fids, budget);
	s->max_msize = max_msize;
	atomic_store(&s->msize, max_msize);
	return 0;
}

void p9_server_reset(struct p9_server *s)
{
	p9_fid_table_clear(&s->fids);
	atomic_store(&s->msize, s->max_msize);
}

void p9_server_destroy(struct p9_server *s)
{
	p9_fid_table_destroy(&s->fids);
	p9_fs_close(&s->fs);
}
