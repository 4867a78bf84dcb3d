// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ttrpc server over socketpairs and a real Unix socket, driven one
 * poll round at a time: real requests for containerd's Task service (its
 * generated descriptor), and the peers that must not hurt it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "shim/ttrpc_frame.h"
#include "shim/ttrpc_server.h"
#include "task_shim.pb-c.h"
#include "ttrpc.pb-c.h"

#define TASK "containerd.task.v2.Task"

static struct ttrpc_token deferred;
static int n_deferred;
static char seen_ns[64];

static void h_state(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__StateRequest *req =
		(const Containerd__Task__V2__StateRequest *)call->request;
	Containerd__Task__V2__StateResponse resp =
		CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
	const char *ns =
		ttrpc_call_metadata(call, "containerd-namespace-ttrpc");

	snprintf(seen_ns, sizeof(seen_ns), "%s", ns ? ns : "");
	resp.id = req->id;
	resp.pid = 42;
	assert_int_equal(ttrpc_call_reply(call, &resp.base), 0);
	/* One answer per call. */
	assert_int_equal(ttrpc_call_reply(call, &resp.base), -EALREADY);
}

/* Wait answers when the task exits: later, through a token. */
static void h_wait(void *opaque, struct ttrpc_call *call)
{
	deferred = ttrpc_call_defer(call);
	n_deferred++;
}

/* A handler bug: no answer at all. */
static void h_pids(void *opaque, struct ttrpc_call *call)
{
}

/* A handler bug: an answer of the wrong type. */
static void h_kill(void *opaque, struct ttrpc_call *call)
{
	Containerd__Task__V2__StateResponse resp =
		CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;

	ttrpc_call_reply(call, &resp.base);
}

/* Big answers, for a peer that does not read them. */
static void h_stats(void *opaque, struct ttrpc_call *call)
{
	static uint8_t blob[256 << 10];
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	Containerd__Task__V2__StatsResponse resp =
		CONTAINERD__TASK__V2__STATS_RESPONSE__INIT;

	any.type_url = "x";
	any.value.data = blob;
	any.value.len = sizeof(blob);
	resp.stats = &any;
	ttrpc_call_reply(call, &resp.base);
}

static ttrpc_handler_fn handlers[32];
static struct ttrpc_service service;

static void set_handler(const char *method, ttrpc_handler_fn fn)
{
	const ProtobufCMethodDescriptor *m =
		protobuf_c_service_descriptor_get_method_by_name(
			&containerd__task__v2__task__descriptor, method);

	assert_non_null(m);
	handlers[m - containerd__task__v2__task__descriptor.methods] = fn;
}

static struct ttrpc_server *new_server(unsigned int max_conns,
				       unsigned int stall_ms)
{
	struct ttrpc_server_config cfg = { .services = &service,
					   .n_services = 1,
					   .max_conns = max_conns,
					   .stall_ms = stall_ms };
	struct ttrpc_server *s;

	memset(handlers, 0, sizeof(handlers));
	set_handler("State", h_state);
	set_handler("Wait", h_wait);
	set_handler("Pids", h_pids);
	set_handler("Kill", h_kill);
	set_handler("Stats", h_stats);
	service = (struct ttrpc_service){
		.desc = &containerd__task__v2__task__descriptor,
		.handlers = handlers,
		.n_handlers = containerd__task__v2__task__descriptor.n_methods,
	};
	s = ttrpc_server_create(&cfg);
	assert_non_null(s);
	return s;
}

/* A connected client end; the other end goes to the server. */
static int connect_pair(struct ttrpc_server *s)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
			 0);
	assert_int_equal(ttrpc_server_add_conn(s, sv[1]), 0);
	return sv[0];
}

static void pump(struct ttrpc_server *s, int rounds)
{
	while (rounds--)
		assert_int_equal(ttrpc_server_poll(s, 0), 0);
}

