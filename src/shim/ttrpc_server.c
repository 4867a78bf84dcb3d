// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ttrpc server loop: connections, dispatch of (service, method) to
 * handlers, answers with google.rpc.Status codes. See ttrpc_server.h for
 * the bounds and docs/shim.md for the protocol notes.
 */
#include "shim/ttrpc_server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "shim/ttrpc_frame.h"
#include "ttrpc.pb-c.h"

/* Bytes read from one connection per round, so one busy peer cannot
 * starve the others. */
#define READ_CHUNK (64u << 10)
/* Longest status message we send; names from the peer are cut shorter. */
#define STATUS_MSG_MAX 256
/* How long the listener rests after accept(2) failed (EMFILE, ENOMEM). */
#define ACCEPT_BACKOFF_NS (100ull * 1000000)

struct ttrpc_conn {
	int fd; /* -1: free slot */
	uint64_t id; /* never reused, so tokens cannot reach a new peer */
	struct ttrpc_reader rd;
	struct ttrpc_outbuf out;
	uint64_t progress_ns; /* last byte moved while something was pending */
};

struct ttrpc_watch {
	int fd; /* -1: free */
	short events;
	ttrpc_watch_fn fn;
	void *opaque;
};

struct ttrpc_server {
	struct ttrpc_service *services;
	size_t n_services;
	unsigned int max_conns;
	uint64_t stall_ns;
	int listen_fd;
	/* accept(2) failing for want of fds or memory leaves the listener
	 * readable: it rests until then instead of waking poll at once. */
	uint64_t accept_resume_ns;
	uint64_t next_id;
	struct ttrpc_conn *conns;
	struct ttrpc_watch watches[TTRPC_MAX_WATCHES];
	/* The poll set: the listener, the connections, the watches. */
	struct pollfd *pfds;
};

static void conn_close(struct ttrpc_conn *c, const char *why)
{
	if (c->fd < 0)
		return;
	pr_debug("ttrpc: closing connection %llu: %s",
		 (unsigned long long)c->id, why);
	close(c->fd);
	c->fd = -1;
	ttrpc_reader_free(&c->rd);
	ttrpc_outbuf_free(&c->out);
}

static struct ttrpc_conn *conn_find(struct ttrpc_server *s, uint64_t id)
{
	for (unsigned int i = 0; i < s->max_conns; i++)
		if (s->conns[i].fd >= 0 && s->conns[i].id == id)
			return &s->conns[i];
	return NULL;
}

/* Writes what it can without blocking; closes on a peer error. */
static void conn_flush(struct ttrpc_conn *c)
{
	while (c->fd >= 0 && ttrpc_outbuf_pending(&c->out)) {
		ssize_t n = send(c->fd, c->out.buf + c->out.off,
				 ttrpc_outbuf_pending(&c->out),
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(c, strerror(errno));
			return;
		}
		ttrpc_outbuf_consume(&c->out, (size_t)n);
		c->progress_ns = hvm_monotonic_ns();
	}
}

/*
 * Queues one Response frame: STATUS_CODE with MSG, or OK with PAYLOAD.
 * A peer that leaves more than TTRPC_OUT_MAX unread is not reading: its
 * connection is closed rather than grown without bound.
 */
