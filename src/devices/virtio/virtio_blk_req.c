// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>

#include <linux/virtio_blk.h>

#include "devices/virtio/iov.h"
#include "devices/virtio/virtio_blk_req.h"

#define HEADER_SIZE 16
#define DISCARD_SEG_SIZE 16

/* [OFF, OFF + LEN) inside an image of CAPACITY bytes, without overflow. */
static bool in_image(uint64_t off, uint64_t len, uint64_t capacity)
{
	return off <= capacity && len <= capacity - off;
}

static uint8_t parse_discard(struct virtio_blk_req *req, uint64_t capacity,
			     const struct iovec *out, unsigned int nr_out)
{
	uint8_t seg[DISCARD_SEG_SIZE] = { 0 };
	uint64_t sector;
	uint32_t sectors, flags;

	/* One segment (max_discard_seg = 1), exactly. */
	if (iov_length(out, nr_out) != DISCARD_SEG_SIZE || req->nr_data)
		return VIRTIO_BLK_S_IOERR;
	iov_to_buf(out, nr_out, 0, seg, sizeof(seg));
	memcpy(&sector, seg, 8);
	memcpy(&sectors, seg + 8, 4);
	memcpy(&flags, seg + 12, 4);
	sector = le64toh(sector);
	sectors = le32toh(sectors);
	if (le32toh(flags) || sector > UINT64_MAX / VIRTIO_BLK_SECTOR)
		return VIRTIO_BLK_S_UNSUPP;
	req->offset = sector * VIRTIO_BLK_SECTOR;
	req->len = (uint64_t)sectors * VIRTIO_BLK_SECTOR;
	if (!in_image(req->offset, req->len, capacity))
		return VIRTIO_BLK_S_IOERR;
	return VIRTIO_BLK_S_OK;
}

int virtio_blk_parse(struct virtq_chain *chain, uint64_t capacity,
		     bool readonly, bool discard, struct virtio_blk_req *req)
{
	struct iovec *out = chain->iov, *in = virtq_chain_in(chain);
	unsigned int nr_out = chain->nr_out, nr_in = chain->nr_in;
	uint8_t hdr[HEADER_SIZE] = { 0 };
	struct iovec *last;
	uint64_t sector;

	*req = (struct virtio_blk_req){ .verdict = VIRTIO_BLK_S_IOERR };
	if (chain->in_len < 1)
		return -EINVAL;
	/* The status byte is the last writable byte of the chain. */
	last = &in[nr_in - 1];
	req->status = (uint8_t *)last->iov_base + last->iov_len - 1;
	iov_drop_back(in, &nr_in, 1);
	if (chain->out_len < HEADER_SIZE)
		return 0;
	iov_to_buf(out, nr_out, 0, hdr, sizeof(hdr));
	iov_drop_front(&out, &nr_out, HEADER_SIZE);
	memcpy(&req->type, hdr, 4);
	memcpy(&sector, hdr + 8, 8);
	req->type = le32toh(req->type);
	sector = le64toh(sector);

	switch (req->type) {
	case VIRTIO_BLK_T_IN:
		/* Data only in the writable part. */
		req->data = in;
		req->nr_data = nr_in;
		if (nr_out)
			return 0;
		break;
	case VIRTIO_BLK_T_OUT:
		req->data = out;
		req->nr_data = nr_out;
		if (nr_in)
			return 0;
		if (readonly)
			return 0; /* IOERR: the disk is read-only */
		break;
	case VIRTIO_BLK_T_FLUSH:
		req->verdict = VIRTIO_BLK_S_OK;
		return 0;
	case VIRTIO_BLK_T_GET_ID:
		req->data = in;
		req->nr_data = nr_in;
		req->verdict = nr_out ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
		return 0;
	case VIRTIO_BLK_T_DISCARD:
		if (!discard || readonly) {
			req->verdict = VIRTIO_BLK_S_UNSUPP;
			return 0;
		}
		req->data = in; /* must be empty: only the status */
		req->nr_data = nr_in;
		req->verdict = parse_discard(req, capacity, out, nr_out);
		return 0;
	default:
		req->verdict = VIRTIO_BLK_S_UNSUPP;
		return 0;
	}
	/* Reads and writes: whole sectors inside the image. */
	req->len = iov_length(req->data, req->nr_data);
	if (req->len % VIRTIO_BLK_SECTOR ||
	    sector > UINT64_MAX / VIRTIO_BLK_SECTOR)
		return 0;
	req->offset = sector * VIRTIO_BLK_SECTOR;
	if (!in_image(req->offset, req->len, capacity))
		return 0;
	req->verdict = VIRTIO_BLK_S_OK;
	return 0;
}
