// SPDX-License-Identifier: LGPL-2.1-or-later
/* ttrpc's message frame: header codec, incremental reader, output buffer. */
#include "shim/ttrpc_frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

void ttrpc_header_encode(const struct ttrpc_header *h,
			 uint8_t out[TTRPC_HEADER_LEN])
{
	put_be32(out, h->length);
	put_be32(out + 4, h->stream_id);
	out[8] = h->type;
	out[9] = h->flags;
}

int ttrpc_header_decode(const uint8_t in[TTRPC_HEADER_LEN],
			struct ttrpc_header *h)
{
	h->length = get_be32(in);
	h->stream_id = get_be32(in + 4);
	h->type = in[8];
	h->flags = in[9];
	return h->length > TTRPC_MAX_DATA ? -EMSGSIZE : 0;
}

void ttrpc_reader_init(struct ttrpc_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void ttrpc_reader_free(struct ttrpc_reader *r)
{
	free(r->data);
	ttrpc_reader_init(r);
}

int ttrpc_reader_partial(const struct ttrpc_reader *r)
{
	/* A frame handed out whole is finished, not partial. */
	return r->hdr_got > 0 &&
	       !(r->hdr_got == TTRPC_HEADER_LEN && r->data_got == r->h.length);
}

/* Room for at least NEED data bytes, never more than the frame's length. */
static int reader_reserve(struct ttrpc_reader *r, size_t need)
{
	size_t cap = r->data_cap ? r->data_cap : TTRPC_READER_MIN_CAP;
	uint8_t *p;

	if (need <= r->data_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > r->h.length)
		cap = r->h.length;
	p = realloc(r->data, cap);
	if (!p)
		return -ENOMEM;
	r->data = p;
	r->data_cap = cap;
	return 0;
}

int ttrpc_reader_feed(struct ttrpc_reader *r, const uint8_t *buf, size_t len,
		      size_t *consumed)
{
	size_t used = 0, n;
	int err;

	*consumed = 0;
	/* The previous call handed out a whole frame: start the next one. */
	if (r->hdr_got == TTRPC_HEADER_LEN && r->data_got == r->h.length) {
		r->hdr_got = 0;
		r->data_got = 0;
		/* One big frame does not pin its buffer for the connection's life. */
		if (r->data_cap > TTRPC_READER_KEEP_CAP) {
			free(r->data);
			r->data = NULL;
			r->data_cap = 0;
		}
	}
	if (r->hdr_got < TTRPC_HEADER_LEN) {
		n = TTRPC_HEADER_LEN - r->hdr_got;
		if (n > len)
			n = len;
		memcpy(r->hdr + r->hdr_got, buf, n);
		r->hdr_got += n;
		used = n;
		*consumed = used;
		if (r->hdr_got < TTRPC_HEADER_LEN)
			return 0;
		err = ttrpc_header_decode(r->hdr, &r->h);
		if (err)
			return err;
	}
	n = r->h.length - r->data_got;
	if (n > len - used)
		n = len - used;
	if (n) {
		err = reader_reserve(r, r->data_got + n);
		if (err)
			return err;
		memcpy(r->data + r->data_got, buf + used, n);
		r->data_got += n;
		used += n;
	}
	*consumed = used;
	return r->data_got == r->h.length ? 1 : 0;
}

void ttrpc_outbuf_init(struct ttrpc_outbuf *o, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->max = max;
}

void ttrpc_outbuf_free(struct ttrpc_outbuf *o)
{
	free(o->buf);
	ttrpc_outbuf_init(o, o->max);
}

int ttrpc_outbuf_frame(struct ttrpc_outbuf *o, uint32_t stream_id, uint8_t type,
		       uint8_t flags, const uint8_t *data, size_t len)
{
	struct ttrpc_header h = {
		.length = (uint32_t)len,
		.stream_id = stream_id,
		.type = type,
		.flags = flags,
	};
	size_t need = TTRPC_HEADER_LEN + len, cap;
	uint8_t *p;

	if (len > TTRPC_MAX_DATA)
		return -EMSGSIZE;
	if (ttrpc_outbuf_pending(o) + need > o->max)
		return -ENOBUFS;
	/* Written bytes at the front are dropped before growing. */
	if (o->off) {
		memmove(o->buf, o->buf + o->off, o->len - o->off);
		o->len -= o->off;
		o->off = 0;
	}
	if (o->len + need > o->cap) {
		cap = o->cap ? o->cap : 4096;
		while (cap < o->len + need)
			cap *= 2;
		p = realloc(o->buf, cap);
		if (!p)
			return -ENOMEM;
		o->buf = p;
		o->cap = cap;
	}
	ttrpc_header_encode(&h, o->buf + o->len);
	if (len)
		memcpy(o->buf + o->len + TTRPC_HEADER_LEN, data, len);
	o->len += need;
	return 0;
}

void ttrpc_outbuf_consume(struct ttrpc_outbuf *o, size_t n)
{
	o->off += n;
	if (o->off == o->len)
		o->off = o->len = 0;
}