static int conn_respond(struct ttrpc_conn *c, uint32_t stream_id, int code,
			const char *msg, const uint8_t *payload, size_t len)
{
	Google__Rpc__Status status = GOOGLE__RPC__STATUS__INIT;
	Hintvm__Ttrpc__Response resp = HINTVM__TTRPC__RESPONSE__INIT;
	uint8_t *buf;
	size_t size;
	int err;

	status.code = code;
	/* protobuf-c packs a NULL string as absent, "" the same way. */
	status.message = (char *)(msg ? msg : "");
	resp.status = &status;
	if (code == GOOGLE__RPC__CODE__OK && len) {
		resp.payload.data = (uint8_t *)payload;
		resp.payload.len = len;
	}
	size = hintvm__ttrpc__response__get_packed_size(&resp);
	if (size > TTRPC_MAX_DATA) {
		/* The handler's answer cannot be framed: say so instead. */
		return conn_respond(
			c, stream_id, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
			"response larger than ttrpc's 4 MiB limit", NULL, 0);
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		conn_close(c, "out of memory for a response");
		return -ENOMEM;
	}
	hintvm__ttrpc__response__pack(&resp, buf);
	if (!ttrpc_outbuf_pending(&c->out))
		c->progress_ns = hvm_monotonic_ns();
	err = ttrpc_outbuf_frame(&c->out, stream_id, TTRPC_MSG_RESPONSE, 0, buf,
				 size);
	free(buf);
	if (err) {
		conn_close(c, err == -ENOBUFS
				      ? "the peer does not read its answers"
				      : "cannot queue a response");
		return err;
	}
	return 0;
}