static void send_all(int fd, const void *buf, size_t len)
{
	assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void send_frame(int fd, uint32_t id, uint8_t type, uint8_t flags,
		       const void *data, size_t len)
{
	struct ttrpc_header h = { (uint32_t)len, id, type, flags };
	uint8_t hdr[TTRPC_HEADER_LEN];

	ttrpc_header_encode(&h, hdr);
	send_all(fd, hdr, sizeof(hdr));
	if (len)
		send_all(fd, data, len);
}

/* A Request envelope for SERVICE/METHOD with a raw PAYLOAD; malloc'd. */
static uint8_t *request(const char *svc, const char *method,
			const void *payload, size_t len, size_t *out_len)
{
	Hintvm__Ttrpc__Request req = HINTVM__TTRPC__REQUEST__INIT;
	Hintvm__Ttrpc__KeyValue kv = HINTVM__TTRPC__KEY_VALUE__INIT,
				*md[1] = { &kv };
	uint8_t *buf;

	req.service = (char *)svc;
	req.method = (char *)method;
	req.payload.data = (uint8_t *)payload;
	req.payload.len = len;
	req.timeout_nano = 1000000000;
	kv.key = "containerd-namespace-ttrpc";
	kv.value = "k8s.io";
	req.metadata = md;
	req.n_metadata = 1;
	*out_len = hintvm__ttrpc__request__get_packed_size(&req);
	buf = malloc(*out_len + 1);
	assert_non_null(buf);
	hintvm__ttrpc__request__pack(&req, buf);
	return buf;
}

static void send_request(int fd, uint32_t id, const char *svc,
			 const char *method, const void *payload, size_t len)
{
	size_t n;
	uint8_t *buf = request(svc, method, payload, len, &n);

	send_frame(fd, id, TTRPC_MSG_REQUEST, 0, buf, n);
	free(buf);
}

static void send_state(int fd, uint32_t id, const char *task_id)
{
	Containerd__Task__V2__StateRequest req =
		CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
	uint8_t buf[128];
	size_t n;

	req.id = (char *)task_id;
	n = containerd__task__v2__state_request__pack(&req, buf);
	send_request(fd, id, TASK, "State", buf, n);
}

static void read_exact(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, 2000), 1);
		n = read(fd, (uint8_t *)buf + got, len - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
}

/* Reads one Response frame; returns it unpacked (free it). */
static Hintvm__Ttrpc__Response *read_response(int fd, uint32_t want_id)
{
	uint8_t hdr[TTRPC_HEADER_LEN], *data;
	struct ttrpc_header h;
	Hintvm__Ttrpc__Response *resp;

	read_exact(fd, hdr, sizeof(hdr));
	assert_int_equal(ttrpc_header_decode(hdr, &h), 0);
	assert_int_equal(h.type, TTRPC_MSG_RESPONSE);
	assert_int_equal(h.flags, 0);
	assert_int_equal(h.stream_id, want_id);
	data = malloc(h.length + 1);
	assert_non_null(data);
	read_exact(fd, data, h.length);
	resp = hintvm__ttrpc__response__unpack(NULL, h.length, data);
	free(data);
	assert_non_null(resp);
	assert_non_null(resp->status);
	return resp;
}

static void expect_status(int fd, uint32_t id, int code, const char *in_msg)
{
	Hintvm__Ttrpc__Response *resp = read_response(fd, id);

	if (resp->status->code != code)
		fail_msg("stream %u: status %d (%s), wanted %d", id,
			 resp->status->code, resp->status->message, code);
	if (in_msg && !strstr(resp->status->message, in_msg))
		fail_msg("status message '%s' lacks '%s'",
			 resp->status->message, in_msg);
	hintvm__ttrpc__response__free_unpacked(resp, NULL);
}

static void expect_state(int fd, uint32_t id, const char *task_id)
{
	Hintvm__Ttrpc__Response *resp = read_response(fd, id);
	Containerd__Task__V2__StateResponse *st;

	assert_int_equal(resp->status->code, GOOGLE__RPC__CODE__OK);
	st = containerd__task__v2__state_response__unpack(
		NULL, resp->payload.len, resp->payload.data);
	assert_non_null(st);
	assert_string_equal(st->id, task_id);
	assert_int_equal(st->pid, 42);
	containerd__task__v2__state_response__free_unpacked(st, NULL);
	hintvm__ttrpc__response__free_unpacked(resp, NULL);
}

/* The peer's end reads EOF: the server closed the connection. */
static void expect_closed(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t b;

	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_int_equal(read(fd, &b, 1), 0);
}

static void test_state_round_trip(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s);

	seen_ns[0] = 0;
	send_state(fd, 1, "task-1");
	pump(s, 1);
	expect_state(fd, 1, "task-1");
	assert_string_equal(seen_ns, "k8s.io");
	/* Stream ids are the client's: any odd one is answered on itself. */
	send_state(fd, 0xffffffff, "task-2");
	pump(s, 1);
	expect_state(fd, 0xffffffff, "task-2");
	close(fd);
	ttrpc_server_destroy(s);
}

