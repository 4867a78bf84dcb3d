// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the decoders of every Task request
 * (containerd.task.v2.Task, src/shim, docs/shim.md). fuzz_ttrpc covers
 * the framing and a server whose other methods answer UNIMPLEMENTED
 * before anything is decoded; here every method has a handler, so each
 * request message's decoder sees the input. The first byte picks the
 * method (in shim.proto's order), the rest is its request message:
 *  1. decoded on its own: a message that decodes passes protobuf-c's
 *     check, and packing it again is stable (pack(unpack(pack(m))) ==
 *     pack(m)) unless it carried unknown fields (protobuf-c keeps them
 *     as read: a tag of field 0 in a non-minimal varint is one);
 *  2. sent as a whole Request frame to a real server for the Task
 *     service whose handlers walk the decoded message (every string,
 *     mount and Any; Create's options through the shim's parser,
 *     options.c) and answer: the answer is exactly one Response
 *     frame on the request's stream, with a status; nothing leaks.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "shim/ttrpc_frame.h"
#include "shim/shim.h"
#include "shim/ttrpc_server.h"
#include "task_shim.pb-c.h"
#include "ttrpc.pb-c.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static size_t touched;
/* Unknown fields seen by walk(): kept and packed back as protobuf-c read
 * them, which need not decode again (a non-minimal tag of field 0). */
static size_t unknown;

/* Reads every byte of a decoded string: a missing NUL shows in ASan. */
static void touch_str(const char *s)
{
	if (s)
		touched += strlen(s);
}

static void touch_any(const Google__Protobuf__Any *a)
{
	if (!a)
		return;
	touch_str(a->type_url);
	for (size_t i = 0; i < a->value.len; i++)
		touched += a->value.data[i];
}

/* Every field the shim reads, by message; the rest through the check. */
static void walk(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	check(protobuf_c_message_check(m));
	unknown += m->n_unknown_fields;
	for (unsigned int i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const void *p = (const char *)m + f->offset;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m +
						     f->quantifier_offset);
			const void *const *v = *(const void *const *)p;

			for (size_t j = 0; j < n; j++) {
				if (f->type == PROTOBUF_C_TYPE_STRING)
					touch_str(((const char *const *)v)[j]);
				else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
					walk(v[j]);
			}
		} else if (f->type == PROTOBUF_C_TYPE_STRING) {
			touch_str(*(const char *const *)p);
		} else if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
			   *(const void *const *)p) {
			const ProtobufCMessage *sub = *(const void *const *)p;

			if (sub->descriptor ==
			    &google__protobuf__any__descriptor)
				touch_any((const void *)sub);
			walk(sub);
		}
	}
}

static void h_any(void *opaque, struct ttrpc_call *call)
{
	char path[4096], err[512];

	walk(call->request);
	/* Create's options through the shim's own parser (options.c). */
	if (call->request->descriptor ==
	    &containerd__task__v2__create_task_request__descriptor) {
		const Containerd__Task__V2__CreateTaskRequest *c =
			(const void *)call->request;
		int r = shim_parse_options(c->options, path, sizeof(path), err,
					   sizeof(err));

		check(r == 0 || (r < 0 && err[0] && !path[0]));
	}
	ttrpc_call_error(call, GOOGLE__RPC__CODE__NOT_FOUND, "walked %zu",
			 touched);
}

/* 1: decoded alone, checked, packed again stably. */
static void round_trip(const ProtobufCMessageDescriptor *in,
		       const uint8_t *data, size_t size)
{
	ProtobufCMessage *m = protobuf_c_message_unpack(in, NULL, size, data);
	ProtobufCMessage *m2;
	uint8_t *a, *b;
	size_t na, nb;

	if (!m)
		return;
	unknown = 0;
	walk(m);
	na = protobuf_c_message_get_packed_size(m);
	a = malloc(na + 1);
	check(a);
	check(protobuf_c_message_pack(m, a) == na);
	m2 = protobuf_c_message_unpack(in, NULL, na, a);
	if (!m2) {
		/* Only what the shim never reads may fail to come back. */
		check(unknown);
		free(a);
		protobuf_c_message_free_unpacked(m, NULL);
		return;
	}
	nb = protobuf_c_message_get_packed_size(m2);
	b = malloc(nb + 1);
	check(b);
	check(protobuf_c_message_pack(m2, b) == nb);
	check(na == nb && !memcmp(a, b, na));
	free(a);
	free(b);
	protobuf_c_message_free_unpacked(m2, NULL);
	protobuf_c_message_free_unpacked(m, NULL);
}

static uint8_t out[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const ProtobufCServiceDescriptor *d =
		&containerd__task__v2__task__descriptor;
	ttrpc_handler_fn handlers[32];
	struct ttrpc_service svc = { .desc = d,
				     .handlers = handlers,
				     .n_handlers = d->n_methods };
	struct ttrpc_server_config cfg = { .services = &svc, .n_services = 1 };
	Hintvm__Ttrpc__Request req = HINTVM__TTRPC__REQUEST__INIT;
	const ProtobufCMethodDescriptor *method;
	Hintvm__Ttrpc__Response *resp;
	struct ttrpc_header h;
	struct ttrpc_server *s;
	uint8_t *frame;
	size_t n, got = 0;
	int sv[2];

	if (!size || size > TTRPC_MAX_DATA - 256)
		return 0;
	method = &d->methods[data[0] % d->n_methods];
	data++;
	size--;

	round_trip(method->input, data, size);

	/* 2: the same bytes as the payload of one Request, served. */
	for (unsigned int i = 0; i < d->n_methods; i++)
		handlers[i] = h_any;
	req.service = (char *)d->name;
	req.method = (char *)method->name;
	req.payload.data = (uint8_t *)data;
	req.payload.len = size;
	n = hintvm__ttrpc__request__get_packed_size(&req);
	frame = malloc(TTRPC_HEADER_LEN + n);
	check(frame);
	ttrpc_header_encode(&(struct ttrpc_header){ .length = (uint32_t)n,
						    .stream_id = 1,
						    .type = TTRPC_MSG_REQUEST },
			    frame);
	hintvm__ttrpc__request__pack(&req, frame + TTRPC_HEADER_LEN);
	s = ttrpc_server_create(&cfg);
	check(s);
	check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	check(ttrpc_server_add_conn(s, sv[1]) == 0);
	check(send(sv[0], frame, TTRPC_HEADER_LEN + n, MSG_NOSIGNAL) ==
	      (ssize_t)(TTRPC_HEADER_LEN + n));
	free(frame);
	for (int round = 0; round < 4; round++) {
		ssize_t r;

		check(ttrpc_server_poll(s, 0) == 0);
		while ((r = recv(sv[0], out + got, sizeof(out) - got,
				 MSG_DONTWAIT)) > 0)
			got += (size_t)r;
	}
	/* Exactly one answer, on stream 1, with a status. */
	check(got >= TTRPC_HEADER_LEN);
	check(ttrpc_header_decode(out, &h) == 0);
	check(h.type == TTRPC_MSG_RESPONSE && h.stream_id == 1);
	check(got == TTRPC_HEADER_LEN + h.length);
	resp = hintvm__ttrpc__response__unpack(NULL, h.length,
					       out + TTRPC_HEADER_LEN);
	check(resp && resp->status);
	check(resp->status->code != GOOGLE__RPC__CODE__OK);
	hintvm__ttrpc__response__free_unpacked(resp, NULL);
	close(sv[0]);
	ttrpc_server_destroy(s);
	return 0;
}