static int conn_error(struct ttrpc_conn *c, uint32_t stream_id, int code,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int conn_error(struct ttrpc_conn *c, uint32_t stream_id, int code,
		      const char *fmt, ...)
{
	char msg[STATUS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return conn_respond(c, stream_id, code, msg, NULL, 0);
}

/* A peer's name, made safe for a status message and a log line. */
static void printable(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < size; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = 0;
}

int ttrpc_server_reply(struct ttrpc_server *s, const struct ttrpc_token *t,
		       const ProtobufCMessage *resp)
{
	struct ttrpc_conn *c = conn_find(s, t->conn_id);
	uint8_t *buf;
	size_t size;
	int err;

	if (!c)
		return -ENOTCONN;
	if (!resp || resp->descriptor != t->method->output) {
		/* A handler bug: the peer learns of it, the server goes on. */
		pr_err("ttrpc: %s answered with %s, not %s", t->method->name,
		       resp ? resp->descriptor->name : "nothing",
		       t->method->output->name);
		return conn_error(c, t->stream_id, GOOGLE__RPC__CODE__INTERNAL,
				  "%s: the server built a wrong response",
				  t->method->name);
	}
	size = protobuf_c_message_get_packed_size(resp);
	if (size > TTRPC_MAX_DATA)
		return conn_error(
			c, t->stream_id, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
			"%s: response larger than ttrpc's 4 MiB limit",
			t->method->name);
	buf = malloc(size ? size : 1);
	if (!buf)
		return conn_error(c, t->stream_id,
				  GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				  "%s: out of memory", t->method->name);
	protobuf_c_message_pack(resp, buf);
	err = conn_respond(c, t->stream_id, GOOGLE__RPC__CODE__OK, NULL, buf,
			   size);
	free(buf);
	if (!err)
		conn_flush(c);
	return err;
}

static int server_verror(struct ttrpc_server *s, const struct ttrpc_token *t,
			 Google__Rpc__Code code, const char *fmt, va_list ap)
{
	struct ttrpc_conn *c = conn_find(s, t->conn_id);
	char msg[STATUS_MSG_MAX];
	int err;

	if (!c)
		return -ENOTCONN;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	err = conn_respond(c, t->stream_id, code, msg, NULL, 0);
	if (!err)
		conn_flush(c);
	return err;
}

int ttrpc_server_error(struct ttrpc_server *s, const struct ttrpc_token *t,
		       Google__Rpc__Code code, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = server_verror(s, t, code, fmt, ap);
	va_end(ap);
	return err;
}

int ttrpc_call_reply(struct ttrpc_call *call, const ProtobufCMessage *resp)
{
	if (call->answered)
		return -EALREADY;
	call->answered = true;
	return ttrpc_server_reply(call->server, &call->token, resp);
}

int ttrpc_call_error(struct ttrpc_call *call, Google__Rpc__Code code,
		     const char *fmt, ...)
{
	va_list ap;
	int err;

	if (call->answered)
		return -EALREADY;
	call->answered = true;
	va_start(ap, fmt);
	err = server_verror(call->server, &call->token, code, fmt, ap);
	va_end(ap);
	return err;
}

struct ttrpc_token ttrpc_call_defer(struct ttrpc_call *call)
{
	call->answered = true;
	return call->token;
}

const char *ttrpc_call_metadata(const struct ttrpc_call *call, const char *key)
{
	const Hintvm__Ttrpc__Request *req = call->envelope;

	for (size_t i = 0; i < req->n_metadata; i++)
		if (req->metadata[i]->key &&
		    !strcmp(req->metadata[i]->key, key))
			return req->metadata[i]->value;
	return NULL;
}

static const struct ttrpc_service *find_service(struct ttrpc_server *s,
						const char *name)
{
	for (size_t i = 0; i < s->n_services; i++)
		if (!strcmp(s->services[i].desc->name, name))
			return &s->services[i];
	return NULL;
}

/* One Request frame: route it, decode its payload, run its handler. */
static void dispatch_request(struct ttrpc_server *s, struct ttrpc_conn *c,
			     const struct ttrpc_header *h, const uint8_t *data)
{
	const struct ttrpc_service *svc;
	const ProtobufCMethodDescriptor *m;
	Hintvm__Ttrpc__Request *req;
	ProtobufCMessage *msg;
	ttrpc_handler_fn fn = NULL;
	char name[64], method[64];
	uint64_t conn_id = c->id;
	struct ttrpc_call call;

	/* As containerd/ttrpc does: the client starts odd streams only. */
	if (!(h->stream_id & 1)) {
		conn_error(c, h->stream_id, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			   "stream id %u is even: client streams are odd",
			   h->stream_id);
		return;
	}
	if (h->flags & TTRPC_FLAG_REMOTE_OPEN) {
		conn_error(c, h->stream_id, GOOGLE__RPC__CODE__UNIMPLEMENTED,
			   "streaming requests are not supported");
		return;
	}
	req = hintvm__ttrpc__request__unpack(NULL, h->length, data);
	if (!req) {
		conn_error(c, h->stream_id, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			   "undecodable ttrpc request");
		return;
	}
	printable(name, sizeof(name), req->service);
	printable(method, sizeof(method), req->method);
	svc = find_service(s, req->service);
	if (!svc) {
		conn_error(c, h->stream_id, GOOGLE__RPC__CODE__UNIMPLEMENTED,
			   "service %s", name);
		goto out;
	}
	m = protobuf_c_service_descriptor_get_method_by_name(svc->desc,
							     req->method);
	if (m) {
		size_t idx = (size_t)(m - svc->desc->methods);

		if (idx < svc->n_handlers)
			fn = svc->handlers[idx];
	}
	if (!fn) {
		conn_error(c, h->stream_id, GOOGLE__RPC__CODE__UNIMPLEMENTED,
			   "%s %s/%s", m ? "not implemented:" : "no method",
			   name, method);
		goto out;
	}
	msg = protobuf_c_message_unpack(m->input, NULL, req->payload.len,
					req->payload.data);
	if (!msg) {
		conn_error(c, h->stream_id, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			   "%s/%s: payload is no %s", name, method,
			   m->input->name);
		goto out;
	}
	call = (struct ttrpc_call){
		.service = svc->desc,
		.method = m,
		.request = msg,
		.timeout_nano = req->timeout_nano,
		.token = { .conn_id = conn_id,
			   .stream_id = h->stream_id,
			   .method = m },
		.server = s,
		.envelope = req,
	};
	fn(svc->opaque, &call);
	if (!call.answered)
		ttrpc_server_error(s, &call.token, GOOGLE__RPC__CODE__INTERNAL,
				   "%s/%s gave no answer", name, method);
	protobuf_c_message_free_unpacked(msg, NULL);
out:
	hintvm__ttrpc__request__free_unpacked(req, NULL);
}

/* One whole frame from C. */
static void dispatch_frame(struct ttrpc_server *s, struct ttrpc_conn *c)
{
	const struct ttrpc_header *h = &c->rd.h;

	switch (h->type) {
	case TTRPC_MSG_REQUEST:
		dispatch_request(s, c, h, c->rd.data);
		break;
	case TTRPC_MSG_DATA:
		/* Every stream was answered with its request (no streaming
		 * here), so there is nothing to deliver data to: drop it, as
		 * a ttrpc >= 1.2 server does for a finished stream. */
		pr_debug_ratelimited("ttrpc: dropped a data frame of stream %u",
				     h->stream_id);
		break;
	default:
		/* A response to a server, or a type from a future protocol
		 * version whose meaning we cannot know: not our peer. */
		pr_warn_ratelimited("ttrpc: message type %u from a client",
				    h->type);
		conn_close(c, "unknown message type");
		break;
	}
}

static void conn_read(struct ttrpc_server *s, struct ttrpc_conn *c)
{
	uint8_t buf[4096];
	size_t total = 0;

	while (c->fd >= 0 && total < READ_CHUNK &&
	       ttrpc_outbuf_pending(&c->out) < TTRPC_OUT_PAUSE) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		size_t off = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(c, strerror(errno));
			return;
		}
		if (n == 0) {
			conn_close(c, "the peer closed it");
			return;
		}
		total += (size_t)n;
		c->progress_ns = hvm_monotonic_ns();
		while (c->fd >= 0 && off < (size_t)n) {
			size_t used;
			int r = ttrpc_reader_feed(&c->rd, buf + off,
						  (size_t)n - off, &used);

			off += used;
			if (r < 0) {
				if (r == -EMSGSIZE) {
					/* Where the next frame starts is past
					 * bytes we will not read: tell the
					 * peer why, then hang up. */
					conn_error(
						c, c->rd.h.stream_id,
						GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
						"message length %u exceeds the maximum of %u",
						c->rd.h.length, TTRPC_MAX_DATA);
					conn_flush(c);
				}
				conn_close(c, r == -EMSGSIZE ? "oversized frame"
							     : "out of memory");
				return;
			}
			if (r == 1)
				dispatch_frame(s, c);
		}
	}
}

