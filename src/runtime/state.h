/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container's state directory, --root/ID/: what `create` recorded
 * (state.json: bundle, VMM pid and its start time, creation time), the
 * exec FIFO `start` opens, the paused marker, the VM's control socket.
 * The status the runtime spec names is derived from these and from
 * whether the VMM process still lives, never stored, so it cannot go stale.
 */
#ifndef HVM_RUNTIME_STATE_H
#define HVM_RUNTIME_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "runtime.h"

enum rt_status {
	RT_CREATING,
	RT_CREATED,
	RT_RUNNING,
	RT_PAUSED,
	RT_STOPPED,
};

struct rt_container {
	char id[RT_MAX_ID + 1];
	char dir[PATH_MAX]; /* --root/ID */
	char bundle[PATH_MAX];
	pid_t pid; /* the VMM process; 0 while creating */
	unsigned long long pid_start; /* its start time (/proc/PID/stat) */
	char created[64]; /* RFC 3339 */
	char netns[PATH_MAX]; /* the namespace holding our tap, or "" */
};

/* IDs are path components: [A-Za-z0-9_.+-], not starting with '.'. */
bool rt_valid_id(const char *id);
/*
 * The VM's vsock socket in the state directory. Short: the VMM takes a
 * path of at most 96 bytes (PATH_<port> must fit sun_path too), and
 * containerd's CRI names containers with 64 hex digits, which under the
 * shim's /run/hintvm-shim/<namespace>/ leaves 7 bytes for the name.
 */
#define RT_VSOCK_FILE "v.sock"
/*
 * A container in a template's clone: its root in the guest, which exec
 * gives the agent (EXEC's ROOT) unless told another (docs/template.md).
 */
#define RT_GUEST_ROOT_FILE "guest-root"
/* Where a clone's agent mounts such a container's rootfs share. */
#define RT_CLONE_ROOT "/hintvm-root"

/*
 * The guest's OOM kills in the container's cgroup at its exit: the VMM
 * process writes the count the guest sent with the exit (create.c,
 * struct hvm_exit's guest_oom_kills) before it exits, so whoever reaps
 * it (the shim: TaskOOM) reads it after, never racing the VM's end.
 * Absent or empty: the guest did not say.
 */
#define RT_OOM_FILE "oom_kills"

/* The count RT_OOM_FILE of C holds into N: 0, -ENOENT (not known) or
 * -EINVAL (not a count: named in the log). */
int rt_container_oom_kills(const struct rt_container *c, unsigned long long *n);

/* --root/ID into C->dir; creates --root (0700) when asked. */
int rt_container_init(struct rt_container *c, const char *id, bool create_root);

/* Load state.json; -ENOENT (and an error logged) when there is none. */
int rt_container_load(struct rt_container *c, const char *id);

/* Write state.json atomically. */
int rt_container_save(const struct rt_container *c);

/* PATH = C->dir/NAME. */
void rt_container_path(const struct rt_container *c, const char *name,
		       char *path, size_t len);

enum rt_status rt_container_status(const struct rt_container *c);
const char *rt_status_name(enum rt_status status);

/* Whether PID is alive and started at START (not a recycled pid). */
bool rt_process_alive(pid_t pid, unsigned long long start);
/* The start time of PID (field 22 of /proc/PID/stat), 0 if unknown. */
unsigned long long rt_process_start_time(pid_t pid);

/* The OCI state document of C (caller frees). */
char *rt_container_state_json(const struct rt_container *c);

/* Remove C->dir and everything in it. */
int rt_container_remove(const struct rt_container *c);

#endif
