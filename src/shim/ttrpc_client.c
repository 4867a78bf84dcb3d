// SPDX-License-Identifier: LGPL-2.1-or-later
/* A ttrpc client, one call at a time, with a deadline per call. */
#include "shim/ttrpc_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "ttrpc.pb-c.h"

void ttrpc_client_adopt(struct ttrpc_client *c, int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	c->fd = fd;
	c->next_stream = 1;
	ttrpc_reader_init(&c->rd);
}

int ttrpc_client_connect(struct ttrpc_client *c, const char *path,
			 int timeout_ms)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd;

	c->fd = -1;
	if (strlen(path) >= sizeof(addr.sun_path))
		return hvm_set_error(
			-ENAMETOOLONG,
			"ttrpc: socket path %s: longer than %zu bytes", path,
			sizeof(addr.sun_path) - 1);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hvm_set_errno_error("ttrpc: socket");
	/* A Unix connect blocks only on a full backlog; SO_SNDTIMEO bounds
	 * that wait. The socket is non-blocking from then on. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int err = hvm_set_errno_error("ttrpc: connect %s", path);

		close(fd);
		return err;
	}
	ttrpc_client_adopt(c, fd);
	return 0;
}

void ttrpc_client_close(struct ttrpc_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	ttrpc_reader_free(&c->rd);
}

/* Milliseconds left until DEADLINE_NS, 0 when it has passed. */
static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = hvm_monotonic_ns();

	return now >= deadline_ns ? 0
				  : (int)((deadline_ns - now) / 1000000 + 1);
}

static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do {
		int ms = ms_left(deadline_ns);

		if (!ms)
			return -ETIMEDOUT;
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

static int send_all(int fd, const uint8_t *buf, size_t len,
		    uint64_t deadline_ns)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int err;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			err = wait_fd(fd, POLLOUT, deadline_ns);
			if (err)
				return err;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly one frame into c->rd; anything past it is a protocol
 * error, since one call is in flight at a time. */
static int read_frame(struct ttrpc_client *c, uint64_t deadline_ns)
{
	uint8_t buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		size_t used;
		int r, err;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			err = wait_fd(c->fd, POLLIN, deadline_ns);
			if (err)
				return err;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		r = ttrpc_reader_feed(&c->rd, buf, (size_t)n, &used);
		if (r < 0)
			return r;
		if (r == 1)
			return used == (size_t)n ? 0 : -EPROTO;
	}
}

static int call(struct ttrpc_client *c, const char *service, const char *method,
		const ProtobufCMessage *req,
		const ProtobufCMessageDescriptor *resp_desc,
		ProtobufCMessage **resp, struct ttrpc_status *st,
		int timeout_ms)
{
	Hintvm__Ttrpc__Request env = HINTVM__TTRPC__REQUEST__INIT;
	Hintvm__Ttrpc__Response *answer;
	uint64_t deadline = hvm_monotonic_ns() + (uint64_t)timeout_ms * 1000000;
	uint32_t stream = c->next_stream;
	struct ttrpc_outbuf out;
	uint8_t *payload, *packed;
	size_t plen, elen;
	int err;

	plen = protobuf_c_message_get_packed_size(req);
	payload = malloc(plen ? plen : 1);
	if (!payload)
		return -ENOMEM;
	protobuf_c_message_pack(req, payload);
	env.service = (char *)service;
	env.method = (char *)method;
	env.payload.data = payload;
	env.payload.len = plen;
	env.timeout_nano = (int64_t)timeout_ms * 1000000;
	elen = hintvm__ttrpc__request__get_packed_size(&env);
	packed = malloc(elen ? elen : 1);
	if (!packed) {
		free(payload);
		return -ENOMEM;
	}
	hintvm__ttrpc__request__pack(&env, packed);
	free(payload);
	ttrpc_outbuf_init(&out, TTRPC_MAX_DATA + TTRPC_HEADER_LEN);
	err = ttrpc_outbuf_frame(&out, stream, TTRPC_MSG_REQUEST, 0, packed,
				 elen);
	free(packed);
	if (!err)
		err = send_all(c->fd, out.buf, ttrpc_outbuf_pending(&out),
			       deadline);
	ttrpc_outbuf_free(&out);
	if (err)
		return err;
	/* Odd ids only, 1 again after the last. */
	c->next_stream = stream >= UINT32_MAX - 1 ? 1 : stream + 2;
	err = read_frame(c, deadline);
	if (err)
		return err;
	if (c->rd.h.type != TTRPC_MSG_RESPONSE || c->rd.h.stream_id != stream)
		return -EPROTO;
	answer = hintvm__ttrpc__response__unpack(NULL, c->rd.h.length,
						 c->rd.data);
	if (!answer)
		return -EBADMSG;
	/* No status is OK, as ttrpc's Go client reads it. */
	st->code = answer->status ? answer->status->code : 0;
	snprintf(st->message, sizeof(st->message), "%s",
		 answer->status && answer->status->message
			 ? answer->status->message
			 : "");
	err = 0;
	if (st->code == GOOGLE__RPC__CODE__OK) {
		*resp = protobuf_c_message_unpack(resp_desc, NULL,
						  answer->payload.len,
						  answer->payload.data);
		if (!*resp)
			err = -EBADMSG;
	}
	hintvm__ttrpc__response__free_unpacked(answer, NULL);
	return err;
}

int ttrpc_client_call(struct ttrpc_client *c, const char *service,
		      const char *method, const ProtobufCMessage *req,
		      const ProtobufCMessageDescriptor *resp_desc,
		      ProtobufCMessage **resp, struct ttrpc_status *st,
		      int timeout_ms)
{
	int err;

	*resp = NULL;
	if (c->fd < 0)
		return -ENOTCONN;
	err = call(c, service, method, req, resp_desc, resp, st, timeout_ms);
	if (err && err != -ENOMEM) {
		/* Out of step with the server: start over on a new socket. */
		close(c->fd);
		c->fd = -1;
		ttrpc_reader_free(&c->rd);
	}
	return err;
}