static void test_unimplemented(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s);

	send_request(fd, 1, TASK, "Frobnicate", NULL, 0);
	send_request(fd, 3, "containerd.task.v3.Task", "State", NULL, 0);
	/* A method of the service that has no handler (yet). */
	send_request(fd, 5, TASK, "Checkpoint", NULL, 0);
	pump(s, 1);
	expect_status(fd, 1, GOOGLE__RPC__CODE__UNIMPLEMENTED, "Frobnicate");
	expect_status(fd, 3, GOOGLE__RPC__CODE__UNIMPLEMENTED,
		      "containerd.task.v3.Task");
	expect_status(fd, 5, GOOGLE__RPC__CODE__UNIMPLEMENTED, "Checkpoint");
	/* Still serving. */
	send_state(fd, 7, "t");
	pump(s, 1);
	expect_state(fd, 7, "t");
	close(fd);
	ttrpc_server_destroy(s);
}

static void test_invalid_argument(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s);
	/* Field 1 as a length-delimited string longer than what follows. */
	const uint8_t garbage[] = { 0x0a, 0x7f, 'x' };
	const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	send_request(fd, 1, TASK, "State", garbage, sizeof(garbage));
	/* The envelope itself undecodable. */
	send_frame(fd, 3, TTRPC_MSG_REQUEST, 0, junk, sizeof(junk));
	/* Client streams are odd. */
	send_state(fd, 4, "t");
	pump(s, 1);
	expect_status(fd, 1, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
		      "StateRequest");
	expect_status(fd, 3, GOOGLE__RPC__CODE__INVALID_ARGUMENT, "request");
	expect_status(fd, 4, GOOGLE__RPC__CODE__INVALID_ARGUMENT, "odd");
	send_state(fd, 5, "t");
	pump(s, 1);
	expect_state(fd, 5, "t");
	close(fd);
	ttrpc_server_destroy(s);
}

/* An oversized frame: the peer is told why and hung up on; another
 * connection is served all along. */
static void test_oversized_closes_one(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int a = connect_pair(s), b = connect_pair(s);
	struct ttrpc_header h = { TTRPC_MAX_DATA + 1, 9, TTRPC_MSG_REQUEST, 0 };
	uint8_t hdr[TTRPC_HEADER_LEN];

	ttrpc_header_encode(&h, hdr);
	send_all(a, hdr, sizeof(hdr));
	send_state(b, 1, "b");
	pump(s, 1);
	expect_status(a, 9, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED, "exceeds");
	expect_closed(a);
	expect_state(b, 1, "b");
	assert_int_equal(ttrpc_server_conn_count(s), 1);
	send_state(b, 3, "b");
	pump(s, 1);
	expect_state(b, 3, "b");
	close(a);
	close(b);
	ttrpc_server_destroy(s);
}

/* Types a client must not send close its connection; data frames (ttrpc
 * >= 1.2 streams, none served here) are dropped. */
static void test_message_types(void **state)
{
	const uint8_t bad[] = { 0, TTRPC_MSG_RESPONSE, 4, 0xff };
	struct ttrpc_server *s = new_server(0, 0);
	int keep = connect_pair(s);

	for (size_t i = 0; i < sizeof(bad); i++) {
		int fd = connect_pair(s);

		send_frame(fd, 1, bad[i], 0, "abc", 3);
		pump(s, 1);
		expect_closed(fd);
		close(fd);
	}
	send_frame(keep, 1, TTRPC_MSG_DATA, TTRPC_FLAG_REMOTE_CLOSED, "abc", 3);
	/* A streaming request is refused on its stream. */
	send_frame(keep, 3, TTRPC_MSG_REQUEST, TTRPC_FLAG_REMOTE_OPEN, "", 0);
	send_state(keep, 5, "k");
	pump(s, 1);
	expect_status(keep, 3, GOOGLE__RPC__CODE__UNIMPLEMENTED, "streaming");
	expect_state(keep, 5, "k");
	assert_int_equal(ttrpc_server_conn_count(s), 1);
	close(keep);
	ttrpc_server_destroy(s);
}

