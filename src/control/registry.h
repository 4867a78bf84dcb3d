/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of running VMs on this host: one directory (the runtime
 * directory) in which every VM with a control socket has an entry NAME.sock
 * -- the socket itself, or a symlink to it when `--control PATH` put the
 * socket elsewhere. The directory is the registry: no daemon, no index
 * file to keep consistent; an entry nobody answers on is a VM that died
 * and is removed by whoever meets it. docs/control-socket.md.
 *
 * Where (the first that applies):
 *   $HINTVM_RUNTIME_DIR         as given (tests, orchestrators)
 *   /run/hintvm                 for root
 *   $XDG_RUNTIME_DIR/hintvm     for other users with a login session
 *   /tmp/hintvm-UID             otherwise (mode 0700, must be ours)
 */
#ifndef HVM_CONTROL_REGISTRY_H
#define HVM_CONTROL_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

#include "abi/vm_name.h"

#define REGISTRY_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

/* The runtime directory's path (not created). -ENAMETOOLONG when long. */
int registry_dir(char *buf, size_t len);

/*
 * The runtime directory, created 0700 when missing (with its parent for
 * /run and /tmp). An existing one must be a directory owned by us and not
 * writable by others: the entries in it are trusted as our VMs' sockets.
 */
int registry_open_dir(char *buf, size_t len);

/*
 * 0 when DIR (missing, or a directory owned by us or root that nobody
 * else may write) can be trusted by a client; -EPERM with the reason.
 */
int registry_trust_dir(const char *dir);

/* A name for a VM the user did not name: "vm-PID", "vm-PID-2", ... */
void registry_default_name(char *buf, size_t len);

/* DIR/NAME.sock, or -ENAMETOOLONG when it does not fit a socket address. */
int registry_entry_path(const char *dir, const char *name, char *buf,
			size_t len);

/*
 * Whether a VM answers on the socket at PATH (following a symlink):
 * 1 it does, 0 nobody listens (no such file, refused, dangling link),
 * or a negative errno when it cannot tell (permission denied, ...).
 */
int registry_probe(const char *path);

/*
 * Claim NAME in DIR: an entry nobody answers on is removed; a live one is
 * -EADDRINUSE. On success ENTRY holds DIR/NAME.sock, free to bind (or to
 * link to a socket elsewhere with registry_link()).
 */
int registry_claim(const char *dir, const char *name, char *entry, size_t len);

/* Make ENTRY a symlink to the socket at TARGET (an absolute path). */
int registry_link(const char *entry, const char *target);

struct registry_entry {
	char name[VM_NAME_MAX + 1];
	char path[REGISTRY_PATH_MAX]; /* DIR/NAME.sock */
};

/*
 * Every live VM in DIR, sorted by name, into a malloc'ed array (*COUNT
 * entries; free() it). Entries nobody answers on are removed on the way
 * (when REMOVE_STALE). A missing directory is an empty registry.
 */
int registry_list(const char *dir, bool remove_stale,
		  struct registry_entry **out, size_t *count);

/*
 * What `hintvm ctl` accepts: a path (it contains a '/') is used as it is;
 * anything else is a VM name looked up in the runtime directory. -ENOENT
 * (reason recorded) for a name no VM has; -EPERM for a directory or
 * socket that another user owns or may write.
 */
int registry_resolve(const char *name_or_path, char *buf, size_t len);

#endif
