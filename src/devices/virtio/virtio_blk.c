// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/log.h"
#include "devices/virtio/iov.h"
#include "devices/virtio/rate_limiter.h"
#include "devices/virtio/virtio_blk.h"
#include "devices/virtio/virtio_blk_req.h"

#define MAX_DISCARD_SECTORS (1u << 22) /* 2 GiB per request */

struct virtio_blk;

struct blk_request {
	struct event_op op;
	struct virtio_blk *blk;
	struct virtq_chain *chain;
	struct virtio_blk_req req;
	uint32_t generation; /* device reset count when submitted */
	uint64_t done; /* bytes transferred so far (short reads resubmit) */
	bool busy;
};

struct virtio_blk {
	struct virtio_device vdev;
	struct virtio_blk_config config;
	struct event_loop *loop;
	int fd;
	uint64_t capacity; /* bytes */
	bool readonly;
	bool discard;
	bool waiting_for_slot; /* the queue stopped for lack of a request */
	uint32_t generation;
	/* iops=, bw=: the request that must wait stops the queue. */
	struct rate_limiter limit;
	struct blk_request *throttled;
	char name[24];
	char id[VIRTIO_BLK_ID_BYTES];
	char path[256]; /* for snapshots and their messages */
	struct blk_request reqs[VIRTIO_BLK_QUEUE_SIZE];
};

static struct virtio_blk *to_blk(struct virtio_device *vdev)
{
	return (struct virtio_blk *)vdev;
}

static void finish(struct blk_request *r, uint8_t status, uint32_t written)
{
	struct virtio_blk *blk = r->blk;
	struct virtio_device *vdev = &blk->vdev;

	r->busy = false;
	/* Completions from before a device reset are not the driver's now. */
	if (r->generation != blk->generation || !virtio_device_live(vdev))
		return;
	*r->req.status = status;
	virtq_push(&vdev->vqs[0], r->chain->head, written);
	virtio_queue_notify_driver(vdev, 0);
	if (blk->waiting_for_slot) {
		blk->waiting_for_slot = false;
		virtio_device_kick(vdev, 0);
	}
}

static int submit_rw(struct blk_request *r)
{
	struct virtio_blk *blk = r->blk;
	uint64_t off = r->req.offset + r->done;

	if (r->req.type == VIRTIO_BLK_T_IN)
		return event_loop_readv(blk->loop, &r->op, blk->fd, r->req.data,
					r->req.nr_data, off);
	return event_loop_writev(blk->loop, &r->op, blk->fd, r->req.data,
				 r->req.nr_data, off);
}

static void io_done(struct event_op *op, int32_t res)
{
	struct blk_request *r = (struct blk_request *)op;
	struct virtio_blk *blk = r->blk;
	uint8_t status = VIRTIO_BLK_S_OK;
	uint32_t written = 1;

	pthread_mutex_lock(&blk->vdev.lock);
	switch (r->req.type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		if (res > 0 && (uint64_t)res < r->req.len - r->done) {
			/* Short transfer: carry on from where it stopped. */
			r->done += (uint64_t)res;
			iov_drop_front(&r->req.data, &r->req.nr_data,
				       (size_t)res);
			if (submit_rw(r) == 0)
				goto out;
			res = -EIO;
		}
		if (res == -ECANCELED) {
			status = VIRTIO_BLK_S_IOERR; /* the VM is going away */
		} else if (res <= 0) {
			virtio_device_log_guest_error(
				&blk->vdev, "%s at byte %llu failed: %s",
				r->req.type == VIRTIO_BLK_T_IN ? "read"
							       : "write",
				(unsigned long long)(r->req.offset + r->done),
				res ? strerror(-res) : "end of file");
			status = VIRTIO_BLK_S_IOERR;
		} else if (r->req.type == VIRTIO_BLK_T_IN) {
			written += (uint32_t)r->req.len;
		}
		break;
	case VIRTIO_BLK_T_DISCARD:
		if (res == -EOPNOTSUPP)
			status = VIRTIO_BLK_S_UNSUPP;
		else if (res < 0)
			status = VIRTIO_BLK_S_IOERR;
		break;
	default: /* FLUSH */
		if (res < 0) {
			virtio_device_log_guest_error(
				&blk->vdev, "flush failed: %s", strerror(-res));
			status = VIRTIO_BLK_S_IOERR;
		}
		break;
	}
	finish(r, status, written);
out:
	pthread_mutex_unlock(&blk->vdev.lock);
}

