/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A ttrpc client, one call at a time (docs/shim.md): what the shim needs
 * to publish its events to containerd's events service on TTRPC_ADDRESS
 * (containerd.services.events.ttrpc.v1.Events/Forward). Blocking, with a
 * deadline per call, so that a containerd that stops reading costs the
 * shim a timeout, not a hang.
 */
#ifndef HVM_SHIM_TTRPC_CLIENT_H
#define HVM_SHIM_TTRPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "rpc_code.pb-c.h"
#include "shim/ttrpc_frame.h"

struct ttrpc_client {
	int fd;
	uint32_t next_stream; /* odd, as a client's streams are */
	struct ttrpc_reader rd;
};

/* The result of a call that reached the server. */
struct ttrpc_status {
	Google__Rpc__Code code;
	char message[256];
};

/* Connects to the Unix socket PATH within TIMEOUT_MS. */
int ttrpc_client_connect(struct ttrpc_client *c, const char *path,
			 int timeout_ms);
/* Takes over an already connected stream socket (tests, socketpairs). */
void ttrpc_client_adopt(struct ttrpc_client *c, int fd);
void ttrpc_client_close(struct ttrpc_client *c);

/*
 * Calls SERVICE/METHOD with REQ and waits up to TIMEOUT_MS for the
 * answer, also sent as the request's timeout_nano. Returns 0 when the
 * server answered: ST holds its status and, when OK, *RESP the response
 * unpacked as RESP_DESC (free it with protobuf_c_message_free_unpacked).
 * A negative errno when the call failed on the way (-ETIMEDOUT,
 * -ECONNRESET, -EPROTO for a frame no server sends): the connection is
 * then closed, since a late answer would arrive out of step.
 */
int ttrpc_client_call(struct ttrpc_client *c, const char *service,
		      const char *method, const ProtobufCMessage *req,
		      const ProtobufCMessageDescriptor *resp_desc,
		      ProtobufCMessage **resp, struct ttrpc_status *st,
		      int timeout_ms);

#endif
