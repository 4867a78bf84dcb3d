// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The shim's Task service (src/shim/task.c) as a hostile or confused peer
 * sees it, over a socketpair into its ttrpc server: requests for a task
 * that is not there, Creates with bad ids, paths, terminals, checkpoints
 * and stdio that cannot be opened, signals out of range, exec ids, and
 * garbage payloads for every method. Each gets an error status naming the
 * value, and the shim answers the next request as before. A forked child
 * stands in for the VMM process to follow Kill, Wait and Delete through
 * an exit without booting a VM.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "abi/agent_proto.h"
#include "agent/agent_client.h"
#include "events_ttrpc.pb-c.h"
#include "pb_empty.pb-c.h"
#include "runtime/runtime.h"
#include "runtime/state.h"
#include "shim/shim.h"
#include "shim/ttrpc_frame.h"
#include "task_shim.pb-c.h"
#include "ttrpc.pb-c.h"

#define TASK "containerd.task.v2.Task"

struct rt_globals rt = { .root = "/nonexistent" };

static struct shim shim;
static struct ttrpc_service svc;
static int peer = -1;
static uint32_t next_id = 1;
static char tmpdir[64];

static int setup(void **state)
{
	struct ttrpc_server_config cfg = { .services = &svc, .n_services = 1 };
	int sv[2];

	(void)state;
	memset(&shim, 0, sizeof(shim));
	shim_task_reset(&shim.task);
	shim_events_init(&shim.events, NULL, "default");
	svc = shim_task_service(&shim);
	assert_non_null(svc.desc);
	shim.server = ttrpc_server_create(&cfg);
	assert_non_null(shim.server);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
			 0);
	assert_int_equal(ttrpc_server_add_conn(shim.server, sv[1]), 0);
	peer = sv[0];
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_task.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	rt.root = tmpdir;
	return 0;
}

static void events_stop(void);

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	events_stop(); /* a test that failed left it running */
	close(peer);
	ttrpc_server_destroy(shim.server);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void send_frame(const void *data, size_t len, uint32_t id)
{
	struct ttrpc_header h = { (uint32_t)len, id, TTRPC_MSG_REQUEST, 0 };
	uint8_t hdr[TTRPC_HEADER_LEN];

	ttrpc_header_encode(&h, hdr);
	assert_int_equal(send(peer, hdr, sizeof(hdr), MSG_NOSIGNAL),
			 (ssize_t)sizeof(hdr));
	assert_int_equal(send(peer, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Sends METHOD with a raw PAYLOAD; returns the stream id. */
static uint32_t call_raw(const char *method, const void *payload, size_t len)
{
	Hintvm__Ttrpc__Request req = HINTVM__TTRPC__REQUEST__INIT;
	uint32_t id = next_id;
	uint8_t *buf;
	size_t n;

	next_id += 2;
	req.service = TASK;
	req.method = (char *)method;
	req.payload.data = (uint8_t *)payload;
	req.payload.len = len;
	n = hintvm__ttrpc__request__get_packed_size(&req);
	buf = malloc(n);
	assert_non_null(buf);
	hintvm__ttrpc__request__pack(&req, buf);
	send_frame(buf, n, id);
	free(buf);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ttrpc_server_poll(shim.server, 0), 0);
	return id;
}

static uint32_t call(const char *method, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n + 1);
	uint32_t id;

	assert_non_null(buf);
	protobuf_c_message_pack(m, buf);
	id = call_raw(method, buf, n);
	free(buf);
	return id;
}

static void read_exact(void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = peer, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, 5000), 1);
		n = read(peer, (uint8_t *)buf + got, len - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
}

static Hintvm__Ttrpc__Response *response(uint32_t id)
{
	uint8_t hdr[TTRPC_HEADER_LEN], *data;
	struct ttrpc_header h;
	Hintvm__Ttrpc__Response *r;

	read_exact(hdr, sizeof(hdr));
	assert_int_equal(ttrpc_header_decode(hdr, &h), 0);
	assert_int_equal(h.stream_id, id);
	data = malloc(h.length + 1);
	assert_non_null(data);
	read_exact(data, h.length);
	r = hintvm__ttrpc__response__unpack(NULL, h.length, data);
	free(data);
	assert_non_null(r);
	assert_non_null(r->status);
	return r;
}

/* The answer to stream ID has CODE and a message containing IN_MSG. */
static void expect(uint32_t id, int code, const char *in_msg)
{
	Hintvm__Ttrpc__Response *r = response(id);

	if (r->status->code != code)
		fail_msg("stream %u: status %d (%s), wanted %d", id,
			 r->status->code, r->status->message, code);
	if (in_msg && !strstr(r->status->message, in_msg))
		fail_msg("status message '%s' lacks '%s'", r->status->message,
			 in_msg);
	hintvm__ttrpc__response__free_unpacked(r, NULL);
}

