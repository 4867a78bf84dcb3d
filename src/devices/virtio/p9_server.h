/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 9P2000.L file server for one share: decodes a T-message, runs it
 * against the confined file system (p9_fs.h) and the session's fids
 * (p9_fid.h), and encodes the R-message. Transport-free and thread-safe:
 * virtio_9p.c calls p9_server_handle() from several worker threads at
 * once; the unit tests and the fuzz harness call it directly.
 *
 * Tflush is answered here without waiting (the transport orders the flushed
 * request's reply before the Rflush); Tauth is refused (no authentication:
 * the share is the VM's).
 */
#ifndef HVM_DEVICES_VIRTIO_P9_SERVER_H
#define HVM_DEVICES_VIRTIO_P9_SERVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/virtio/p9_fid.h"
#include "devices/virtio/p9_fs.h"

/* Linux's virtio client stays below 512 KiB (128 ring slots of pages). */
#define P9_MAX_MSIZE (1024u * 1024u)
#define P9_MIN_MSIZE 4096u

struct p9_server {
	struct p9_fs fs;
	struct p9_fid_table fids;
	uint32_t max_msize;
	_Atomic uint32_t msize; /* negotiated by Tversion */
	/* Tests: called before each request of TYPE is served. */
	void (*before_op)(void *ctx, uint8_t type);
	void *before_op_ctx;
};

/*
 * Serve directory DIR (see p9_fs_open) with at most MAX_FIDS fids and
 * messages of at most MAX_MSIZE bytes; fids and xattr buffers are charged
 * to BUDGET (NULL: none): over it, the guest gets ENFILE for a new fid and
 * ENOMEM for an xattr buffer. 0 or -errno (hvm_error_message()).
 */
int p9_server_init(struct p9_server *s, const char *dir, bool readonly,
		   enum p9_id_mode ids, unsigned int max_fids,
		   uint32_t max_msize, struct budget *budget);
void p9_server_destroy(struct p9_server *s);
/* A new session (device reset): every fid is clunked. */
void p9_server_reset(struct p9_server *s);
static inline uint32_t p9_server_msize(struct p9_server *s)
{
	return atomic_load(&s->msize);
}

/*
 * Serve the request REQ[0, LEN) and write its reply into REPLY (CAP
 * bytes, at least P9_HDR_SIZE + 4 for an Rlerror). Returns the reply's
 * length, or 0 when the request is too broken to answer (no header).
 */
size_t p9_server_handle(struct p9_server *s, const uint8_t *req, size_t len,
			uint8_t *reply, size_t cap);

/* Header fields of a raw message: 0, or -EINVAL when LEN < 7. */
int p9_peek_header(const uint8_t *msg, size_t len, uint8_t *type,
		   uint16_t *tag);

#endif