static struct virtq_chain *get_chain(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_blk *blk = to_blk(vdev);

	if (blk->throttled)
		return NULL; /* nothing overtakes a deferred request */

	for (unsigned int i = 0; i < VIRTIO_BLK_QUEUE_SIZE; i++)
		if (!blk->reqs[i].busy)
			return blk->reqs[i].chain;
	blk->waiting_for_slot = true;
	return NULL;
}

static struct blk_request *request_of(struct virtio_blk *blk,
				      struct virtq_chain *chain)
{
	for (unsigned int i = 0; i < VIRTIO_BLK_QUEUE_SIZE; i++)
		if (blk->reqs[i].chain == chain)
			return &blk->reqs[i];
	return NULL;
}

/* What a request costs in the bw= bucket: the data it moves. */
static uint64_t request_bytes(const struct blk_request *r)
{
	return r->req.type == VIRTIO_BLK_T_IN || r->req.type == VIRTIO_BLK_T_OUT
		       ? r->req.len
		       : 0;
}

/* Start the I/O for a parsed request; -errno when it could not start. */
static int start_io(struct virtio_blk *blk, struct blk_request *r)
{
	switch (r->req.type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		return submit_rw(r);
	case VIRTIO_BLK_T_FLUSH:
		return event_loop_fsync(blk->loop, &r->op, blk->fd, true);
	case VIRTIO_BLK_T_DISCARD:
		return event_loop_fallocate(blk->loop, &r->op, blk->fd,
					    FALLOC_FL_PUNCH_HOLE |
						    FALLOC_FL_KEEP_SIZE,
					    r->req.offset, r->req.len);
	default:
		return -EINVAL;
	}
}

static int handle(struct virtio_device *vdev, uint16_t q,
		  struct virtq_chain *chain)
{
	struct virtio_blk *blk = to_blk(vdev);
	struct blk_request *r = request_of(blk, chain);
	struct virtio_blk_req *req = &r->req;
	uint32_t copied;

	if (virtio_blk_parse(chain, blk->capacity, blk->readonly, blk->discard,
			     req) < 0)
		return 0; /* no status byte: nothing to answer with */
	if (req->verdict != VIRTIO_BLK_S_OK) {
		*req->status = req->verdict;
		return 1;
	}
	switch (req->type) {
	case VIRTIO_BLK_T_GET_ID:
		copied = (uint32_t)buf_to_iov(req->data, req->nr_data, blk->id,
					      sizeof(blk->id));
		*req->status = VIRTIO_BLK_S_OK;
		return (int)copied + 1;
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
	case VIRTIO_BLK_T_DISCARD:
		if (req->len == 0) {
			*req->status = VIRTIO_BLK_S_OK;
			return 1;
		}
		break;
	default:
		break;
	}
	r->done = 0;
	r->generation = blk->generation;
	if (!rate_limiter_admit(&blk->limit, request_bytes(r))) {
		blk->throttled = r; /* blk_limit_resume starts it */
		r->busy = true;
		return -EINPROGRESS;
	}
	if (start_io(blk, r) < 0) {
		*req->status = VIRTIO_BLK_S_IOERR;
		return 1;
	}
	r->busy = true;
	return -EINPROGRESS;
}

static const struct virtio_queue_handler blk_queue = {
	.get_chain = get_chain,
	.handle = handle,
};

/* The limit's timer: start the deferred request, then take more. */
static void blk_limit_resume(struct rate_limiter *rl)
{
	struct virtio_blk *blk =
		(struct virtio_blk *)((char *)rl -
				      offsetof(struct virtio_blk, limit));
	struct blk_request *r;

	pthread_mutex_lock(&blk->vdev.lock);
	r = blk->throttled;
	if (r && !rate_limiter_admit(&blk->limit, request_bytes(r)))
		goto out; /* the timer is set again */
	blk->throttled = NULL;
	if (r && start_io(blk, r) < 0)
		finish(r, VIRTIO_BLK_S_IOERR, 1);
	virtio_device_kick(&blk->vdev, 0);
out:
	pthread_mutex_unlock(&blk->vdev.lock);
}

int virtio_blk_set_limits(struct virtio_device *vdev, uint64_t iops,
			  uint64_t bytes_per_s)
{
	struct virtio_blk *blk = to_blk(vdev);
	int r;

	rate_limiter_destroy(&blk->limit);
	r = rate_limiter_init(&blk->limit, iops, bytes_per_s, blk->loop,
			      blk_limit_resume);
	if (r < 0)
		return hvm_set_error(r, "%s: %s", blk->name,
				     hvm_error_message());
	if (iops || bytes_per_s)
		pr_info("%s: at most %llu requests/s, %llu bytes/s (0: no limit)",
			blk->name, (unsigned long long)iops,
			(unsigned long long)bytes_per_s);
	return 0;
}