/* The shim still answers: State of a task it does not have. */
static void expect_alive(void)
{
	Containerd__Task__V2__StateRequest st =
		CONTAINERD__TASK__V2__STATE_REQUEST__INIT;

	st.id = "still-there";
	expect(call("State", &st.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "still-there");
}

static void test_no_task(void **state)
{
	Containerd__Task__V2__StartRequest start =
		CONTAINERD__TASK__V2__START_REQUEST__INIT;
	Containerd__Task__V2__KillRequest kill_req =
		CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
	Containerd__Task__V2__WaitRequest wait =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Containerd__Task__V2__DeleteRequest del =
		CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
	Containerd__Task__V2__PidsRequest pids =
		CONTAINERD__TASK__V2__PIDS_REQUEST__INIT;
	Containerd__Task__V2__PauseRequest pause =
		CONTAINERD__TASK__V2__PAUSE_REQUEST__INIT;
	Containerd__Task__V2__ConnectRequest conn =
		CONTAINERD__TASK__V2__CONNECT_REQUEST__INIT;
	Containerd__Task__V2__StatsRequest stats =
		CONTAINERD__TASK__V2__STATS_REQUEST__INIT;

	(void)state;
	start.id = kill_req.id = wait.id = del.id = pids.id = pause.id =
		stats.id = "nope";
	kill_req.signal = SIGTERM;
	expect(call("Start", &start.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "task \"nope\": not found (this shim has no task)");
	expect(call("Kill", &kill_req.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "nope");
	expect(call("Wait", &wait.base), GOOGLE__RPC__CODE__NOT_FOUND, "nope");
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__NOT_FOUND, "nope");
	expect(call("Pids", &pids.base), GOOGLE__RPC__CODE__NOT_FOUND, "nope");
	expect(call("Pause", &pause.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "nope");
	expect(call("Stats", &stats.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "task \"nope\": not found");
	/* Connect needs no task: containerd asks it right after start. */
	expect(call("Connect", &conn.base), GOOGLE__RPC__CODE__OK, NULL);
	/* Not implemented, said so. */
	expect(call_raw("ResizePty", NULL, 0), GOOGLE__RPC__CODE__NOT_FOUND,
	       "task \"\": not found");
	expect(call_raw("Exec", NULL, 0), GOOGLE__RPC__CODE__NOT_FOUND,
	       "task \"\": not found");
	expect(call_raw("Stats", NULL, 0), GOOGLE__RPC__CODE__NOT_FOUND,
	       "task \"\": not found");
	expect(call_raw("Update", NULL, 0), GOOGLE__RPC__CODE__UNIMPLEMENTED,
	       "Update");
	expect(call_raw("Checkpoint", NULL, 0),
	       GOOGLE__RPC__CODE__UNIMPLEMENTED, "Checkpoint");
	expect_alive();
}

static void create_expect(Containerd__Task__V2__CreateTaskRequest *req,
			  int code, const char *in_msg)
{
	expect(call("Create", &req->base), code, in_msg);
	assert_false(shim.task.exists);
}

static void test_create_bad(void **state)
{
	Containerd__Task__V2__CreateTaskRequest req =
		CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
	Google__Protobuf__Any opts = GOOGLE__PROTOBUF__ANY__INIT;
	char long_id[RT_MAX_ID + 2], long_path[PATH_MAX + 8], fifo[128];

	(void)state;
	req.bundle = tmpdir;
	req.id = "";
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
		      "task id \"\": expected");
	req.id = "../escape";
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT, "../escape");
	req.id = ".hidden";
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT, ".hidden");
	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	req.id = long_id;
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT, "task id");

	req.id = "t1";
	req.bundle = "relative/bundle";
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
		      "bundle \"relative/bundle\": expected an absolute path");
	req.bundle = "";
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT, "bundle");
	req.bundle = tmpdir;

	/* Runtime options the shim does not honour are refused by name. */
	opts.type_url = "containerd.runc.v1.Options";
	req.options = &opts;
	create_expect(
		&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
		"task t1: runtime options of type \"containerd.runc.v1.Options\": expected none or runtimeoptions.v1.Options");
	req.options = NULL;

	/* A terminal task whose stdin cannot be opened: nothing is left
	 * of its console socket. */
	req.terminal = 1;
	req.stdin = "/nonexistent/stdin";
	create_expect(&req, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
		      "/nonexistent/stdin");
	assert_int_equal(shim.task.console.listen, -1);
	assert_int_equal(shim.task.console.in, -1);
	req.terminal = 0;
	req.stdin = "";
	req.checkpoint = "/some/checkpoint";
	create_expect(&req, GOOGLE__RPC__CODE__UNIMPLEMENTED, "checkpoint");
	req.checkpoint = "";

	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	req.stdout = long_path;
	create_expect(&req, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
		      "stdout: longer than");
	req.stdout = "binary:///usr/bin/logger";
	create_expect(&req, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
		      "binary:// is not implemented");
	/* A fifo nobody reads: an error now, never a shim blocked in open. */
	snprintf(fifo, sizeof(fifo), "%s/stdout", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	req.stdout = fifo;
	create_expect(&req, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
		      "no reader");
	req.stdout = "/nonexistent/dir/stdout";
	create_expect(&req, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
		      "/nonexistent/dir/stdout");
	expect_alive();
}