static void accept_conns(struct ttrpc_server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				pr_warn_ratelimited("ttrpc: accept: %s",
						    strerror(errno));
				s->accept_resume_ns =
					hvm_monotonic_ns() + ACCEPT_BACKOFF_NS;
			}
			return;
		}
		if (ttrpc_server_add_conn(s, fd) == -EMFILE)
			pr_warn_ratelimited(
				"ttrpc: %u connections open: refused one",
				s->max_conns);
	}
}

int ttrpc_server_add_conn(struct ttrpc_server *s, int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		close(fd);
		return hvm_set_errno_error("ttrpc: fcntl O_NONBLOCK");
	}
	for (unsigned int i = 0; i < s->max_conns; i++) {
		struct ttrpc_conn *c = &s->conns[i];

		if (c->fd >= 0)
			continue;
		c->fd = fd;
		c->id = s->next_id++;
		ttrpc_reader_init(&c->rd);
		ttrpc_outbuf_init(&c->out, TTRPC_OUT_MAX);
		c->progress_ns = hvm_monotonic_ns();
		return 0;
	}
	close(fd);
	return hvm_set_error(-EMFILE, "ttrpc: all %u connections are in use",
			     s->max_conns);
}

/* Something is owed on C: a frame half received or answers unread. */
static bool conn_busy(const struct ttrpc_conn *c)
{
	return ttrpc_reader_partial(&c->rd) || ttrpc_outbuf_pending(&c->out);
}