static void blk_queue_notify(struct virtio_device *vdev, uint16_t q)
{
	virtio_queue_drain(vdev, q, &blk_queue);
}

static void blk_reset(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);

	/* In-flight requests finish in the kernel and are then dropped. */
	blk->generation++;
	if (blk->throttled) {
		blk->throttled->busy = false; /* never started */
		blk->throttled = NULL;
	}
	blk->waiting_for_slot = false;
}

static void blk_destroy(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);

	for (unsigned int i = 0; i < VIRTIO_BLK_QUEUE_SIZE; i++)
		free(blk->reqs[i].chain);
	/*
	 * Everything the guest wrote reaches stable storage at a clean exit,
	 * flushed or not (the event loop, and its I/O, are gone by now).
	 */
	if (blk->fd >= 0 && !blk->readonly && fsync(blk->fd) < 0)
		pr_warn("%s: fsync of the image at exit failed: %s", blk->name,
			strerror(errno));
	if (blk->fd >= 0)
		close(blk->fd);
	rate_limiter_destroy(&blk->limit);
	virtio_device_destroy(vdev);
	free(blk);
}

/* The image's absolute path when it resolves (snapshots record it). */
static void record_path(struct virtio_blk *blk, const char *path)
{
	char *abs = realpath(path, NULL);

	snprintf(blk->path, sizeof(blk->path), "%s", abs ? abs : path);
	free(abs);
}

static const struct virtio_device_ops blk_ops = {
	.queue_notify = blk_queue_notify,
	.reset = blk_reset,
	.destroy = blk_destroy,
};

/* Open and check the image; fills fd and capacity. */
static int open_image(struct virtio_blk *blk, const char *path, bool direct,
		      bool lock)
{
	int flags = (blk->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	uint64_t size;
	int r;

	if (direct)
		flags |= O_DIRECT;
	/* O_NONBLOCK for open() only: a FIFO must not hang us there. */
	blk->fd = open_host_input(path, flags, &st);
	if (blk->fd < 0) {
		int err = -blk->fd;

		blk->fd = -1;
		return hvm_set_error(-err, "--disk %s: cannot open: %s%s", path,
				     strerror(err),
				     (err == EACCES || err == EROFS) &&
						     !blk->readonly
					     ? " (add ,ro for a read-only disk)"
					     : "");
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(blk->fd, BLKGETSIZE64, &size) < 0)
			return hvm_set_errno_error("--disk %s: BLKGETSIZE64",
						   path);
	} else if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
	} else {
		return hvm_set_error(
			-EINVAL,
			"--disk %s: not a regular file or block device", path);
	}
	if (size == 0 || size % VIRTIO_BLK_SECTOR)
		return hvm_set_error(
			-EINVAL,
			"--disk %s: size %llu bytes is not a non-zero multiple of 512 (raw images only)",
			path, (unsigned long long)size);
	blk->capacity = size;
	if (!lock)
		return 0;
	/* Two writers on one image corrupt it: refuse, as QEMU does. */
	if (flock(blk->fd, (blk->readonly ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0)
		return hvm_set_errno_error(
			"--disk %s: in use by another process (,lock=off to share it anyway)",
			path);
	/* And QEMU's byte-range locks, which flock() does not see. */
	r = file_lock_like_qemu(blk->fd, !blk->readonly);
	if (r == -EBUSY) {
		char why[256];

		snprintf(why, sizeof(why), "%s", hvm_error_message());
		return hvm_set_error(
			r,
			"--disk %s: in use: %s (,lock=off to share it anyway)",
			path, why);
	}
	if (r < 0)
		return hvm_set_error(r, "--disk %s: cannot lock it: %s", path,
				     strerror(-r));
	return 0;
}

struct virtio_device *virtio_blk_create(const struct virtio_host *host,
					const char *path, bool readonly,
					bool direct, bool lock,
					unsigned int index)
{
	struct virtio_blk *blk = calloc(1, sizeof(*blk));
	uint64_t features = VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) |
			    VIRTIO_BIT(VIRTIO_BLK_F_FLUSH) |
			    VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC) |
			    VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX);
	int r;

	if (!blk) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	blk->fd = -1;
	blk->limit.timer_fd = -1;
	blk->readonly = readonly;
	blk->loop = host->loop;
	snprintf(blk->name, sizeof(blk->name), "virtio-blk%u", index);
	record_path(blk, path);
	/* GET_ID: up to 20 bytes, not NUL-terminated when all are used. */
	snprintf(blk->id, sizeof(blk->id), "hintvm-disk%u", index);
	r = open_image(blk, path, direct, lock);
	if (r < 0) {
		if (blk->fd >= 0)
			close(blk->fd);
		free(blk);
		return NULL;
	}
	blk->discard = !readonly;
	if (readonly)
		features |= VIRTIO_BIT(VIRTIO_BLK_F_RO);
	else
		features |= VIRTIO_BIT(VIRTIO_BLK_F_DISCARD);
	blk->config.capacity = htole64(blk->capacity / VIRTIO_BLK_SECTOR);
	blk->config.seg_max = htole32(VIRTIO_BLK_QUEUE_SIZE - 2);
	blk->config.max_discard_sectors = htole32(MAX_DISCARD_SECTORS);
	blk->config.max_discard_seg = htole32(1);
	blk->config.discard_sector_alignment = htole32(8);
	r = virtio_device_init(&blk->vdev, blk->name, &blk_ops, host->mem,
			       VIRTIO_ID_BLOCK, features, 1,
			       VIRTIO_BLK_QUEUE_SIZE, &blk->config,
			       sizeof(blk->config));
	if (r < 0) {
		close(blk->fd);
		free(blk);
		return NULL;
	}
	for (unsigned int i = 0; i < VIRTIO_BLK_QUEUE_SIZE; i++) {
		struct blk_request *req = &blk->reqs[i];

		req->blk = blk;
		req->op.done = io_done;
		req->chain = virtq_chain_alloc(VIRTIO_BLK_QUEUE_SIZE);
		if (!req->chain) {
			hvm_set_error(-ENOMEM, "out of memory");
			blk_destroy(&blk->vdev);
			return NULL;
		}
	}
	pr_info("%s: %s, %llu MiB%s%s", blk->name, path,
		(unsigned long long)(blk->capacity >> 20),
		readonly ? ", read-only" : "", direct ? ", O_DIRECT" : "");
	return &blk->vdev;
}