/* Every method with bytes that are no protobuf of its input type. */
static void test_garbage_payloads(void **state)
{
	const ProtobufCServiceDescriptor *d = svc.desc;
	uint8_t junk[64];
	uint32_t x = 12345;

	(void)state;
	for (unsigned int m = 0; m < d->n_methods; m++) {
		for (int round = 0; round < 8; round++) {
			Hintvm__Ttrpc__Response *r;
			uint32_t id;

			for (size_t i = 0; i < sizeof(junk); i++) {
				x = x * 1103515245u + 12345u;
				junk[i] = (uint8_t)(x >> 16);
			}
			/* A field 1 of wire type 7 (invalid) first, then
			 * noise of a length that varies. */
			junk[0] = 0x0f;
			id = call_raw(d->methods[m].name, junk,
				      8 + (size_t)round * 7);
			r = response(id);
			assert_int_not_equal(r->status->code,
					     GOOGLE__RPC__CODE__OK);
			hintvm__ttrpc__response__free_unpacked(r, NULL);
		}
	}
	assert_false(shim.task.exists);
	expect_alive();
}

/* A stand-in for a created and started task whose VMM is CHILD. */
static void fake_task(pid_t child)
{
	struct shim_task *t = &shim.task;

	shim_task_reset(t);
	t->exists = true;
	t->started = true;
	t->pid = child;
	snprintf(t->id, sizeof(t->id), "t1");
	snprintf(t->bundle, sizeof(t->bundle), "%s", tmpdir);
}

static void test_kill_wait_delete(void **state)
{
	Containerd__Task__V2__KillRequest k =
		CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
	Containerd__Task__V2__WaitRequest w =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Containerd__Task__V2__DeleteRequest del =
		CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
	Containerd__Task__V2__CreateTaskRequest cr =
		CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
	Containerd__Task__V2__StatsRequest st =
		CONTAINERD__TASK__V2__STATS_REQUEST__INIT;
	Containerd__Task__V2__WaitResponse *wr;
	Hintvm__Ttrpc__Response *r;
	uint32_t wait_id;
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	fake_task(child);

	cr.id = "t2";
	cr.bundle = tmpdir;
	expect(call("Create", &cr.base), GOOGLE__RPC__CODE__ALREADY_EXISTS,
	       "runs task \"t1\" already");
	/* Stats of a task whose VM the runtime does not know: said so. */
	st.id = "t1";
	expect(call("Stats", &st.base), GOOGLE__RPC__CODE__INTERNAL,
	       "task t1: the runtime's state is gone");
	k.id = "t1";
	k.signal = 0;
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__INVALID_ARGUMENT,
	       "signal 0: expected 1 to");
	k.signal = 999;
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__INVALID_ARGUMENT,
	       "signal 999");
	k.signal = SIGTERM;
	k.exec_id = "e1";
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "exec \"e1\"");
	k.exec_id = "";
	k.id = "t2";
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "this shim has task \"t1\"");

	{
		Containerd__Task__V2__ResizePtyRequest rz =
			CONTAINERD__TASK__V2__RESIZE_PTY_REQUEST__INIT;

		rz.id = "t1";
		rz.width = 80;
		rz.height = 24;
		expect(call("ResizePty", &rz.base),
		       GOOGLE__RPC__CODE__FAILED_PRECONDITION,
		       "it has no terminal");
		rz.width = 70000;
		expect(call("ResizePty", &rz.base),
		       GOOGLE__RPC__CODE__INVALID_ARGUMENT,
		       "terminal size 70000x24");
	}
	del.id = "t1";
	expect(call("Delete", &del.base),
	       GOOGLE__RPC__CODE__FAILED_PRECONDITION, "is running");

	/* Wait is answered when the process ends, not before. */
	w.id = "t1";
	wait_id = call("Wait", &w.base);
	{
		struct pollfd p = { .fd = peer, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 100), 0);
	}
	k.id = "t1";
	k.all = 1;
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__OK, NULL);
	/* What the pidfd's callback does once the child has ended. */
	{
		siginfo_t info;

		assert_int_equal(
			waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT),
			0);
	}
	shim_task_reaped(&shim);
	assert_true(shim.task.exited);
	r = response(wait_id);
	assert_int_equal(r->status->code, GOOGLE__RPC__CODE__OK);
	wr = containerd__task__v2__wait_response__unpack(NULL, r->payload.len,
							 r->payload.data);
	assert_non_null(wr);
	assert_int_equal(wr->exit_status, 128 + SIGTERM);
	assert_non_null(wr->exited_at);
	containerd__task__v2__wait_response__free_unpacked(wr, NULL);
	hintvm__ttrpc__response__free_unpacked(r, NULL);

	/* Gone: Kill says so, Delete works once. */
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "process already finished");
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__OK, NULL);
	assert_false(shim.task.exists);
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__NOT_FOUND, "t1");
	expect_alive();
}

