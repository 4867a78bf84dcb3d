/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock, the sandbox's layer for paths and sockets (docs/sandbox.md).
 * Seccomp filters system calls but cannot read a path or a socket
 * address: a read-only openat of any file passes it. Landlock domains are
 * per thread, like seccomp filters, so each confined thread restricts
 * itself in sandbox_thread_enter(), between no_new_privs and its seccomp
 * filter, to what its kind still opens after setup (nothing, for most
 * kinds) plus what was granted to it on that thread just before
 * (sandbox_grant_beneath(): a 9P worker's share, the main thread's
 * teardown).
 *
 * Landlock is optional: on a kernel without it the VM runs under seccomp
 * alone, and on an older ABI under what that ABI offers (logged once at
 * debug level by sandbox_prepare()).
 */
#ifndef HVM_SANDBOX_LANDLOCK_H
#define HVM_SANDBOX_LANDLOCK_H

#include "sandbox/sandbox.h"

/* What a grant lets the thread do beneath a directory (or to one file). */
enum sandbox_grant {
	SANDBOX_GRANT_READ, /* open files read-only, list directories */
	SANDBOX_GRANT_CREATE, /* create, write and truncate regular files */
	SANDBOX_GRANT_REMOVE, /* unlink files (sockets, registry links) */
	SANDBOX_GRANT_SHARE, /* a 9P share: every file operation 9P makes */
	SANDBOX_GRANT_SHARE_RO, /* a read-only 9P share */
};

/*
 * Once per process, from sandbox_prepare(): the ABI the running kernel
 * offers (0: Landlock is missing or disabled) and its fixed errata.
 */
int landlock_probe(void);
int landlock_abi(void);
/* Whether this kernel scopes signals without breaking our own threads. */
bool landlock_scopes_signals(void);

/*
 * On the calling thread, before its sandbox_thread_enter(): its Landlock
 * domain also allows WHAT beneath FD (a directory, or one file: then only
 * the file rights of WHAT), or beneath PATH. FD is duplicated; the grant
 * is used and dropped by the next sandbox_thread_enter() on this thread.
 * Nothing happens when the sandbox is not requested or Landlock is
 * unavailable. 0 or -errno.
 */
int sandbox_grant_beneath(int fd, enum sandbox_grant what);
int sandbox_grant_path(const char *path, enum sandbox_grant what);
/* The directory PATH names its file in ("." for a bare name). */
int sandbox_grant_parent(const char *path, enum sandbox_grant what);

/*
 * Called by sandbox_thread_enter() after no_new_privs: build KIND's
 * ruleset with this thread's grants and restrict the thread to it. 0 where
 * Landlock is unavailable; -errno (with the reason recorded) when a
 * ruleset that the kernel offers cannot be applied.
 */
int landlock_thread_enter(enum sandbox_kind kind);

/*
 * The test hook KIND:landlock (tests/cli/sandbox-test.sh): right after
 * confining itself, the thread tries what its domain must refuse and
 * writes one line with the outcomes to stderr, then goes on.
 */
void landlock_test_probe(enum sandbox_kind kind);

#endif
