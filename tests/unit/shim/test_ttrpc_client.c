// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ttrpc client: a TaskExit event forwarded to containerd's events
 * service (served here by our own server on a real socket, in a thread),
 * and servers that answer late, wrongly or not at all.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "events_task.pb-c.h"
#include "events_ttrpc.pb-c.h"
#include "pb_empty.pb-c.h"
#include "shim/ttrpc_client.h"
#include "shim/ttrpc_server.h"
#include "ttrpc.pb-c.h"

#define EVENTS "containerd.services.events.ttrpc.v1.Events"

static char seen_topic[64];
static uint32_t seen_status;
static atomic_bool stop;

/* What containerd's events service would do with a Forward: take it. */
static void h_forward(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Services__Events__Ttrpc__V1__ForwardRequest *req =
		(const void *)call->request;
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	Containerd__Events__TaskExit *exit;

	snprintf(seen_topic, sizeof(seen_topic), "%s", req->envelope->topic);
	exit = containerd__events__task_exit__unpack(
		NULL, req->envelope->event->value.len,
		req->envelope->event->value.data);
	seen_status = exit ? exit->exit_status : 0;
	if (exit)
		containerd__events__task_exit__free_unpacked(exit, NULL);
	ttrpc_call_reply(call, &empty.base);
}

static void *serve(void *arg)
{
	/* No cmocka asserts off the main thread. */
	while (!atomic_load(&stop))
		if (ttrpc_server_poll(arg, 10) < 0)
			break;
	return NULL;
}

static void test_forward_event(void **state)
{
	const ProtobufCServiceDescriptor *d =
		&containerd__services__events__ttrpc__v1__events__descriptor;
	ttrpc_handler_fn handlers[4] = { 0 };
	struct ttrpc_service svc = { .desc = d,
				     .handlers = handlers,
				     .n_handlers = d->n_methods };
	struct ttrpc_server_config cfg = { .services = &svc, .n_services = 1 };
	char dir[] = "/tmp/ttrpc-client.XXXXXX", path[64];
	Containerd__Events__TaskExit exit = CONTAINERD__EVENTS__TASK_EXIT__INIT;
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	Containerd__Services__Events__Ttrpc__V1__Envelope env =
		CONTAINERD__SERVICES__EVENTS__TTRPC__V1__ENVELOPE__INIT;
	Containerd__Services__Events__Ttrpc__V1__ForwardRequest req =
		CONTAINERD__SERVICES__EVENTS__TTRPC__V1__FORWARD_REQUEST__INIT;
	struct ttrpc_client c;
	struct ttrpc_status st;
	struct ttrpc_server *s;
	ProtobufCMessage *resp;
	uint8_t packed[128];
	pthread_t t;

	assert_true(d->n_methods <= 4);
	handlers[protobuf_c_service_descriptor_get_method_by_name(d,
								  "Forward") -
		 d->methods] = h_forward;
	s = ttrpc_server_create(&cfg);
	assert_non_null(s);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.sock", dir);
	assert_int_equal(ttrpc_server_listen(s, path), 0);
	atomic_store(&stop, false);
	assert_int_equal(pthread_create(&t, NULL, serve, s), 0);

	exit.container_id = "c1";
	exit.id = "c1";
	exit.pid = 7;
	exit.exit_status = 137;
	any.type_url = "containerd.events.TaskExit";
	any.value.data = packed;
	any.value.len = containerd__events__task_exit__pack(&exit, packed);
	env.namespace_ = "k8s.io";
	env.topic = "/tasks/exit";
	env.event = &any;
	req.envelope = &env;

	assert_int_equal(ttrpc_client_connect(&c, path, 1000), 0);
	assert_int_equal(ttrpc_client_call(&c, EVENTS, "Forward", &req.base,
					   &google__protobuf__empty__descriptor,
					   &resp, &st, 1000),
			 0);
	assert_int_equal(st.code, GOOGLE__RPC__CODE__OK);
	assert_non_null(resp);
	protobuf_c_message_free_unpacked(resp, NULL);
	assert_string_equal(seen_topic, "/tasks/exit");
	assert_int_equal(seen_status, 137);
	/* An error status is an answer, and the connection stays usable. */
	assert_int_equal(ttrpc_client_call(&c, EVENTS, "Publish", &req.base,
					   &google__protobuf__empty__descriptor,
					   &resp, &st, 1000),
			 0);
	assert_int_equal(st.code, GOOGLE__RPC__CODE__UNIMPLEMENTED);
	assert_null(resp);
	assert_int_equal(ttrpc_client_call(&c, EVENTS, "Forward", &req.base,
					   &google__protobuf__empty__descriptor,
					   &resp, &st, 1000),
			 0);
	protobuf_c_message_free_unpacked(resp, NULL);
	assert_int_equal(c.next_stream, 7);
	ttrpc_client_close(&c);

	atomic_store(&stop, true);
	pthread_join(t, NULL);
	ttrpc_server_destroy(s);
	unlink(path);
	rmdir(dir);
	assert_int_equal(ttrpc_client_connect(&c, path, 100), -ENOENT);
}