static void test_exec(void **state)
{
	Containerd__Task__V2__ExecProcessRequest ex =
		CONTAINERD__TASK__V2__EXEC_PROCESS_REQUEST__INIT;
	Containerd__Task__V2__StateRequest st =
		CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
	Containerd__Task__V2__StartRequest start =
		CONTAINERD__TASK__V2__START_REQUEST__INIT;
	Containerd__Task__V2__KillRequest k =
		CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
	Containerd__Task__V2__WaitRequest w =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Containerd__Task__V2__DeleteRequest del =
		CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
	Containerd__Task__V2__ResizePtyRequest rs =
		CONTAINERD__TASK__V2__RESIZE_PTY_REQUEST__INIT;
	Google__Protobuf__Any spec = GOOGLE__PROTOBUF__ANY__INIT;
	Containerd__Task__V2__StartResponse *sr;
	Containerd__Task__V2__WaitResponse *wr;
	Containerd__Task__V2__StateResponse *str;
	Hintvm__Ttrpc__Response *r;
	static const char json[] = "{\"args\":[\"true\"],\"cwd\":\"/\"}";
	char file[128];
	siginfo_t info;
	uint32_t wait_id;

	(void)state;
	fake_task(getpid());
	ex.id = "t1";
	ex.exec_id = "../e";
	expect(call("Exec", &ex.base), GOOGLE__RPC__CODE__INVALID_ARGUMENT,
	       "exec id \"../e\"");
	ex.exec_id = "e1";
	expect(call("Exec", &ex.base), GOOGLE__RPC__CODE__INVALID_ARGUMENT,
	       "expected a process spec");
	spec.type_url =
		"types.containerd.io/opencontainers/runtime-spec/1/Process";
	spec.value.data = (uint8_t *)json;
	spec.value.len = sizeof(json) - 1;
	ex.spec = &spec;
	expect(call("Exec", &ex.base), GOOGLE__RPC__CODE__OK, NULL);
	snprintf(file, sizeof(file), "%s/exec-e1.json", tmpdir);
	assert_int_equal(access(file, R_OK), 0);
	expect(call("Exec", &ex.base), GOOGLE__RPC__CODE__ALREADY_EXISTS,
	       "exec \"e1\" exists");

	st.id = "t1";
	st.exec_id = "e1";
	r = response(call("State", &st.base));
	assert_int_equal(r->status->code, GOOGLE__RPC__CODE__OK);
	str = containerd__task__v2__state_response__unpack(NULL, r->payload.len,
							   r->payload.data);
	assert_non_null(str);
	assert_int_equal(str->status, CONTAINERD__V1__TYPES__STATUS__CREATED);
	assert_string_equal(str->exec_id, "e1");
	containerd__task__v2__state_response__free_unpacked(str, NULL);
	hintvm__ttrpc__response__free_unpacked(r, NULL);

	k.id = "t1";
	k.exec_id = "e1";
	k.signal = SIGTERM;
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "not started");
	k.signal = 0;
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__INVALID_ARGUMENT,
	       "signal 0");
	w.id = "t1";
	w.exec_id = "nope";
	expect(call("Wait", &w.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "exec \"nope\" of task \"t1\": not found");

	/* Started, the runtime's exec finds no container state here and
	 * exits 1: that is the exec's status, through Wait. */
	w.exec_id = "e1";
	wait_id = call("Wait", &w.base);
	start.id = "t1";
	start.exec_id = "e1";
	r = response(call("Start", &start.base));
	assert_int_equal(r->status->code, GOOGLE__RPC__CODE__OK);
	sr = containerd__task__v2__start_response__unpack(NULL, r->payload.len,
							  r->payload.data);
	assert_non_null(sr);
	assert_true(sr->pid > 0);
	assert_int_equal(waitid(P_PID, (id_t)sr->pid, &info, WEXITED | WNOWAIT),
			 0);
	assert_true(shim_exec_reaped(&shim, (pid_t)sr->pid));
	containerd__task__v2__start_response__free_unpacked(sr, NULL);
	hintvm__ttrpc__response__free_unpacked(r, NULL);
	r = response(wait_id);
	assert_int_equal(r->status->code, GOOGLE__RPC__CODE__OK);
	wr = containerd__task__v2__wait_response__unpack(NULL, r->payload.len,
							 r->payload.data);
	assert_non_null(wr);
	assert_int_equal(wr->exit_status, 1);
	containerd__task__v2__wait_response__free_unpacked(wr, NULL);
	hintvm__ttrpc__response__free_unpacked(r, NULL);

	del.id = "t1";
	del.exec_id = "e1";
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__OK, NULL);
	assert_int_not_equal(access(file, F_OK), 0);
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__NOT_FOUND, "e1");

	/* An exec with a terminal (ctr task exec -t): ResizePty names it. */
	ex.exec_id = "e2";
	ex.terminal = 1;
	expect(call("Exec", &ex.base), GOOGLE__RPC__CODE__OK, NULL);
	ex.exec_id = "e3";
	ex.terminal = 0;
	expect(call("Exec", &ex.base), GOOGLE__RPC__CODE__OK, NULL);
	rs.id = "t1";
	rs.exec_id = "e3";
	rs.width = 80;
	rs.height = 24;
	expect(call("ResizePty", &rs.base),
	       GOOGLE__RPC__CODE__FAILED_PRECONDITION,
	       "exec e3: it has no terminal");
	rs.exec_id = "e9";
	expect(call("ResizePty", &rs.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "exec \"e9\" of task \"t1\": not found");
	rs.exec_id = "e2";
	expect(call("ResizePty", &rs.base),
	       GOOGLE__RPC__CODE__FAILED_PRECONDITION, "exec e2: not started");
	rs.width = 70000;
	expect(call("ResizePty", &rs.base), GOOGLE__RPC__CODE__INVALID_ARGUMENT,
	       "terminal size 70000x24");
	/* Started: a console socket waits for the runtime's master; a size
	 * asked before it comes is accepted. The runtime's exec fails here
	 * (no container state): status 1, and its console is gone. */
	rs.width = 80;
	start.exec_id = "e2";
	r = response(call("Start", &start.base));
	assert_int_equal(r->status->code, GOOGLE__RPC__CODE__OK);
	sr = containerd__task__v2__start_response__unpack(NULL, r->payload.len,
							  r->payload.data);
	assert_non_null(sr);
	snprintf(file, sizeof(file), "%s", shim.execs[0].console.path);
	assert_true(strstr(file, "exec-console-") != NULL);
	assert_int_equal(access(file, F_OK), 0);
	expect(call("ResizePty", &rs.base), GOOGLE__RPC__CODE__OK, NULL);
	assert_int_equal(waitid(P_PID, (id_t)sr->pid, &info, WEXITED | WNOWAIT),
			 0);
	assert_true(shim_exec_reaped(&shim, (pid_t)sr->pid));
	assert_int_not_equal(access(file, F_OK), 0);
	assert_int_equal(shim.execs[0].console.listen, -1);
	assert_int_equal(shim.execs[0].console.in, -1);
	assert_int_equal(shim.execs[0].exit_status, 1);
	containerd__task__v2__start_response__free_unpacked(sr, NULL);
	hintvm__ttrpc__response__free_unpacked(r, NULL);
	expect(call("ResizePty", &rs.base),
	       GOOGLE__RPC__CODE__FAILED_PRECONDITION,
	       "exec e2: already finished");
	del.exec_id = "e2";
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__OK, NULL);
	del.exec_id = "e3";
	expect(call("Delete", &del.base), GOOGLE__RPC__CODE__OK, NULL);
	shim.task.exists = false;
	expect_alive();
}

