/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guest side of the host's ports (docs/agent.md, "Transport" and "The
 * main process's stdio"), shared by the agent and hintvm-oci-init.
 */
#ifndef HVM_AGENT_HOST_STDIO_H
#define HVM_AGENT_HOST_STDIO_H

/*
 * A stream connection to host port PORT: vsock CID 2, or with HYBRID_PATH
 * (the agent's test mode) the Unix socket "HYBRID_PATH_PORT". An fd, or
 * -errno.
 */
int agent_connect_host(const char *hybrid_path, unsigned int port);

/*
 * The main process's stdin, stdout and stderr from the host's ports
 * 1027-1029 into FDS, all three or none (-1s: the host does not serve
 * them, the process keeps what it has).
 */
void agent_stdio_connect(const char *hybrid_path, int fds[3]);

/*
 * After the main process's exit, before its report: end our side of
 * stdout and stderr and wait (bounded) until the host has written them
 * out and closed. Closes FDS. Nothing when they are -1.
 */
void agent_stdio_finish(int fds[3]);

#endif
