/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A ttrpc server on Unix stream sockets (docs/shim.md): one thread, one
 * poll(2) loop, non-blocking sockets. Services are the descriptors
 * protoc-c generates from their .proto (names, methods, the message type
 * of each method's input and output) plus a table of handlers, so the
 * server decodes every request payload with its method's input type
 * before any handler sees it: a payload that does not decode is answered
 * INVALID_ARGUMENT here, once, for every method.
 *
 * A peer gets an error status or a closed connection, never a stuck
 * server: frames are bounded (TTRPC_MAX_DATA), so is the output a
 * connection may leave unread (TTRPC_OUT_MAX; past it the connection is
 * closed), so is the number of connections (more are accepted and closed
 * at once), and a connection that stops in the middle of a frame, or
 * stops reading its answers, for stall_ms is closed.
 */
#ifndef HVM_SHIM_TTRPC_SERVER_H
#define HVM_SHIM_TTRPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* google.rpc.Code, generated from Debian's google/rpc/code.proto. */
#include "rpc_code.pb-c.h"
#include "shim/ttrpc_frame.h"

#define TTRPC_DEFAULT_MAX_CONNS 16
#define TTRPC_DEFAULT_STALL_MS 10000
/* Two of the largest frames: a full answer can be queued behind another. */
#define TTRPC_OUT_MAX (2 * (TTRPC_MAX_DATA + 10))
/* Reading stops while this much output waits: a peer that sends requests
 * without reading answers is throttled by its own socket buffer. */
#define TTRPC_OUT_PAUSE (64u << 10)

struct ttrpc_server;
struct ttrpc_call;

typedef void (*ttrpc_handler_fn)(void *opaque, struct ttrpc_call *call);

struct ttrpc_service {
	/* Its full name ("containerd.task.v2.Task") is what requests name. */
	const ProtobufCServiceDescriptor *desc;
	/* desc->n_methods entries, in desc->methods order; NULL (or a table
	 * shorter than n_methods: n_handlers) answers UNIMPLEMENTED. */
	const ttrpc_handler_fn *handlers;
	size_t n_handlers;
	void *opaque;
};

struct ttrpc_server_config {
	const struct ttrpc_service *services;
	size_t n_services;
	unsigned int max_conns; /* 0: TTRPC_DEFAULT_MAX_CONNS */
	unsigned int stall_ms; /* 0: TTRPC_DEFAULT_STALL_MS */
};

/*
 * Names one request for an answer given later (ttrpc_server_reply):
 * Wait answers when the task exits, long after its handler returned. A
 * token of a connection that has closed since is refused (-ENOTCONN),
 * never sent to whoever holds the connection's slot now.
 */
struct ttrpc_token {
	uint64_t conn_id;
	uint32_t stream_id;
	const ProtobufCMethodDescriptor *method;
};

struct ttrpc_call {
	/* The request, valid for the handler's call only. */
	const ProtobufCServiceDescriptor *service;
	const ProtobufCMethodDescriptor *method;
	const ProtobufCMessage *request; /* of type method->input */
	int64_t timeout_nano; /* the caller's deadline, 0 for none */
	struct ttrpc_token token;
	/* Private: the server and the request's envelope (metadata). */
	struct ttrpc_server *server;
	const void *envelope;
	bool answered;
};

/*
 * The handler's answer, exactly one of these per call: a response of
 * type method->output, an error status, or a token for later. A handler
 * that gives none gets INTERNAL sent for it.
 */
int ttrpc_call_reply(struct ttrpc_call *call, const ProtobufCMessage *resp);
int ttrpc_call_error(struct ttrpc_call *call, Google__Rpc__Code code,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct ttrpc_token ttrpc_call_defer(struct ttrpc_call *call);
/* The value of the request's first metadata entry KEY, or NULL
 * (containerd names the namespace in "containerd-namespace-ttrpc"). */
const char *ttrpc_call_metadata(const struct ttrpc_call *call, const char *key);

/* A deferred answer; -ENOTCONN when its connection is gone. */
int ttrpc_server_reply(struct ttrpc_server *s, const struct ttrpc_token *t,
		       const ProtobufCMessage *resp);
int ttrpc_server_error(struct ttrpc_server *s, const struct ttrpc_token *t,
		       Google__Rpc__Code code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* NULL with hvm_error_message() set on a bad config or no memory. */
struct ttrpc_server *ttrpc_server_create(const struct ttrpc_server_config *cfg);
void ttrpc_server_destroy(struct ttrpc_server *s);
/* Listens on a new Unix socket at PATH (0600; an existing file fails). */
int ttrpc_server_listen(struct ttrpc_server *s, const char *path);
/* Serves an already connected stream socket; the server owns FD from
 * here on, also on failure (-EMFILE when max_conns are open). */
int ttrpc_server_add_conn(struct ttrpc_server *s, int fd);
/*
 * One round: waits up to TIMEOUT_MS (-1: no limit) for a socket, then
 * accepts, reads, dispatches, writes and closes what is due. Returns 0,
 * or -errno when poll itself fails (EINTR included: the caller decides).
 */
int ttrpc_server_poll(struct ttrpc_server *s, int timeout_ms);
unsigned int ttrpc_server_conn_count(const struct ttrpc_server *s);

/*
 * The shim's other fds (a VMM's pidfd, a signalfd, agent sockets) in the
 * same poll round, so that one thread serves requests and notices exits:
 * FN runs on the server's thread with poll's revents, and may answer
 * deferred calls (ttrpc_server_reply) or unwatch any fd. The server
 * neither reads nor closes a watched fd: a callback that cannot clear
 * what it was called for (POLLHUP, POLLERR, POLLNVAL) unwatches the fd,
 * or poll reports it again at once.
 */
#define TTRPC_MAX_WATCHES 32
typedef void (*ttrpc_watch_fn)(void *opaque, int fd, short revents);
/* -EEXIST for an fd watched already, -ENOSPC past TTRPC_MAX_WATCHES. */
int ttrpc_server_watch(struct ttrpc_server *s, int fd, short events,
		       ttrpc_watch_fn fn, void *opaque);
int ttrpc_server_unwatch(struct ttrpc_server *s, int fd);

#endif