static void test_wait_limit(void **state)
{
	Containerd__Task__V2__WaitRequest w =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;

	(void)state;
	fake_task(getpid());
	w.id = "t1";
	for (int i = 0; i < SHIM_MAX_WAITERS; i++)
		call("Wait", &w.base);
	expect(call("Wait", &w.base), GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
	       "Waits are pending");
	shim.task.exists = false;
	expect_alive();
}

static void test_shutdown(void **state)
{
	Containerd__Task__V2__ShutdownRequest req =
		CONTAINERD__TASK__V2__SHUTDOWN_REQUEST__INIT;

	(void)state;
	/* With a task the shim stays, as containerd's runc shim does. */
	fake_task(getpid());
	expect(call("Shutdown", &req.base), GOOGLE__RPC__CODE__OK, NULL);
	assert_false(shim.shutdown);
	shim.task.exists = false;
	expect(call("Shutdown", &req.base), GOOGLE__RPC__CODE__OK, NULL);
	assert_true(shim.shutdown);
}

/*
 * The runtime connects to the console socket, then sends the master: the
 * shim may see the connection before the message. Seen in the oci tier
 * (ctr task exec -t, "the runtime sent no terminal ... Protocol error").
 */
/* The runtime's state for t1; with VSOCK, a socket there that listens
 * (and never greets unless the test does): its fd, else -1. */