/* A request in pieces across many reads and poll rounds. */
static void test_partial_reads(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s);
	Containerd__Task__V2__StateRequest req =
		CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
	uint8_t payload[64], frame[256], *env;
	struct ttrpc_header h;
	size_t n, len;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	req.id = "slow";
	n = containerd__task__v2__state_request__pack(&req, payload);
	env = request(TASK, "State", payload, n, &len);
	h = (struct ttrpc_header){ (uint32_t)len, 11, TTRPC_MSG_REQUEST, 0 };
	ttrpc_header_encode(&h, frame);
	memcpy(frame + TTRPC_HEADER_LEN, env, len);
	free(env);
	/* The frame and the first 3 bytes of the next one, byte by byte. */
	for (size_t i = 0; i < TTRPC_HEADER_LEN + len; i++) {
		send_all(fd, frame + i, 1);
		pump(s, 1);
		if (i + 1 < TTRPC_HEADER_LEN + len)
			assert_int_equal(poll(&p, 1, 0), 0);
	}
	expect_state(fd, 11, "slow");
	/* Two whole frames in one write, then a split one. */
	h.stream_id = 13;
	ttrpc_header_encode(&h, frame);
	memcpy(frame + TTRPC_HEADER_LEN + len, frame, TTRPC_HEADER_LEN + len);
	frame[TTRPC_HEADER_LEN + len + 7] = 15; /* stream 15 */
	send_all(fd, frame, 2 * (TTRPC_HEADER_LEN + len) - 5);
	pump(s, 1);
	expect_state(fd, 13, "slow");
	assert_int_equal(poll(&p, 1, 0), 0);
	send_all(fd, frame + 2 * (TTRPC_HEADER_LEN + len) - 5, 5);
	pump(s, 1);
	expect_state(fd, 15, "slow");
	close(fd);
	ttrpc_server_destroy(s);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* A peer that stops mid-frame, and one that never reads its (big)
 * answers, are closed after stall_ms; another peer is served meanwhile. */
static void test_stalled_peers(void **state)
{
	struct ttrpc_server *s = new_server(0, 100);
	int half = connect_pair(s), deaf = connect_pair(s),
	    good = connect_pair(s);
	uint8_t hdr[5] = { 0, 0, 0, 20, 0 };
	int small = 4096;

	assert_int_equal(
		setsockopt(deaf, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)),
		0);
	send_all(half, hdr, sizeof(hdr));
	/* 10 requests for 256 KiB each: far more than the socket holds,
	 * less than the output bound, so only the stall can close it. */
	for (uint32_t i = 0; i < 10; i++)
		send_request(deaf, 2 * i + 1, TASK, "Stats", NULL, 0);
	for (int round = 0; round < 20; round++) {
		pump(s, 1);
		send_state(good, 2 * (uint32_t)round + 1, "g");
		pump(s, 1);
		expect_state(good, 2 * (uint32_t)round + 1, "g");
		sleep_ms(10);
	}
	/* 200 ms and more have passed with neither making progress. */
	pump(s, 1);
	assert_int_equal(ttrpc_server_conn_count(s), 1);
	expect_closed(half);
	close(half);
	close(deaf);
	close(good);
	ttrpc_server_destroy(s);
}

/* A peer that sends requests whose answers pass TTRPC_OUT_MAX without
 * reading is closed at once, not buffered for. */
static void test_deaf_peer_overflow(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int deaf = connect_pair(s), good = connect_pair(s);

	/* 40 x 256 KiB: 10 MiB of answers, over the 8 MiB bound. */
	for (uint32_t i = 0; i < 40; i++)
		send_request(deaf, 2 * i + 1, TASK, "Stats", NULL, 0);
	pump(s, 1);
	assert_int_equal(ttrpc_server_conn_count(s), 1);
	send_state(good, 1, "g");
	pump(s, 1);
	expect_state(good, 1, "g");
	close(deaf);
	close(good);
	ttrpc_server_destroy(s);
}

/* Wait's answer comes later through a token; a token whose connection
 * has closed reaches nobody. */
