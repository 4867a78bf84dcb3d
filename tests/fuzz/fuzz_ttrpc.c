// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the shim's ttrpc (src/shim, docs/shim.md):
 *  1. the frame reader: the input fed whole and fed in the pieces its
 *     first byte chooses yields the same frames and the same verdict;
 *  2. the server: the input, written in pieces to a connection with
 *     poll rounds between them, is served by a real server for
 *     containerd's Task service (a handler that answers, one that defers
 *     and answers through its token, one that never answers). Whatever
 *     comes back is whole Response frames on odd or echoed streams that
 *     decode with a status, and the server never crashes or leaks.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "shim/ttrpc_frame.h"
#include "shim/ttrpc_server.h"
#include "task_shim.pb-c.h"
#include "ttrpc.pb-c.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

/* Feeds DATA in pieces of STEP bytes; records each frame's id and length
 * in IDS/LENS (up to MAX); returns the count, or the error. */
static int read_frames(const uint8_t *data, size_t size, size_t step,
		       uint32_t *ids, uint32_t *lens, int max)
{
	struct ttrpc_reader r;
	size_t off = 0;
	int n = 0, ret = 0;

	ttrpc_reader_init(&r);
	while (off < size) {
		size_t len = size - off < step ? size - off : step, done = 0;

		while (done < len) {
			size_t used;

			ret = ttrpc_reader_feed(&r, data + off + done,
						len - done, &used);
			check(used <= len - done);
			done += used;
			if (ret < 0)
				goto out;
			if (ret == 1) {
				check(r.h.length <= TTRPC_MAX_DATA);
				if (n < max) {
					ids[n] = r.h.stream_id;
					lens[n] = r.h.length;
				}
				n++;
			} else {
				check(done == len);
			}
		}
		off += len;
	}
out:
	ttrpc_reader_free(&r);
	return ret < 0 ? ret : n;
}

static struct ttrpc_token pending;
static bool have_pending;

static void h_state(void *opaque, struct ttrpc_call *call)
{
	Containerd__Task__V2__StateResponse resp =
		CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;

	resp.id =
		((const Containerd__Task__V2__StateRequest *)call->request)->id;
	ttrpc_call_reply(call, &resp.base);
}

static void h_wait(void *opaque, struct ttrpc_call *call)
{
	if (have_pending) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				 "one waiter");
		return;
	}
	pending = ttrpc_call_defer(call);
	have_pending = true;
}

static void h_pids(void *opaque, struct ttrpc_call *call)
{
}

/* What the server sent back so far, drained after every round so that
 * the socket never fills. */
static uint8_t out[1 << 20];
static size_t out_len;

static void drain(int fd)
{
	ssize_t n;

	while (out_len < sizeof(out) &&
	       (n = recv(fd, out + out_len, sizeof(out) - out_len,
			 MSG_DONTWAIT)) > 0)
		out_len += (size_t)n;
}

/* Whole, well-formed Response frames; a cut one only at the end of a
 * connection the server closed. */
static void check_output(bool closed)
{
	size_t off = 0;

	while (off + TTRPC_HEADER_LEN <= out_len) {
		struct ttrpc_header h;
		Hintvm__Ttrpc__Response *resp;

		check(ttrpc_header_decode(out + off, &h) == 0);
		check(h.type == TTRPC_MSG_RESPONSE && h.flags == 0);
		if (off + TTRPC_HEADER_LEN + h.length > out_len)
			break;
		resp = hintvm__ttrpc__response__unpack(
			NULL, h.length, out + off + TTRPC_HEADER_LEN);
		check(resp && resp->status);
		hintvm__ttrpc__response__free_unpacked(resp, NULL);
		off += TTRPC_HEADER_LEN + h.length;
	}
	check(off == out_len || closed || out_len == sizeof(out));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t ids[2][64], lens[2][64];
	ttrpc_handler_fn handlers[32] = { 0 };
	const ProtobufCServiceDescriptor *d =
		&containerd__task__v2__task__descriptor;
	struct ttrpc_service svc = { .desc = d,
				     .handlers = handlers,
				     .n_handlers = d->n_methods };
	struct ttrpc_server_config cfg = { .services = &svc, .n_services = 1 };
	struct ttrpc_server *s;
	size_t step, off;
	int whole, pieces, sv[2];

	if (!size)
		return 0;
	step = data[0] % 16 + 1;
	data++;
	size--;

	whole = read_frames(data, size, size ? size : 1, ids[0], lens[0], 64);
	pieces = read_frames(data, size, step, ids[1], lens[1], 64);
	check(whole == pieces);
	for (int i = 0; i < whole && i < 64; i++)
		check(ids[0][i] == ids[1][i] && lens[0][i] == lens[1][i]);

	handlers[protobuf_c_service_descriptor_get_method_by_name(d, "State") -
		 d->methods] = h_state;
	handlers[protobuf_c_service_descriptor_get_method_by_name(d, "Wait") -
		 d->methods] = h_wait;
	handlers[protobuf_c_service_descriptor_get_method_by_name(d, "Pids") -
		 d->methods] = h_pids;
	s = ttrpc_server_create(&cfg);
	check(s);
	check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	check(ttrpc_server_add_conn(s, sv[1]) == 0);
	have_pending = false;
	out_len = 0;
	for (off = 0; off < size; off += step * 64) {
		size_t len = size - off < step * 64 ? size - off : step * 64;

		if (send(sv[0], data + off, len, MSG_NOSIGNAL) < 0)
			break; /* the server hung up: a valid verdict */
		check(ttrpc_server_poll(s, 0) == 0);
		drain(sv[0]);
		if (have_pending) {
			Containerd__Task__V2__WaitResponse w =
				CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
			int r = ttrpc_server_reply(s, &pending, &w.base);

			check(r == 0 || r == -ENOTCONN || r == -ENOBUFS);
			have_pending = false;
		}
	}
	check(ttrpc_server_poll(s, 0) == 0);
	drain(sv[0]);
	check(ttrpc_server_conn_count(s) <= 1);
	check_output(ttrpc_server_conn_count(s) == 0);
	close(sv[0]);
	ttrpc_server_destroy(s);
	return 0;
}