static int make_state(bool vsock)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[128], file[160];
	int lfd;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/t1", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/state.json", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "{\"id\":\"t1\",\"bundle\":\"%s\"}\n", tmpdir);
	fclose(f);
	if (!vsock)
		return -1;
	assert_true(strlen(dir) + sizeof("/v.sock") <= sizeof(a.sun_path));
	memcpy(a.sun_path, dir, strlen(dir));
	memcpy(a.sun_path + strlen(dir), "/v.sock", sizeof("/v.sock"));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	return lfd;
}

/*
 * Stats asks the guest's agent; a guest that accepts the connection and
 * never answers must not hold the shim's other requests: State answers
 * at once while Stats waits, and Stats then says what went wrong.
 */
static void test_stats_does_not_block(void **state)
{
	Containerd__Task__V2__StatsRequest st =
		CONTAINERD__TASK__V2__STATS_REQUEST__INIT;
	Containerd__Task__V2__StateRequest sr =
		CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
	uint32_t stats_id;
	int lfd, waited = 0;

	(void)state;
	fake_task(getpid());
	/* The runtime's state for t1, and a vsock socket that never greets. */
	lfd = make_state(true);

	st.id = "t1";
	stats_id = call("Stats", &st.base);
	sr.id = "t1";
	expect(call("State", &sr.base), GOOGLE__RPC__CODE__OK, NULL);
	/* The agent's handshake deadline (10 s), then the answer. */
	for (;;) {
		struct pollfd p = { .fd = peer, .events = POLLIN };

		assert_int_equal(ttrpc_server_poll(shim.server, 100), 0);
		if (poll(&p, 1, 0) == 1)
			break;
		assert_true(++waited < 300);
	}
	expect(stats_id, GOOGLE__RPC__CODE__UNAVAILABLE, "the guest's stats");
	close(lfd);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* ---- events as containerd receives them -------------------------------- */

/* The events service in a child: each Forward's topic goes to the pipe
 * events_rd reads, one line each, before Forward is answered. */
static int events_out = -1, events_rd = -1;
static pid_t events_pid = -1;
static char events_text[512];
static size_t events_len;

static void ev_forward(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Services__Events__Ttrpc__V1__ForwardRequest *req =
		(const void *)call->request;
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	char line[128];
	int n;

	(void)opaque;
	n = snprintf(line, sizeof(line), "%s\n",
		     req->envelope && req->envelope->topic
			     ? req->envelope->topic
			     : "?");
	if (write(events_out, line, (size_t)n) != n)
		_exit(1);
	ttrpc_call_reply(call, &empty.base);
}

/* containerd's end of TTRPC_ADDRESS, and the shim's events sent there. */
static void events_start(void)
{
	static const ttrpc_handler_fn handlers[] = { ev_forward };
	struct ttrpc_service ev_svc = {
		.desc = &containerd__services__events__ttrpc__v1__events__descriptor,
		.handlers = handlers,
		.n_handlers = 1,
	};
	struct ttrpc_server_config cfg = { .services = &ev_svc,
					   .n_services = 1 };
	char path[128], ready;
	int p[2];

	snprintf(path, sizeof(path), "%s/events.sock", tmpdir);
	unlink(path); /* an earlier server's */
	events_len = 0;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	events_pid = fork();
	assert_true(events_pid >= 0);
	if (events_pid == 0) {
		struct ttrpc_server *srv = ttrpc_server_create(&cfg);

		events_out = p[1];
		if (!srv || ttrpc_server_listen(srv, path) ||
		    write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			ttrpc_server_poll(srv, -1);
	}
	close(p[1]);
	events_rd = p[0];
	assert_int_equal(read(events_rd, &ready, 1), 1);
	shim_events_init(&shim.events, path, "default");
}

/* The topics containerd has been sent so far, one line each. */
static const char *events_seen(void)
{
	struct pollfd p = { .fd = events_rd, .events = POLLIN };
	ssize_t n;

	while (events_len < sizeof(events_text) - 1 && poll(&p, 1, 0) == 1) {
		n = read(events_rd, events_text + events_len,
			 sizeof(events_text) - 1 - events_len);
		if (n <= 0)
			break;
		events_len += (size_t)n;
	}
	events_text[events_len] = 0;
	return events_text;
}

static void events_stop(void)
{
	if (events_pid <= 0)
		return;
	shim_events_close(&shim.events);
	kill(events_pid, SIGKILL);
	waitpid(events_pid, NULL, 0);
	events_pid = -1;
	close(events_rd);
	events_rd = -1;
}

/* A child that the OOM killer ends, as far as its parent can tell. */
static pid_t killed_child(void)
{
	pid_t child = fork();
	siginfo_t info;

	assert_true(child >= 0);
	if (child == 0) {
		raise(SIGKILL);
		_exit(0);
	}
	assert_int_equal(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT),
			 0);
	return child;
}

static void expect_wait_status(uint32_t id, uint32_t status)
{
	Hintvm__Ttrpc__Response *r = response(id);
	Containerd__Task__V2__WaitResponse *wr;

	assert_int_equal(r->status->code, GOOGLE__RPC__CODE__OK);
	wr = containerd__task__v2__wait_response__unpack(NULL, r->payload.len,
							 r->payload.data);
	assert_non_null(wr);
	assert_int_equal(wr->exit_status, status);
	containerd__task__v2__wait_response__free_unpacked(wr, NULL);
	hintvm__ttrpc__response__free_unpacked(r, NULL);
}

/*
 * A plain task's VMM process ends after the guest sent its OOM kills
 * with the exit (the runtime's RT_OOM_FILE): containerd hears TaskOOM,
 * then TaskExit, and Wait says 137. No count, a zero, or a file that is
 * no count: TaskExit alone.
 */
static void test_task_oom_before_exit(void **state)
{
	static const struct {
		const char *file; /* NULL: none */
		const char *events;
	} cases[] = {
		{ "1\n", "/tasks/oom\n/tasks/exit\n" },
		{ "0\n", "/tasks/exit\n" },
		{ NULL, "/tasks/exit\n" },
		{ "lots\n", "/tasks/exit\n" },
	};
	Containerd__Task__V2__WaitRequest w =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	char path[160];
	FILE *f;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t wait_id;
		pid_t child;

		make_state(false);
		snprintf(path, sizeof(path), "%s/t1/%s", tmpdir, RT_OOM_FILE);
		if (cases[i].file) {
			f = fopen(path, "w");
			assert_non_null(f);
			fputs(cases[i].file, f);
			fclose(f);
		}
		events_start();
		child = killed_child();
		fake_task(child);
		w.id = "t1";
		wait_id = call("Wait", &w.base);
		shim_task_reaped(&shim);
		expect_wait_status(wait_id, 128 + SIGKILL);
		if (strcmp(events_seen(), cases[i].events))
			fail_msg("OOM file %s: events [%s], expected [%s]",
				 cases[i].file ? cases[i].file : "(none)",
				 events_seen(), cases[i].events);
		events_stop();
		shim.task.exists = false;
		snprintf(path, sizeof(path), "rm -rf %s/t1", tmpdir);
		assert_int_equal(system(path), 0);
	}
	expect_alive();
}