static void test_deferred(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s), other;
	Containerd__Task__V2__WaitRequest wreq =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Containerd__Task__V2__WaitResponse wresp =
		CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
	Hintvm__Ttrpc__Response *resp;
	Containerd__Task__V2__WaitResponse *w;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t buf[64];
	size_t n;

	n_deferred = 0;
	wreq.id = "t";
	n = containerd__task__v2__wait_request__pack(&wreq, buf);
	send_request(fd, 1, TASK, "Wait", buf, n);
	send_state(fd, 3, "t");
	pump(s, 1);
	assert_int_equal(n_deferred, 1);
	/* Later requests are answered while Wait waits. */
	expect_state(fd, 3, "t");
	assert_int_equal(poll(&p, 1, 0), 0);
	wresp.exit_status = 137;
	assert_int_equal(ttrpc_server_reply(s, &deferred, &wresp.base), 0);
	resp = read_response(fd, 1);
	assert_int_equal(resp->status->code, GOOGLE__RPC__CODE__OK);
	w = containerd__task__v2__wait_response__unpack(NULL, resp->payload.len,
							resp->payload.data);
	assert_non_null(w);
	assert_int_equal(w->exit_status, 137);
	containerd__task__v2__wait_response__free_unpacked(w, NULL);
	hintvm__ttrpc__response__free_unpacked(resp, NULL);

	/* The waiter hangs up; a new peer takes its slot. */
	send_request(fd, 5, TASK, "Wait", buf, n);
	pump(s, 1);
	assert_int_equal(n_deferred, 2);
	close(fd);
	pump(s, 1);
	other = connect_pair(s);
	assert_int_equal(ttrpc_server_reply(s, &deferred, &wresp.base),
			 -ENOTCONN);
	assert_int_equal(ttrpc_server_error(s, &deferred,
					    GOOGLE__RPC__CODE__NOT_FOUND, "x"),
			 -ENOTCONN);
	p.fd = other;
	assert_int_equal(poll(&p, 1, 0), 0);
	close(other);
	ttrpc_server_destroy(s);
}

/* Handler bugs become INTERNAL for their caller, nothing worse. */
static void test_handler_bugs(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s);

	send_request(fd, 1, TASK, "Pids", NULL, 0);
	send_request(fd, 3, TASK, "Kill", NULL, 0);
	pump(s, 1);
	expect_status(fd, 1, GOOGLE__RPC__CODE__INTERNAL, "no answer");
	expect_status(fd, 3, GOOGLE__RPC__CODE__INTERNAL, "wrong response");
	close(fd);
	ttrpc_server_destroy(s);
}

/* A real socket: the connection bound holds, and those beyond it are
 * accepted and closed rather than left in the backlog. */
static void test_listen_max_conns(void **state)
{
	char dir[] = "/tmp/ttrpc-test.XXXXXX", path[64];
	struct ttrpc_server *s = new_server(2, 0);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int fds[3];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/shim.sock", dir);
	assert_int_equal(ttrpc_server_listen(s, path), 0);
	assert_int_equal(ttrpc_server_listen(s, path), -EBUSY);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	for (int i = 0; i < 3; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_int_equal(
			connect(fds[i], (struct sockaddr *)&addr, sizeof(addr)),
			0);
		pump(s, 1);
	}
	assert_int_equal(ttrpc_server_conn_count(s), 2);
	expect_closed(fds[2]);
	for (int i = 0; i < 2; i++) {
		send_state(fds[i], 1, "l");
		pump(s, 1);
		expect_state(fds[i], 1, "l");
	}
	{
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		assert_int_equal(ttrpc_server_add_conn(s, sv[1]), -EMFILE);
		expect_closed(sv[0]);
		close(sv[0]);
	}
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	ttrpc_server_destroy(s);
	unlink(path);
	rmdir(dir);
}

/* accept(2) failing for want of fds (EMFILE) leaves the listener
 * readable: the server rests it rather than spin, and accepts the peer
 * once fds are free again. */
static void test_accept_emfile(void **state)
{
	char dir[] = "/tmp/ttrpc-test.XXXXXX", path[64];
	struct ttrpc_server *s = new_server(0, 0);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct rlimit old, low;
	struct timespec t0, t1;
	int fd, lowest;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/shim.sock", dir);
	assert_int_equal(ttrpc_server_listen(s, path), 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)),
			 0);
	/* Every fd below the lowest free one is in use: allow no more. */
	lowest = dup(0);
	assert_true(lowest >= 0);
	close(lowest);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)lowest;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	pump(s, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ttrpc_server_poll(s, 50), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	/* The pending peer did not wake it: it waited its 50 ms out. */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 +
			    (t1.tv_nsec - t0.tv_nsec) / 1000000 >=
		    40);
	assert_int_equal(ttrpc_server_conn_count(s), 0);
	sleep_ms(120);
	pump(s, 1);
	assert_int_equal(ttrpc_server_conn_count(s), 1);
	send_state(fd, 1, "e");
	pump(s, 1);
	expect_state(fd, 1, "e");
	close(fd);
	ttrpc_server_destroy(s);
	unlink(path);
	rmdir(dir);
}

