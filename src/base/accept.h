/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Accepting connections at the process's file limit (EMFILE, ENFILE).
 * A listening socket stays readable while its connection waits in the
 * backlog, so a poll loop that only retries a failed accept4() spins, and
 * a guest that can open host descriptors (vsock connections, 9P fids) can
 * drive the process there. An accept_guard turns that into a pause: the
 * caller stops watching its listener for ACCEPT_BACKOFF_MS, and the
 * connection waits in the kernel's backlog meanwhile. A guard that keeps a
 * spare descriptor gives it up for one connection at the limit, so that
 * the VM's owner still gets an answer (the control socket: `hintvm ctl VM
 * status` on a process at its limit).
 */
#ifndef HVM_BASE_ACCEPT_H
#define HVM_BASE_ACCEPT_H

#include <stdbool.h>
#include <stdint.h>

#define ACCEPT_BACKOFF_MS 100

struct accept_guard {
	bool keep_spare;
	int spare; /* /dev/null held for the limit; -1 while given up */
	uint64_t paused_until_ms; /* 0: watch the listener */
	uint64_t at_limit; /* how often accept4 met the limit */
};

/* KEEP_SPARE: hold one descriptor in reserve (opened here). */
void accept_guard_init(struct accept_guard *g, bool keep_spare);

/*
 * accept4(LISTEN_FD, NULL, NULL, FLAGS). At the limit: the spare's place
 * for this connection when there is one, else -1 with errno EMFILE and
 * the guard paused until NOW_MS + ACCEPT_BACKOFF_MS. Other errors as
 * accept4's.
 */
int accept_guarded(struct accept_guard *g, int listen_fd, int flags,
		   uint64_t now_ms);

/* Whether to leave the listener out of the poll set at NOW_MS. */
bool accept_guard_paused(struct accept_guard *g, uint64_t now_ms);

/* After a connection closed: take the spare back when it was given up. */
void accept_guard_refill(struct accept_guard *g);

void accept_guard_destroy(struct accept_guard *g);

#endif