/* A server that wrote ANSWER (a frame) before the call reads it. */
static int fake_call(const void *answer, size_t len, int close_after,
		     int timeout_ms, struct ttrpc_client *c)
{
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	struct ttrpc_status st;
	ProtobufCMessage *resp = NULL;
	int sv[2], r;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ttrpc_client_adopt(c, sv[0]);
	if (len)
		assert_int_equal(write(sv[1], answer, len), (ssize_t)len);
	/* The server stops writing; it still takes the request. */
	if (close_after)
		shutdown(sv[1], SHUT_WR);
	r = ttrpc_client_call(c, EVENTS, "Forward", &empty.base,
			      &google__protobuf__empty__descriptor, &resp, &st,
			      timeout_ms);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	close(sv[1]);
	ttrpc_client_close(c);
	return r;
}

static size_t response_frame(uint8_t *buf, uint32_t id, uint8_t type)
{
	Google__Rpc__Status status = GOOGLE__RPC__STATUS__INIT;
	Hintvm__Ttrpc__Response resp = HINTVM__TTRPC__RESPONSE__INIT;
	struct ttrpc_header h = { 0, id, type, 0 };

	resp.status = &status;
	h.length = (uint32_t)hintvm__ttrpc__response__pack(
		&resp, buf + TTRPC_HEADER_LEN);
	ttrpc_header_encode(&h, buf);
	return TTRPC_HEADER_LEN + h.length;
}

static void test_bad_servers(void **state)
{
	struct ttrpc_client c;
	uint8_t buf[64];
	size_t n;

	/* The right answer, written early. */
	n = response_frame(buf, 1, TTRPC_MSG_RESPONSE);
	assert_int_equal(fake_call(buf, n, 0, 1000, &c), 0);
	/* Another stream's answer, a request, a data frame. */
	n = response_frame(buf, 3, TTRPC_MSG_RESPONSE);
	assert_int_equal(fake_call(buf, n, 0, 1000, &c), -EPROTO);
	n = response_frame(buf, 1, TTRPC_MSG_REQUEST);
	assert_int_equal(fake_call(buf, n, 0, 1000, &c), -EPROTO);
	n = response_frame(buf, 1, TTRPC_MSG_DATA);
	assert_int_equal(fake_call(buf, n, 0, 1000, &c), -EPROTO);
	/* An answer with bytes after it: nothing else was asked. */
	n = response_frame(buf, 1, TTRPC_MSG_RESPONSE);
	buf[n++] = 0;
	assert_int_equal(fake_call(buf, n, 0, 1000, &c), -EPROTO);
	/* An oversized header. */
	memset(buf, 0xff, TTRPC_HEADER_LEN);
	assert_int_equal(fake_call(buf, TTRPC_HEADER_LEN, 0, 1000, &c),
			 -EMSGSIZE);
	/* A body that is no Response. */
	{
		struct ttrpc_header h = { 2, 1, TTRPC_MSG_RESPONSE, 0 };

		ttrpc_header_encode(&h, buf);
		buf[10] = 0x0a;
		buf[11] = 0x7f;
		assert_int_equal(fake_call(buf, 12, 0, 1000, &c), -EBADMSG);
	}
	/* Half an answer, then the server goes away. */
	n = response_frame(buf, 1, TTRPC_MSG_RESPONSE);
	assert_int_equal(fake_call(buf, n - 1, 1, 1000, &c), -ECONNRESET);
	/* No answer at all: the deadline. */
	assert_int_equal(fake_call(NULL, 0, 0, 50, &c), -ETIMEDOUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_event),
		cmocka_unit_test(test_bad_servers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
