/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A share served by a separate file-server process (--share ...,
 * server=process; docs/shares.md): the VMM's 9P workers (virtio_9p.c)
 * pass each whole T-message over a Unix stream socket, one socket per
 * worker so that replies never interleave, and read back the whole
 * R-message. The process runs p9_server_handle() on one thread per
 * socket, in its own mount namespace rooted at the share, with only the
 * capabilities the ids model needs (sandbox kind "file-server"). It is
 * forked while the VMM is still root and before the guest runs, so that
 * the VMM's threads can become an unprivileged user (--user) and still
 * serve a root-owned share, and so that no thread of the VMM's address
 * space holds those capabilities. It never maps guest memory.
 *
 * The wire is private to this file (both ends are here). A reset (device
 * reset) is a message on a worker's socket carrying the device's
 * generation; each request carries it too, so a request from before a
 * reset can never run after one, whichever socket the reset took. Each
 * reply carries the server's negotiated msize.
 */
#ifndef HVM_DEVICES_VIRTIO_P9_FILE_SERVER_H
#define HVM_DEVICES_VIRTIO_P9_FILE_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/budget.h"
#include "core/event_loop.h"
#include "core/guest_memory.h"
#include "devices/virtio/p9_fs.h"
#include "devices/virtio/p9_server.h"

#define P9_FILE_SERVER_MAX_CHANNELS 8

/* The VMM's end. */
struct p9_file_server {
	pid_t pid; /* 0: none (attached to a test's sockets) */
	int pidfd;
	int chan[P9_FILE_SERVER_MAX_CHANNELS]; /* one per worker */
	unsigned int nr_chan;
	_Atomic uint32_t msize; /* the server's, from its last reply */
	atomic_bool dead; /* a channel broke: every request gets EIO */
	atomic_bool stopping; /* p9_file_server_stop(): EOF is expected */
	_Atomic uint64_t *deaths; /* bumped once when it dies; may be NULL */
	/*
	 * The VM's view of what the guest made the file servers hold (their
	 * budgets live in their processes): each reply carries the server's
	 * figures, and the difference to the last ones goes to REPORT.
	 */
	struct budget *report; /* may be NULL */
	_Atomic uint64_t last_used, last_refused;
	char name[48]; /* for the log: "virtio-9p0 (tag t)" */
	struct event_watch watch; /* its pidfd: a death is known at once */
};

struct p9_file_server_config {
	const char *dir;
	bool readonly;
	enum p9_id_mode ids;
	unsigned int max_fids;
	uint32_t max_msize;
	/* Its own budget of this size: it cannot charge the VM's (0: none). */
	uint64_t budget_limit;
	unsigned int channels; /* 1..P9_FILE_SERVER_MAX_CHANNELS */
	const char *name;
	/* Unmapped in the child at once: it never holds guest memory. */
	const struct guest_memory *mem;
	_Atomic uint64_t *deaths;
	struct budget *report; /* the sum over the VM's file servers */
};

/*
 * Fork the file server for CFG->dir and wait until it is set up (or says
 * why not). Needs CAP_SYS_ADMIN (its mount namespace). 0, or -errno with
 * the reason recorded (hvm_error_message()).
 */
int p9_file_server_start(struct p9_file_server *fs,
			 const struct p9_file_server_config *cfg);

/*
 * Tests: the VMM's end on N sockets whose other ends someone serves with
 * p9_file_server_serve(), without a process.
 */
void p9_file_server_attach(struct p9_file_server *fs, const int *fds,
			   unsigned int n, const char *name);

/*
 * On worker CHAN's socket: REQ[0, HELD) is a T-message the guest says is
 * LEN bytes long (LEN > HELD only for an oversized one, whose header
 * suffices for EMSGSIZE), queued in device generation GENERATION. The
 * reply goes to REPLY (CAP bytes); returns its length, 0 for none (the
 * request predates a reset, or is too broken to answer). When the server
 * is gone: Rlerror(EIO), logged once.
 */
size_t p9_file_server_call(struct p9_file_server *fs, unsigned int chan,
			   uint32_t generation, const uint8_t *req, size_t held,
			   size_t len, uint8_t *reply, size_t cap);

/* A device reset to GENERATION, through worker CHAN's socket: fids go. */
void p9_file_server_reset(struct p9_file_server *fs, unsigned int chan,
			  uint32_t generation);

/*
 * Have LOOP report the process's death as it happens (logged, counted)
 * rather than at the guest's next request. 0 or -errno.
 */
int p9_file_server_watch(struct p9_file_server *fs, struct event_loop *loop);

static inline uint32_t p9_file_server_msize(struct p9_file_server *fs)
{
	return atomic_load(&fs->msize);
}

/*
 * Wake every worker blocked on a socket (they see EOF, not a death), then
 * close them, let the process exit (1 s), else kill it, and reap it.
 * Call after the workers were told to stop; then join them, then
 * p9_file_server_release().
 */
void p9_file_server_stop(struct p9_file_server *fs);
void p9_file_server_release(struct p9_file_server *fs);

/*
 * The process's side: serve S on FDS[0, N), one thread each (the caller's
 * for the first), until every socket is closed. Returns when all are.
 */
void p9_file_server_serve(struct p9_server *s, const int *fds, unsigned int n);

#endif
