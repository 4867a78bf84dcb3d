/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The 9P2000.L wire format: message type numbers, and a bounds-checked
 * reader and writer over one message in host memory. Pure (no I/O, no
 * allocation), so every decoding rule is unit-tested and fuzzed on its own.
 *
 * A message is size[4] type[1] tag[2] followed by fields; integers are
 * little-endian, strings are len[2] bytes[len] (not NUL-terminated), a qid
 * is type[1] version[4] path[8]. A reader that runs past the end of the
 * message, or meets a string that does not fit the caller's buffer or holds
 * a NUL byte, is marked bad and from then on returns zeros: the caller
 * checks p9_reader_ok() once after decoding all fields of a request.
 */
#ifndef HVM_DEVICES_VIRTIO_P9_PROTO_H
#define HVM_DEVICES_VIRTIO_P9_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define P9_HDR_SIZE 7 /* size[4] type[1] tag[2] */
#define P9_QID_SIZE 13
#define P9_NOTAG 0xffffu
#define P9_NOFID 0xffffffffu
#define P9_MAXWELEM 16 /* names per Twalk */
#define P9_VERSION_L "9P2000.L"
/* Rread/Rreaddir: header + count[4]; Twrite: header + fid offset count. */
#define P9_READ_HDR_SIZE (P9_HDR_SIZE + 4)
#define P9_WRITE_HDR_SIZE (P9_HDR_SIZE + 4 + 8 + 4)

enum p9_msg_type {
	P9_TLERROR = 6,
	P9_RLERROR = 7,
	P9_TSTATFS = 8,
	P9_TLOPEN = 12,
	P9_TLCREATE = 14,
	P9_TSYMLINK = 16,
	P9_TMKNOD = 18,
	P9_TRENAME = 20,
	P9_TREADLINK = 22,
	P9_TGETATTR = 24,
	P9_TSETATTR = 26,
	P9_TXATTRWALK = 30,
	P9_TXATTRCREATE = 32,
	P9_TREADDIR = 40,
	P9_TFSYNC = 50,
	P9_TLOCK = 52,
	P9_TGETLOCK = 54,
	P9_TLINK = 70,
	P9_TMKDIR = 72,
	P9_TRENAMEAT = 74,
	P9_TUNLINKAT = 76,
	P9_TVERSION = 100,
	P9_TAUTH = 102,
	P9_TATTACH = 104,
	P9_TFLUSH = 108,
	P9_TWALK = 110,
	P9_TREAD = 116,
	P9_TWRITE = 118,
	P9_TCLUNK = 120,
	P9_TREMOVE = 122,
};

/* qid.type bits */
#define P9_QTDIR 0x80
#define P9_QTSYMLINK 0x02
#define P9_QTFILE 0x00

/* Tgetattr request_mask / Rgetattr valid: the "basic" stat fields. */
#define P9_GETATTR_BASIC 0x000007ffull

/* Tsetattr valid bits */
#define P9_SETATTR_MODE 0x001u
#define P9_SETATTR_UID 0x002u
#define P9_SETATTR_GID 0x004u
#define P9_SETATTR_SIZE 0x008u
#define P9_SETATTR_ATIME 0x010u
#define P9_SETATTR_MTIME 0x020u
#define P9_SETATTR_CTIME 0x040u
#define P9_SETATTR_ATIME_SET 0x080u
#define P9_SETATTR_MTIME_SET 0x100u

/*
 * Tlopen/Tlcreate flags (Linux's P9_DOTL_*): equal to x86's O_* values but
 * not to arm64's, so they are always translated, never passed through.
 */
#define P9_DOTL_ACCMODE 00000003u
#define P9_DOTL_CREATE 00000100u
#define P9_DOTL_EXCL 00000200u
#define P9_DOTL_TRUNC 00001000u
#define P9_DOTL_APPEND 00002000u
#define P9_DOTL_DSYNC 00010000u
#define P9_DOTL_DIRECTORY 00200000u
#define P9_DOTL_SYNC 04000000u

/* Tunlinkat flags */
#define P9_AT_REMOVEDIR 0x200u

/* Tlock / Tgetlock */
#define P9_LOCK_TYPE_RDLCK 0
#define P9_LOCK_TYPE_WRLCK 1
#define P9_LOCK_TYPE_UNLCK 2
#define P9_LOCK_SUCCESS 0
#define P9_LOCK_BLOCKED 1
#define P9_LOCK_ERROR 2

struct p9_qid {
	uint8_t type;
	uint32_t version;
	uint64_t path;
};

struct p9_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;
	bool bad;
};

struct p9_writer {
	uint8_t *buf;
	size_t cap;
	size_t off;
	bool overflow;
};

/*
 * Start reading the message in BUF[0, LEN). Decodes the header into TYPE
 * and TAG; returns 0, or -EINVAL when LEN is shorter than a header or the
 * size field does not equal LEN.
 */
int p9_reader_init(struct p9_reader *r, const void *buf, size_t len,
		   uint8_t *type, uint16_t *tag);
static inline bool p9_reader_ok(const struct p9_reader *r)
{
	return !r->bad;
}
static inline size_t p9_reader_left(const struct p9_reader *r)
{
	return r->bad ? 0 : r->len - r->off;
}
uint8_t p9_get_u8(struct p9_reader *r);
uint16_t p9_get_u16(struct p9_reader *r);
uint32_t p9_get_u32(struct p9_reader *r);
uint64_t p9_get_u64(struct p9_reader *r);
/*
 * A string into DST (CAP bytes, NUL-terminated on success). Bad when it
 * does not fit (len >= CAP) or contains a NUL byte.
 */
void p9_get_str(struct p9_reader *r, char *dst, size_t cap);
/* LEN raw bytes in place (NULL and bad when fewer are left). */
const uint8_t *p9_get_bytes(struct p9_reader *r, size_t len);

/* Start a reply of TYPE with TAG in BUF (CAP bytes). */
void p9_writer_init(struct p9_writer *w, void *buf, size_t cap, uint8_t type,
		    uint16_t tag);
void p9_put_u8(struct p9_writer *w, uint8_t v);
void p9_put_u16(struct p9_writer *w, uint16_t v);
void p9_put_u32(struct p9_writer *w, uint32_t v);
void p9_put_u64(struct p9_writer *w, uint64_t v);
void p9_put_str(struct p9_writer *w, const char *s, size_t len);
void p9_put_qid(struct p9_writer *w, const struct p9_qid *qid);
/* Reserve LEN bytes and return where they start (NULL on overflow). */
uint8_t *p9_put_space(struct p9_writer *w, size_t len);
/*
 * Write the size field. Returns the message length, or 0 when it did not
 * fit in CAP (the caller then answers with an error that does).
 */
size_t p9_writer_finish(struct p9_writer *w);

/* An Rlerror with ECODE (a positive Linux errno) for TAG into BUF. */
size_t p9_build_lerror(void *buf, size_t cap, uint16_t tag, uint32_t ecode);

#endif
