/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host side of the guest agent protocol (docs/agent.md): the pieces the
 * hvm_process_* API and `hintvm run --agent`'s exit-status listener share.
 */
#ifndef HVM_AGENT_AGENT_CLIENT_H
#define HVM_AGENT_AGENT_CLIENT_H

#include <stdint.h>

#include "abi/agent_proto.h"

/*
 * Connect to the guest's vsock PORT through the hybrid socket UDS_PATH
 * ("CONNECT <port>\n" / "OK <n>\n") and exchange HELLO. Returns the
 * connected socket (blocking, close-on-exec) or a negative errno with the
 * reason in hvm_last_error().
 */
int agent_dial(const char *uds_path, unsigned int port);

/*
 * The same on FD, a socket already connected to the hybrid socket (from
 * hvm_vm_vsock_connect, say); WHAT names it in errors. 0 or a negative
 * errno; FD stays the caller's either way.
 */
int agent_greet(int fd, const char *what, unsigned int port);

/*
 * Read one frame from FD within TIMEOUT_MS (-1: no limit): the header,
 * then a malloc'ed, validated payload (free it). 0, -ETIMEDOUT,
 * -ECONNRESET at EOF, -EMSGSIZE for an oversized frame, -EPROTO for a
 * malformed payload.
 */
int agent_read_frame(int fd, struct agent_hdr *hdr, uint8_t **payload,
		     int timeout_ms);

#endif