/* A VMM's exit, as the shim will see it: a watched fd turns readable,
 * its callback answers the deferred Wait and unwatches the fd. */
static struct ttrpc_server *watch_server;
static int watch_calls;

static void on_exit_fd(void *opaque, int fd, short revents)
{
	Containerd__Task__V2__WaitResponse w =
		CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;

	watch_calls++;
	assert_true(revents & POLLIN);
	w.exit_status = 137;
	assert_int_equal(ttrpc_server_reply(watch_server, &deferred, &w.base),
			 0);
	assert_int_equal(ttrpc_server_unwatch(watch_server, fd), 0);
}

static void test_watch(void **state)
{
	struct ttrpc_server *s = new_server(0, 0);
	int fd = connect_pair(s), pipefd[2], dups[TTRPC_MAX_WATCHES];
	Containerd__Task__V2__WaitRequest wreq =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Hintvm__Ttrpc__Response *resp;
	uint8_t buf[64];
	size_t n;

	watch_server = s;
	watch_calls = 0;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(
		ttrpc_server_watch(s, pipefd[0], POLLIN, on_exit_fd, NULL), 0);
	assert_int_equal(
		ttrpc_server_watch(s, pipefd[0], POLLIN, on_exit_fd, NULL),
		-EEXIST);
	wreq.id = "t";
	n = containerd__task__v2__wait_request__pack(&wreq, buf);
	send_request(fd, 1, TASK, "Wait", buf, n);
	pump(s, 2);
	assert_int_equal(watch_calls, 0);
	assert_int_equal(write(pipefd[1], "x", 1), 1);
	pump(s, 1);
	assert_int_equal(watch_calls, 1);
	resp = read_response(fd, 1);
	assert_int_equal(resp->status->code, GOOGLE__RPC__CODE__OK);
	hintvm__ttrpc__response__free_unpacked(resp, NULL);
	/* Unwatched: the still readable pipe calls nobody. */
	pump(s, 2);
	assert_int_equal(watch_calls, 1);
	assert_int_equal(ttrpc_server_unwatch(s, pipefd[0]), -ENOENT);
	/* The bound. */
	for (int i = 0; i < TTRPC_MAX_WATCHES; i++) {
		dups[i] = dup(pipefd[1]);
		assert_int_equal(ttrpc_server_watch(s, dups[i], POLLOUT,
						    on_exit_fd, NULL),
				 0);
	}
	assert_int_equal(
		ttrpc_server_watch(s, pipefd[0], POLLIN, on_exit_fd, NULL),
		-ENOSPC);
	for (int i = 0; i < TTRPC_MAX_WATCHES; i++) {
		assert_int_equal(ttrpc_server_unwatch(s, dups[i]), 0);
		close(dups[i]);
	}
	close(pipefd[0]);
	close(pipefd[1]);
	close(fd);
	ttrpc_server_destroy(s);
}

static void test_bad_config(void **state)
{
	ProtobufCServiceDescriptor fake = { .magic = 0 };
	struct ttrpc_service svc = { .desc = &fake };
	struct ttrpc_server_config cfg = { .services = &svc, .n_services = 1 };

	assert_null(ttrpc_server_create(&cfg));
	svc.desc = &containerd__task__v2__task__descriptor;
	svc.n_handlers = containerd__task__v2__task__descriptor.n_methods + 1;
	assert_null(ttrpc_server_create(&cfg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_unimplemented),
		cmocka_unit_test(test_invalid_argument),
		cmocka_unit_test(test_oversized_closes_one),
		cmocka_unit_test(test_message_types),
		cmocka_unit_test(test_partial_reads),
		cmocka_unit_test(test_stalled_peers),
		cmocka_unit_test(test_deaf_peer_overflow),
		cmocka_unit_test(test_deferred),
		cmocka_unit_test(test_handler_bugs),
		cmocka_unit_test(test_listen_max_conns),
		cmocka_unit_test(test_accept_emfile),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