/* The fake agent's side of the hybrid vsock handshake and HELLO. */
static void agent_accept_greeting(int agent)
{
	uint8_t frame[128], *payload = NULL;
	struct agent_builder b;
	struct agent_hdr hdr;
	char c = 0;
	int len;

	while (c != '\n')
		assert_int_equal(read(agent, &c, 1), 1);
	assert_int_equal(write(agent, "OK 1\n", 5), 5);
	assert_int_equal(agent_read_frame(agent, &hdr, &payload, 5000), 0);
	assert_int_equal(hdr.type, AGENT_MSG_HELLO);
	free(payload);
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_HELLO, hdr.id);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	len = agent_build_end(&b);
	assert_int_equal(write(agent, frame, (size_t)len), len);
}

/*
 * A pod container's own process ends: its OOM count is the guest's to
 * say, asked in a child. While the guest takes its time the shim answers
 * other requests, holds Wait and TaskExit, and does not signal the
 * reaped pid; the answer (one OOM kill) brings TaskOOM, then TaskExit,
 * then Wait's 137.
 */
static void test_ctr_oom_does_not_block(void **state)
{
	Containerd__Task__V2__WaitRequest w =
		CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Containerd__Task__V2__StateRequest sr =
		CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
	Containerd__Task__V2__KillRequest k =
		CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
	struct pollfd p = { .fd = peer, .events = POLLIN };
	uint8_t frame[256], *payload = NULL;
	struct shim_exec *e = &shim.execs[0];
	struct agent_stats st;
	struct agent_hdr hdr;
	char cgroup[64];
	uint32_t wait_id;
	int lfd, agent, len, waited = 0;
	pid_t child;

	(void)state;
	fake_task(getpid());
	lfd = make_state(true);
	events_start();
	memset(e, 0, sizeof(*e));
	shim_console_reset(&e->console);
	e->used = e->started = true;
	snprintf(e->id, sizeof(e->id), "c1");
	snprintf(e->container, sizeof(e->container), "c1");
	child = killed_child();
	e->pid = child;
	w.id = "t1";
	w.exec_id = "c1";
	wait_id = call("Wait", &w.base);
	assert_true(shim_exec_reaped(&shim, child));

	/* The question reaches the guest, which does not answer yet. */
	p.fd = lfd;
	assert_int_equal(poll(&p, 1, 5000), 1);
	agent = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(agent >= 0);
	agent_accept_greeting(agent);
	assert_int_equal(agent_read_frame(agent, &hdr, &payload, 5000), 0);
	assert_int_equal(hdr.type, AGENT_MSG_STATS);
	assert_int_equal(agent_get_str(payload, hdr.len, AGENT_ATTR_CGROUP,
				       cgroup, sizeof(cgroup)),
			 0);
	assert_string_equal(cgroup, "c1");
	free(payload);
	sr.id = "t1";
	expect(call("State", &sr.base), GOOGLE__RPC__CODE__OK, NULL);
	k.id = "t1";
	k.exec_id = "c1";
	k.signal = SIGTERM;
	expect(call("Kill", &k.base), GOOGLE__RPC__CODE__NOT_FOUND,
	       "already finished");
	p.fd = peer;
	assert_int_equal(poll(&p, 1, 0), 0); /* Wait still held */
	assert_string_equal(events_seen(), "");

	/* One OOM kill in its cgroup. */
	for (unsigned int i = 0; i < AGENT_STATS_COUNT; i++)
		st.value[i] = AGENT_STATS_UNKNOWN;
	st.value[AGENT_STAT(AGENT_ATTR_OOM_KILLS)] = 1;
	len = agent_stats_encode(frame, sizeof(frame), hdr.id, &st);
	assert_true(len > 0);
	assert_int_equal(write(agent, frame, (size_t)len), len);
	while (poll(&p, 1, 0) == 0) {
		assert_int_equal(ttrpc_server_poll(shim.server, 100), 0);
		assert_true(++waited < 100);
	}
	expect_wait_status(wait_id, 128 + SIGKILL);
	assert_string_equal(events_seen(), "/tasks/oom\n/tasks/exit\n");
	close(agent);
	close(lfd);
	events_stop();
	shim.task.exists = false;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void test_console_connect_then_send(void **state)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct shim_console c;
	struct pollfd p;
	char err[160];
	pid_t child;
	int st;

	(void)state;
	shim_console_reset(&c);
	assert_int_equal(shim_console_listen(&c, shim.server, "unit-console",
					     err, sizeof(err)),
			 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", c.path);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0), fds[2];
		char byte = 'x', ctl[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

		if (s < 0 || pipe(fds) ||
		    connect(s, (struct sockaddr *)&a, sizeof(a)))
			_exit(1);
		usleep(300 * 1000); /* connected, not sent yet */
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fds[0], sizeof(int));
		_exit(sendmsg(s, &m, 0) == 1 ? 0 : 1);
	}
	/* The connection is pending: the shim takes it now, as its poll
	 * loop would, before the master has been sent. */
	p = (struct pollfd){ .fd = c.listen, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(shim_console_attach(&c, err, sizeof(err)), 0);
	assert_true(c.master >= 0);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	shim_console_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_task, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_bad, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_garbage_payloads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kill_wait_delete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_does_not_block,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_oom_before_exit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctr_oom_does_not_block,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_console_connect_then_send,
						setup, teardown),
	};

	/* The runtime's errors go to stderr: keep the test output calm. */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
