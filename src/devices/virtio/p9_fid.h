/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fids of one 9P session: the guest's handles on files, each naming a
 * path inside the share (never a host path: see p9_fs.h) and maybe an open
 * file, directory or extended-attribute buffer. The table is bounded (a
 * guest cannot exhaust hintvm's file descriptors or memory with fids) and
 * safe for concurrent requests: a request holds a reference on each fid it
 * uses, so a Tclunk racing with a Tread frees nothing under the reader.
 */
#ifndef HVM_DEVICES_VIRTIO_P9_FID_H
#define HVM_DEVICES_VIRTIO_P9_FID_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/budget.h"

#define P9_FID_BUCKETS 256

enum p9_fid_kind {
	P9_FID_PATH, /* walked to, not opened */
	P9_FID_OPEN, /* fd is an open file or directory */
	P9_FID_XATTR_READ, /* Txattrwalk: xattr_buf holds the value */
	P9_FID_XATTR_WRITE, /* Txattrcreate: writes fill xattr_buf */
};

struct p9_fid {
	uint32_t id;
	uint32_t uid; /* the guest user it was attached as */
	/* Table-owned (under the table lock): */
	unsigned int refs;
	struct p9_fid *next;
	char *path; /* "" is the root; renames rewrite it */
	/* Request-owned, under LOCK: */
	pthread_mutex_t lock;
	enum p9_fid_kind kind;
	int fd; /* P9_FID_OPEN: the open file, else -1 */
	bool is_dir;
	char *xattr_name;
	uint8_t *xattr_buf;
	size_t xattr_len; /* value bytes (read) or declared size (write) */
	size_t xattr_filled; /* write: bytes received so far */
	int xattr_flags;
	/* Bytes charged to the table's budget: the fid, its path, xattrs. */
	size_t charged;
};

struct p9_fid_table {
	pthread_mutex_t lock;
	struct p9_fid *buckets[P9_FID_BUCKETS];
	unsigned int count;
	unsigned int max;
	struct budget *budget; /* the VM's guest objects; NULL: none */
};

/*
 * At most MAX fids, each charged to BUDGET (the fid and its path; NULL:
 * no budget): past either, p9_fid_add fails with -EMFILE or -ENFILE.
 */
void p9_fid_table_init(struct p9_fid_table *t, unsigned int max,
		       struct budget *budget);
/* N more bytes held by FID (an xattr buffer), charged to the budget:
 * 0, or -ENOMEM when over it. Released when the fid is freed. */
int p9_fid_charge(struct p9_fid_table *t, struct p9_fid *fid, size_t n);
/* Drop every fid (files close when their last request finishes). */
void p9_fid_table_clear(struct p9_fid_table *t);
void p9_fid_table_destroy(struct p9_fid_table *t);

/*
 * A new fid ID at PATH for guest user UID, returned with a reference for
 * the caller (and one for the table). -EEXIST when ID is in use, -EMFILE
 * when the table is full, -ENOMEM.
 */
int p9_fid_add(struct p9_fid_table *t, uint32_t id, const char *path,
	       uint32_t uid, struct p9_fid **out);
/* A reference on fid ID, or NULL when there is none. */
struct p9_fid *p9_fid_get(struct p9_fid_table *t, uint32_t id);
/* Remove fid ID from the table; the caller owns the table's reference. */
struct p9_fid *p9_fid_take(struct p9_fid_table *t, uint32_t id);
void p9_fid_put(struct p9_fid_table *t, struct p9_fid *fid);

/* Copy FID's current path into BUF (CAP bytes): 0 or -ENAMETOOLONG. */
int p9_fid_path(struct p9_fid_table *t, struct p9_fid *fid, char *buf,
		size_t cap);
/* Point FID at PATH (a walk onto itself): 0 or -ENOMEM. */
int p9_fid_set_path(struct p9_fid_table *t, struct p9_fid *fid,
		    const char *path);
/*
 * OLD was renamed to NEW: every fid at OLD or below it follows. 0 or
 * -ENOMEM (fids that could not follow keep the stale path, whose
 * operations then fail with ENOENT: never a wrong file outside the share).
 */
int p9_fid_rename(struct p9_fid_table *t, const char *old, const char *new);
unsigned int p9_fid_count(struct p9_fid_table *t);

#endif