/* ---- snapshots ---- */

void virtio_blk_save(struct virtio_device *vdev, struct virtio_blk_state *s)
{
	struct virtio_blk *blk = to_blk(vdev);
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->size = blk->capacity;
	s->readonly = blk->readonly;
	if (fstat(blk->fd, &st) == 0) {
		s->dev = st.st_dev;
		s->ino = st.st_ino;
		s->mtime_s = st.st_mtim.tv_sec;
		s->mtime_ns = st.st_mtim.tv_nsec;
	}
	memcpy(s->path, blk->path, sizeof(s->path) - 1);
}

int virtio_blk_load(struct virtio_device *vdev,
		    const struct virtio_blk_state *s)
{
	struct virtio_blk *blk = to_blk(vdev);
	struct stat st;

	if (s->size != blk->capacity)
		return hvm_set_error(
			-EINVAL,
			"%s: the disk %s is %llu bytes, but the snapshot's (%.255s) was %llu bytes: restore with an image of that size",
			blk->name, blk->path, (unsigned long long)blk->capacity,
			s->path, (unsigned long long)s->size);
	if (s->readonly != blk->readonly || s->reserved)
		return hvm_set_error(
			-EINVAL,
			"%s: the disk %s is %s, but the snapshot's (%.255s) was %s",
			blk->name, blk->path,
			blk->readonly ? "read-only" : "writable", s->path,
			s->readonly == 1 ? "read-only"
			: s->readonly	 ? "neither (corrupt)"
					 : "writable");
	if (fstat(blk->fd, &st) < 0)
		return hvm_set_errno_error("%s: cannot stat the disk %s",
					   blk->name, blk->path);
	/* The snapshot's own file, written since: its guest would not know
	 * those blocks (a copy is another file, taken as the caller's). */
	if ((uint64_t)st.st_dev == s->dev && (uint64_t)st.st_ino == s->ino &&
	    (st.st_mtim.tv_sec != s->mtime_s ||
	     st.st_mtim.tv_nsec != s->mtime_ns))
		return hvm_set_error(
			-EINVAL,
			"%s: the disk %s was modified after the snapshot (at %lld.%09ld, the snapshot saw %lld.%09lld): the restored guest would not know those writes; restore onto a copy of the image taken with the snapshot",
			blk->name, blk->path, (long long)st.st_mtim.tv_sec,
			(long)st.st_mtim.tv_nsec, (long long)s->mtime_s,
			(long long)s->mtime_ns);
	if (strncmp(s->path, blk->path, sizeof(s->path)))
		pr_info("%s: restored onto %s (the snapshot's disk was %.255s)",
			blk->name, blk->path, s->path);
	return 0;
}

unsigned int virtio_blk_in_flight(struct virtio_device *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);
	unsigned int n = 0;

	for (unsigned int i = 0; i < VIRTIO_BLK_QUEUE_SIZE; i++)
		n += blk->reqs[i].busy;
	return n;
}
