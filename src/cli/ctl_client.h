/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client side of the control socket for hintvm ctl, ls and top: one
 * connection, request lines out, reply and event lines in, each with a
 * deadline so that a VM that hangs cannot hang the command.
 */
#ifndef HVM_CLI_CTL_CLIENT_H
#define HVM_CLI_CTL_CLIENT_H

#include <stddef.h>

struct json_object;

struct ctl_conn {
	int fd;
	char *buf; /* bytes read, not yet returned as lines */
	size_t used, cap;
};

/* Connect to NAME_OR_PATH; -errno with hvm_last_error() set. */
int ctl_conn_open(struct ctl_conn *c, const char *name_or_path);
void ctl_conn_close(struct ctl_conn *c);

/* Send LINE (which ends in '\n'). */
int ctl_conn_send(struct ctl_conn *c, const char *line);
/* The same, passing NR open files along with it (SCM_RIGHTS). */
int ctl_conn_send_fds(struct ctl_conn *c, const char *line, const int *fds,
		      unsigned int nr);

/*
 * The next line (without '\n', NUL-terminated, valid until the next call)
 * within TIMEOUT_MS (-1: wait for ever). NULL at end of stream, on
 * timeout (errno ETIMEDOUT) or on error.
 */
char *ctl_conn_read_line(struct ctl_conn *c, int timeout_ms);

/*
 * One request to the VM NAME_OR_PATH: a protocol v1 command with no
 * arguments ("status", "stats", ...), the parsed reply (put it), or NULL
 * when nobody answered in TIMEOUT_MS.
 */
struct json_object *ctl_call(const char *name_or_path, const char *cmd,
			     int timeout_ms);

/* Member PATH ("policy.commit") of OBJ, or NULL. */
struct json_object *json_path(struct json_object *obj, const char *path);

#endif
