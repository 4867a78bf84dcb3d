/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing of one virtio-blk request chain (virtio 1.x 5.2.6), separate from
 * the I/O so it can be unit tested and fuzzed on its own: a 16-byte header
 * in the readable part, data, and a one-byte status at the very end of the
 * writable part. Every field may be split across descriptors.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_BLK_REQ_H
#define HVM_DEVICES_VIRTIO_VIRTIO_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "devices/virtio/virtqueue.h"

#define VIRTIO_BLK_SECTOR 512
#define VIRTIO_BLK_REQ_DONE 0xff /* parse result: status needs I/O first */

struct virtio_blk_req {
	uint32_t type; /* VIRTIO_BLK_T_* */
	uint64_t offset; /* byte offset in the image */
	uint64_t len; /* data bytes (read, write) or range bytes (discard) */
	struct iovec *data; /* inside the chain's iov array */
	unsigned int nr_data;
	uint8_t *status; /* guest byte for the status; NULL: none */
	/*
	 * VIRTIO_BLK_S_OK: do the I/O. IOERR / UNSUPP: complete now with
	 * this status (bad request from the driver, refused write, ...).
	 */
	uint8_t verdict;
};

/*
 * Parse CHAIN against an image of CAPACITY bytes. Rewrites the chain's
 * iovecs in place. Returns 0 (see REQ->verdict), or -EINVAL when the chain
 * has no room for a status byte at all (cannot even be answered).
 */
int virtio_blk_parse(struct virtq_chain *chain, uint64_t capacity,
		     bool readonly, bool discard, struct virtio_blk_req *req);

#endif