/* TIMEOUT_MS (-1: none), or less when something is due in LEFT_NS. */
static int min_timeout(int timeout_ms, uint64_t left_ns)
{
	uint64_t ms = left_ns / 1000000 + 1;

	if (ms > INT_MAX)
		ms = INT_MAX;
	if (timeout_ms < 0 || (int)ms < timeout_ms)
		return (int)ms;
	return timeout_ms;
}

int ttrpc_server_poll(struct ttrpc_server *s, int timeout_ms)
{
	unsigned int n = 0, i;
	uint64_t now = hvm_monotonic_ns();
	int r;

	if (s->listen_fd >= 0 && now >= s->accept_resume_ns)
		s->pfds[n++] =
			(struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
	else if (s->listen_fd >= 0)
		timeout_ms = min_timeout(timeout_ms, s->accept_resume_ns - now);
	for (i = 0; i < s->max_conns; i++) {
		struct ttrpc_conn *c = &s->conns[i];
		short ev = 0;

		if (c->fd < 0)
			continue;
		if (ttrpc_outbuf_pending(&c->out) < TTRPC_OUT_PAUSE)
			ev |= POLLIN;
		if (ttrpc_outbuf_pending(&c->out))
			ev |= POLLOUT;
		s->pfds[n++] = (struct pollfd){ .fd = c->fd, .events = ev };
		/* Wake up in time to close a stalled connection. */
		if (conn_busy(c)) {
			uint64_t due = c->progress_ns + s->stall_ns;

			timeout_ms = min_timeout(timeout_ms,
						 due > now ? due - now : 0);
		}
	}
	for (i = 0; i < TTRPC_MAX_WATCHES; i++)
		if (s->watches[i].fd >= 0)
			s->pfds[n++] =
				(struct pollfd){ .fd = s->watches[i].fd,
						 .events =
							 s->watches[i].events };
	r = poll(s->pfds, n, timeout_ms);
	if (r < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		struct pollfd *p = &s->pfds[i];
		struct ttrpc_conn *c = NULL;

		if (p->fd == s->listen_fd) {
			if (p->revents & POLLIN)
				accept_conns(s);
			continue;
		}
		if (!p->revents)
			continue;
		for (unsigned int j = 0; j < s->max_conns; j++)
			if (s->conns[j].fd == p->fd)
				c = &s->conns[j];
		if (!c) {
			/* Looked up again: a callback may unwatch. */
			for (unsigned int j = 0; j < TTRPC_MAX_WATCHES; j++) {
				struct ttrpc_watch *w = &s->watches[j];

				if (w->fd == p->fd) {
					w->fn(w->opaque, w->fd, p->revents);
					break;
				}
			}
			continue;
		}
		if (p->revents & (POLLIN | POLLHUP | POLLERR))
			conn_read(s, c);
		if (c->fd >= 0)
			conn_flush(c);
	}
	now = hvm_monotonic_ns();
	for (i = 0; i < s->max_conns; i++) {
		struct ttrpc_conn *c = &s->conns[i];

		if (c->fd >= 0 && conn_busy(c) &&
		    now - c->progress_ns >= s->stall_ns)
			conn_close(c, ttrpc_outbuf_pending(&c->out)
					      ? "the peer stopped reading"
					      : "the peer stopped mid-frame");
	}
	return 0;
}

int ttrpc_server_watch(struct ttrpc_server *s, int fd, short events,
		       ttrpc_watch_fn fn, void *opaque)
{
	struct ttrpc_watch *free_slot = NULL;

	for (unsigned int i = 0; i < TTRPC_MAX_WATCHES; i++) {
		if (s->watches[i].fd == fd)
			return hvm_set_error(
				-EEXIST, "ttrpc: fd %d is watched already", fd);
		if (s->watches[i].fd < 0 && !free_slot)
			free_slot = &s->watches[i];
	}
	if (fd < 0 || !fn)
		return hvm_set_error(-EINVAL, "ttrpc: watch of fd %d", fd);
	if (!free_slot)
		return hvm_set_error(-ENOSPC, "ttrpc: %d fds watched already",
				     TTRPC_MAX_WATCHES);
	*free_slot = (struct ttrpc_watch){ fd, events, fn, opaque };
	return 0;
}

int ttrpc_server_unwatch(struct ttrpc_server *s, int fd)
{
	for (unsigned int i = 0; i < TTRPC_MAX_WATCHES; i++)
		if (s->watches[i].fd == fd && fd >= 0) {
			s->watches[i].fd = -1;
			return 0;
		}
	return -ENOENT;
}

unsigned int ttrpc_server_conn_count(const struct ttrpc_server *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->max_conns; i++)
		n += s->conns[i].fd >= 0;
	return n;
}

