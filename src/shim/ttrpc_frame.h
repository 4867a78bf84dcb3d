/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ttrpc's message frame (docs/shim.md): a 10-byte header, then the data.
 *
 *   bytes 0-3  data length, big-endian, at most TTRPC_MAX_DATA
 *   bytes 4-7  stream id, big-endian (odd: started by the client)
 *   byte  8    message type (1 request, 2 response, 3 data)
 *   byte  9    flags, defined per type
 *
 * The header codec, an incremental reader that takes the bytes of a
 * non-blocking socket as they come (a frame may arrive in any number of
 * reads, several frames in one), and the bounded output buffer frames are
 * queued in. No I/O and no protobuf here: the server does both.
 */
#ifndef HVM_SHIM_TTRPC_FRAME_H
#define HVM_SHIM_TTRPC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define TTRPC_HEADER_LEN 10
/*
 * ttrpc's own limit (4 MiB, messageLengthMax in containerd/ttrpc): its
 * peers never send more, and a larger length is refused before any
 * memory is set aside for it.
 */
#define TTRPC_MAX_DATA (4u << 20)

enum ttrpc_msg_type {
	TTRPC_MSG_REQUEST = 1,
	TTRPC_MSG_RESPONSE = 2,
	/* ttrpc >= 1.2's streaming; containerd 1.6's shim API has no streams. */
	TTRPC_MSG_DATA = 3,
};

/* Request and data flags (streaming, ttrpc >= 1.2). */
#define TTRPC_FLAG_REMOTE_CLOSED 0x01
#define TTRPC_FLAG_REMOTE_OPEN 0x02

struct ttrpc_header {
	uint32_t length;
	uint32_t stream_id;
	uint8_t type;
	uint8_t flags;
};

void ttrpc_header_encode(const struct ttrpc_header *h,
			 uint8_t out[TTRPC_HEADER_LEN]);
/*
 * Decodes any 10 bytes; -EMSGSIZE when the length is over
 * TTRPC_MAX_DATA (the header is still filled in, for the message). The
 * type is not judged here: what a type means is the server's business.
 */
int ttrpc_header_decode(const uint8_t in[TTRPC_HEADER_LEN],
			struct ttrpc_header *h);

/*
 * One connection's frame being received. The data buffer grows with the
 * bytes that actually arrive (doubling from TTRPC_READER_MIN_CAP up to
 * the header's length), so a header that promises 4 MiB costs nothing
 * until the peer sends them.
 */
#define TTRPC_READER_MIN_CAP 4096u
#define TTRPC_READER_KEEP_CAP (64u << 10)

struct ttrpc_reader {
	uint8_t hdr[TTRPC_HEADER_LEN];
	size_t hdr_got;
	struct ttrpc_header h; /* valid once hdr_got == TTRPC_HEADER_LEN */
	uint8_t *data;
	size_t data_cap;
	size_t data_got;
};

void ttrpc_reader_init(struct ttrpc_reader *r);
void ttrpc_reader_free(struct ttrpc_reader *r);
/*
 * Takes bytes from BUF: up to the end of one frame, never past it.
 * *CONSUMED says how many were taken (call again with the rest).
 * Returns 1 when a whole frame is in r->h and r->data (valid until the
 * next call), 0 when more bytes are needed, -EMSGSIZE for a length over
 * TTRPC_MAX_DATA and -ENOMEM: the connection cannot go on after either,
 * since where the next frame starts is unknown or unreachable.
 */
int ttrpc_reader_feed(struct ttrpc_reader *r, const uint8_t *buf, size_t len,
		      size_t *consumed);
/* True while a frame is partly received (for the stall timeout). */
int ttrpc_reader_partial(const struct ttrpc_reader *r);

/*
 * Frames waiting to be written: appended at the end, written from the
 * front. MAX bounds what one connection may hold unread.
 */
struct ttrpc_outbuf {
	uint8_t *buf;
	size_t off; /* first byte not yet written */
	size_t len; /* bytes in buf */
	size_t cap;
	size_t max;
};

void ttrpc_outbuf_init(struct ttrpc_outbuf *o, size_t max);
void ttrpc_outbuf_free(struct ttrpc_outbuf *o);
static inline size_t ttrpc_outbuf_pending(const struct ttrpc_outbuf *o)
{
	return o->len - o->off;
}
/*
 * Queues one frame (header built from the arguments, then DATA).
 * -EMSGSIZE when LEN is over TTRPC_MAX_DATA, -ENOBUFS when the pending
 * bytes would pass the buffer's max, -ENOMEM.
 */
int ttrpc_outbuf_frame(struct ttrpc_outbuf *o, uint32_t stream_id, uint8_t type,
		       uint8_t flags, const uint8_t *data, size_t len);
/* N bytes from the front were written. */
void ttrpc_outbuf_consume(struct ttrpc_outbuf *o, size_t n);

#endif
