// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "devices/virtio/p9_proto.h"

int p9_reader_init(struct p9_reader *r, const void *buf, size_t len,
		   uint8_t *type, uint16_t *tag)
{
	*r = (struct p9_reader){ .buf = buf, .len = len };
	if (len < P9_HDR_SIZE || p9_get_u32(r) != len) {
		r->bad = true;
		return -EINVAL;
	}
	*type = p9_get_u8(r);
	*tag = p9_get_u16(r);
	return 0;
}

/* N bytes from the current position, or NULL (and bad) past the end. */
static const uint8_t *take(struct p9_reader *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->buf + r->off;
	r->off += n;
	return p;
}

uint8_t p9_get_u8(struct p9_reader *r)
{
	const uint8_t *p = take(r, 1);

	return p ? *p : 0;
}

uint16_t p9_get_u16(struct p9_reader *r)
{
	const uint8_t *p = take(r, 2);
	uint16_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 2);
	return le16toh(v);
}

uint32_t p9_get_u32(struct p9_reader *r)
{
	const uint8_t *p = take(r, 4);
	uint32_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 4);
	return le32toh(v);
}

uint64_t p9_get_u64(struct p9_reader *r)
{
	const uint8_t *p = take(r, 8);
	uint64_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 8);
	return le64toh(v);
}

void p9_get_str(struct p9_reader *r, char *dst, size_t cap)
{
	uint16_t len = p9_get_u16(r);
	const uint8_t *p = take(r, len);

	if (cap)
		dst[0] = '\0';
	if (!p || len >= cap || memchr(p, '\0', len)) {
		r->bad = true;
		return;
	}
	memcpy(dst, p, len);
	dst[len] = '\0';
}

const uint8_t *p9_get_bytes(struct p9_reader *r, size_t len)
{
	return take(r, len);
}

void p9_writer_init(struct p9_writer *w, void *buf, size_t cap, uint8_t type,
		    uint16_t tag)
{
	*w = (struct p9_writer){ .buf = buf, .cap = cap };
	p9_put_u32(w, 0); /* size, filled in by p9_writer_finish */
	p9_put_u8(w, type);
	p9_put_u16(w, tag);
}

uint8_t *p9_put_space(struct p9_writer *w, size_t len)
{
	uint8_t *p;

	if (w->overflow || len > w->cap - w->off) {
		w->overflow = true;
		return NULL;
	}
	p = w->buf + w->off;
	w->off += len;
	return p;
}

void p9_put_u8(struct p9_writer *w, uint8_t v)
{
	uint8_t *p = p9_put_space(w, 1);

	if (p)
		*p = v;
}

void p9_put_u16(struct p9_writer *w, uint16_t v)
{
	uint8_t *p = p9_put_space(w, 2);

	v = htole16(v);
	if (p)
		memcpy(p, &v, 2);
}

void p9_put_u32(struct p9_writer *w, uint32_t v)
{
	uint8_t *p = p9_put_space(w, 4);

	v = htole32(v);
	if (p)
		memcpy(p, &v, 4);
}

void p9_put_u64(struct p9_writer *w, uint64_t v)
{
	uint8_t *p = p9_put_space(w, 8);

	v = htole64(v);
	if (p)
		memcpy(p, &v, 8);
}

void p9_put_str(struct p9_writer *w, const char *s, size_t len)
{
	uint8_t *p;

	if (len > UINT16_MAX) {
		w->overflow = true;
		return;
	}
	p9_put_u16(w, (uint16_t)len);
	p = p9_put_space(w, len);
	if (p)
		memcpy(p, s, len);
}

void p9_put_qid(struct p9_writer *w, const struct p9_qid *qid)
{
	p9_put_u8(w, qid->type);
	p9_put_u32(w, qid->version);
	p9_put_u64(w, qid->path);
}

size_t p9_writer_finish(struct p9_writer *w)
{
	uint32_t size = htole32((uint32_t)w->off);

	if (w->overflow || w->off > UINT32_MAX)
		return 0;
	memcpy(w->buf, &size, 4);
	return w->off;
}

size_t p9_build_lerror(void *buf, size_t cap, uint16_t tag, uint32_t ecode)
{
	struct p9_writer w;

	p9_writer_init(&w, buf, cap, P9_RLERROR, tag);
	p9_put_u32(&w, ecode);
	return p9_writer_finish(&w);
}