int ttrpc_server_listen(struct ttrpc_server *s, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if (s->listen_fd >= 0)
		return hvm_set_error(-EBUSY, "ttrpc: already listening");
	if (strlen(path) >= sizeof(addr.sun_path))
		return hvm_set_error(
			-ENAMETOOLONG,
			"ttrpc: socket path %s: longer than %zu bytes", path,
			sizeof(addr.sun_path) - 1);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hvm_set_errno_error("ttrpc: socket");
	/* Only the owner (containerd runs as root) may connect: the Task
	 * service starts and kills VMs. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		umask(old);
		close(fd);
		return hvm_set_errno_error("ttrpc: bind %s", path);
	}
	umask(old);
	if (listen(fd, 16) < 0) {
		close(fd);
		unlink(path);
		return hvm_set_errno_error("ttrpc: listen %s", path);
	}
	s->listen_fd = fd;
	return 0;
}

struct ttrpc_server *ttrpc_server_create(const struct ttrpc_server_config *cfg)
{
	struct ttrpc_server *s;

	for (size_t i = 0; i < cfg->n_services; i++) {
		const struct ttrpc_service *svc = &cfg->services[i];

		if (!svc->desc ||
		    svc->desc->magic != PROTOBUF_C__SERVICE_DESCRIPTOR_MAGIC ||
		    svc->n_handlers > svc->desc->n_methods) {
			hvm_set_error(
				-EINVAL,
				"ttrpc: service %zu: not a protoc-c service descriptor with at most its methods' handlers",
				i);
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->max_conns =
		cfg->max_conns ? cfg->max_conns : TTRPC_DEFAULT_MAX_CONNS;
	s->stall_ns = (uint64_t)(cfg->stall_ms ? cfg->stall_ms
					       : TTRPC_DEFAULT_STALL_MS) *
		      1000000u;
	s->listen_fd = -1;
	s->next_id = 1;
	s->n_services = cfg->n_services;
	s->services = calloc(cfg->n_services ? cfg->n_services : 1,
			     sizeof(*s->services));
	s->conns = calloc(s->max_conns, sizeof(*s->conns));
	s->pfds =
		calloc(s->max_conns + 1 + TTRPC_MAX_WATCHES, sizeof(*s->pfds));
	if (!s->services || !s->conns || !s->pfds) {
		ttrpc_server_destroy(s);
		goto nomem;
	}
	if (cfg->n_services)
		memcpy(s->services, cfg->services,
		       cfg->n_services * sizeof(*s->services));
	for (unsigned int i = 0; i < s->max_conns; i++)
		s->conns[i].fd = -1;
	for (unsigned int i = 0; i < TTRPC_MAX_WATCHES; i++)
		s->watches[i].fd = -1;
	return s;
nomem:
	hvm_set_error(-ENOMEM, "ttrpc: out of memory for the server");
	return NULL;
}

void ttrpc_server_destroy(struct ttrpc_server *s)
{
	if (!s)
		return;
	if (s->conns)
		for (unsigned int i = 0; i < s->max_conns; i++)
			conn_close(&s->conns[i], "the server stops");
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	free(s->services);
	free(s->conns);
	free(s->pfds);
	free(s);
}
