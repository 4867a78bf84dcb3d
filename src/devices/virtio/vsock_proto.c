// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "devices/virtio/vsock_proto.h"

_Static_assert(sizeof(struct virtio_vsock_hdr) == VSOCK_HDR_LEN,
	       "the wire header is 44 bytes");

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

/* Field offsets of the packed struct virtio_vsock_hdr. */
enum {
	OFF_SRC_CID = 0,
	OFF_DST_CID = 8,
	OFF_SRC_PORT = 16,
	OFF_DST_PORT = 20,
	OFF_LEN = 24,
	OFF_TYPE = 28,
	OFF_OP = 30,
	OFF_FLAGS = 32,
	OFF_BUF_ALLOC = 36,
	OFF_FWD_CNT = 40,
};

void vsock_hdr_decode(const uint8_t raw[VSOCK_HDR_LEN], struct vsock_hdr *h)
{
	h->src_cid = get64(raw + OFF_SRC_CID);
	h->dst_cid = get64(raw + OFF_DST_CID);
	h->src_port = get32(raw + OFF_SRC_PORT);
	h->dst_port = get32(raw + OFF_DST_PORT);
	h->len = get32(raw + OFF_LEN);
	h->type = get16(raw + OFF_TYPE);
	h->op = get16(raw + OFF_OP);
	h->flags = get32(raw + OFF_FLAGS);
	h->buf_alloc = get32(raw + OFF_BUF_ALLOC);
	h->fwd_cnt = get32(raw + OFF_FWD_CNT);
}

void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t raw[VSOCK_HDR_LEN])
{
	put64(raw + OFF_SRC_CID, h->src_cid);
	put64(raw + OFF_DST_CID, h->dst_cid);
	put32(raw + OFF_SRC_PORT, h->src_port);
	put32(raw + OFF_DST_PORT, h->dst_port);
	put32(raw + OFF_LEN, h->len);
	put16(raw + OFF_TYPE, h->type);
	put16(raw + OFF_OP, h->op);
	put32(raw + OFF_FLAGS, h->flags);
	put32(raw + OFF_BUF_ALLOC, h->buf_alloc);
	put32(raw + OFF_FWD_CNT, h->fwd_cnt);
}

static enum vsock_verdict refuse(const struct vsock_hdr *h, const char *rule,
				 const char **why)
{
	*why = rule;
	/* Never answer an RST with an RST: two peers could ping-pong. */
	return h->op == VIRTIO_VSOCK_OP_RST ? VSOCK_DROP : VSOCK_RESET;
}

enum vsock_verdict vsock_check_tx(const struct vsock_hdr *h, uint32_t out_len,
				  uint64_t guest_cid, const char **why)
{
	*why = NULL;
	if (out_len < VSOCK_HDR_LEN) {
		*why = "chain shorter than a packet header";
		return VSOCK_DROP;
	}
	if (h->src_cid != guest_cid) {
		/* Spoofed: an answer would go to an address nobody owns. */
		*why = "source CID is not the guest's";
		return VSOCK_DROP;
	}
	if (h->dst_cid != VSOCK_HOST_CID)
		return refuse(h, "destination CID is not the host (2)", why);
	if (h->type != VIRTIO_VSOCK_TYPE_STREAM)
		return refuse(h, "socket type is not stream", why);
	if (h->op < VIRTIO_VSOCK_OP_REQUEST ||
	    h->op > VIRTIO_VSOCK_OP_CREDIT_REQUEST)
		return refuse(h, "unknown op", why);
	if (h->len != out_len - VSOCK_HDR_LEN)
		return refuse(h, "header len is not the payload in the chain",
			      why);
	if (h->len > VSOCK_MAX_PKT_PAYLOAD)
		return refuse(h, "payload above 64 KiB", why);
	if (h->len && h->op != VIRTIO_VSOCK_OP_RW)
		return refuse(h, "payload on a control packet", why);
	if (h->op == VIRTIO_VSOCK_OP_SHUTDOWN &&
	    (h->flags & ~VSOCK_SHUTDOWN_BOTH))
		return refuse(h, "unknown SHUTDOWN flags", why);
	return VSOCK_ACCEPT;
}

void vsock_hdr_reset_reply(const struct vsock_hdr *h, struct vsock_hdr *rst)
{
	*rst = (struct vsock_hdr){
		.src_cid = h->dst_cid,
		.dst_cid = h->src_cid,
		.src_port = h->dst_port,
		.dst_port = h->src_port,
		.type = h->type,
		.op = VIRTIO_VSOCK_OP_RST,
	};
}

uint32_t vsock_peer_credit(uint32_t buf_alloc, uint32_t tx_cnt,
			   uint32_t fwd_cnt)
{
	uint32_t in_flight = tx_cnt - fwd_cnt;

	return in_flight >= buf_alloc ? 0 : buf_alloc - in_flight;
}

bool vsock_fwd_cnt_valid(uint32_t old_fwd, uint32_t new_fwd, uint32_t tx_cnt)
{
	return (uint32_t)(new_fwd - old_fwd) <= (uint32_t)(tx_cnt - old_fwd);
}

bool vsock_rx_fits(uint32_t buf_alloc, uint32_t rx_cnt, uint32_t fwd_cnt,
		   uint32_t len)
{
	uint32_t buffered = rx_cnt - fwd_cnt;

	return buffered <= buf_alloc && len <= buf_alloc - buffered;
}

int vsock_parse_connect(const char *buf, size_t len, uint32_t *port)
{
	static const char word[] = "CONNECT ";
	const size_t wlen = sizeof(word) - 1;
	uint64_t value = 0;
	size_t i;

	if (memcmp(buf, word, len < wlen ? len : wlen))
		return -EINVAL;
	for (i = wlen; i < len && i < VSOCK_CONNECT_LINE_MAX; i++) {
		char c = buf[i];

		if (c == '\n') {
			if (i == wlen)
				return -EINVAL; /* no digits */
			*port = (uint32_t)value;
			return (int)i + 1;
		}
		if (c < '0' || c > '9')
			return -EINVAL;
		if (i > wlen && buf[wlen] == '0')
			return -EINVAL; /* leading zero */
		value = value * 10 + (uint64_t)(c - '0');
		if (value > UINT32_MAX)
			return -EINVAL;
	}
	return i >= VSOCK_CONNECT_LINE_MAX ? -EINVAL : 0;
}
