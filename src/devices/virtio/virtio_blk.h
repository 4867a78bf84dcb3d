/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-blk on io_uring: a raw image file or block device, one request
 * queue, reads and writes as readv/writev at the request offset, FLUSH as
 * fdatasync (a request completes only after its I/O has; so an
 * acknowledged flush means everything acknowledged before it is durable),
 * DISCARD as a hole punch, GET_ID from the disk index. A read-only disk
 * fails writes with VIRTIO_BLK_S_IOERR and does not offer DISCARD.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_BLK_H
#define HVM_DEVICES_VIRTIO_VIRTIO_BLK_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

#define VIRTIO_BLK_QUEUE_SIZE 256

/*
 * Open PATH (read-only when READONLY, O_DIRECT when DIRECT) as disk INDEX;
 * with LOCK, take flock() and QEMU's byte-range locks on it. Errors name
 * the file: cannot open, not a file or block device (a FIFO is refused,
 * never waited on), already in use by another VM (hintvm or QEMU), size
 * not a multiple of 512 bytes. Returns the device or NULL.
 */
struct virtio_device *virtio_blk_create(const struct virtio_host *host,
					const char *path, bool readonly,
					bool direct, bool lock,
					unsigned int index);

/*
 * Limit the disk to IOPS requests and BYTES_PER_S bytes (reads and writes)
 * per second; 0 leaves that kind unlimited (devices/virtio/rate_limiter.h). Call
 * after create, before the guest runs. Returns 0 or -errno (recorded).
 */
int virtio_blk_set_limits(struct virtio_device *vdev, uint64_t iops,
			  uint64_t bytes_per_s);

/*
 * Snapshot (docs/snapshot.md): the disk's identity, for the restore to
 * compare with the image it opened. The queue is virtio_device_save()'s.
 */
struct virtio_blk_state {
	uint64_t size; /* bytes */
	uint32_t readonly;
	uint32_t reserved;
	/* The file when the snapshot was taken: st_dev, st_ino, st_mtim. */
	uint64_t dev, ino;
	int64_t mtime_s;
	int64_t mtime_ns;
	char path[256]; /* absolute, cut at 255 bytes */
};
_Static_assert(sizeof(struct virtio_blk_state) == 304,
	       "docs/snapshot.md's layout");
/* Locked; stats the image now (the drain is over: its writes are done). */
void virtio_blk_save(struct virtio_device *vdev, struct virtio_blk_state *s);
/*
 * Refuses an image of another size or read-only mode than the snapshot's
 * (the guest's file system would not match it), and the snapshot's own
 * image when it was modified since (same device and inode, another
 * modification time); another file is a clone's own copy and is taken.
 */
int virtio_blk_load(struct virtio_device *vdev,
		    const struct virtio_blk_state *s);
/* Requests taken from the queue and not yet answered (locked). */
unsigned int virtio_blk_in_flight(struct virtio_device *vdev);

#endif
