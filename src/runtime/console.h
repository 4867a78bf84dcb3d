/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --console-socket: a pseudo-terminal for process.terminal. Its master goes
 * to the engine over the Unix socket (SCM_RIGHTS, as runc does); the slave
 * becomes the VMM process's stdio, which the guest side of the container
 * reads and writes.
 */
#ifndef HVM_RUNTIME_CONSOLE_H
#define HVM_RUNTIME_CONSOLE_H

#include <stddef.h>

#include "spec.h"

struct rt_console {
	int slave; /* -1: none */
};

/*
 * Open a pty sized from PROC's consoleSize, fully raw (no input or output
 * processing: the guest's tty does it), and send its master to SOCKET.
 */
int rt_console_open(struct rt_console *con, const char *socket,
		    const struct oci_process *proc, char *err, size_t errlen);
void rt_console_close(struct rt_console *con);

/* Make FD the calling session leader's controlling terminal. */
void rt_console_make_controlling(int fd);

/* Send FD over the Unix socket at PATH (one byte of data, the fd). */
int rt_send_fd(const char *path, int fd);

#endif
