// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "hintvm/hintvm.h"

/* Longest line accepted from a VM (a stats reply of many vCPUs). */
#define MAX_LINE (16u << 20)

int ctl_conn_open(struct ctl_conn *c, const char *name_or_path)
{
	*c = (struct ctl_conn){ .fd = -1 };
	c->fd = hvm_control_connect(name_or_path);
	return c->fd < 0 ? c->fd : 0;
}

void ctl_conn_close(struct ctl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	*c = (struct ctl_conn){ .fd = -1 };
}

int ctl_conn_send(struct ctl_conn *c, const char *line)
{
	size_t len = strlen(line), done = 0;

	while (done < len) {
		ssize_t n = send(c->fd, line + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			errno = err; /* for the caller's message */
			return -err;
		}
		done += (size_t)n;
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

char *ctl_conn_read_line(struct ctl_conn *c, int timeout_ms)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	char *nl;

	/* Drop the line handed out last time. */
	if (c->buf && (nl = memchr(c->buf, '\0', c->used))) {
		size_t gone = (size_t)(nl - c->buf) + 1;

		memmove(c->buf, c->buf + gone, c->used - gone);
		c->used -= gone;
	}
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int wait = -1, r;
		ssize_t n;

		nl = c->buf ? memchr(c->buf, '\n', c->used) : NULL;
		if (nl) {
			*nl = '\0';
			return c->buf;
		}
		if (c->used + 4096 > c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			char *grown;

			if (cap > MAX_LINE) {
				errno = EMSGSIZE;
				return NULL;
			}
			grown = realloc(c->buf, cap);
			if (!grown)
				return NULL;
			c->buf = grown;
			c->cap = cap;
		}
		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0) {
				errno = ETIMEDOUT;
				return NULL;
			}
			wait = (int)left;
		}
		r = poll(&p, 1, wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return NULL;
		if (r == 0) {
			errno = ETIMEDOUT;
			return NULL;
		}
		n = read(c->fd, c->buf + c->used, c->cap - c->used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = 0;
			return NULL;
		}
		c->used += (size_t)n;
	}
}

struct json_object *ctl_call(const char *name_or_path, const char *cmd,
			     int timeout_ms)
{
	struct json_object *reply = NULL;
	struct ctl_conn c;
	char request[128];
	char *line;

	if (ctl_conn_open(&c, name_or_path) < 0)
		return NULL;
	snprintf(request, sizeof(request), "{\"v\":1,\"cmd\":\"%s\"}\n", cmd);
	if (ctl_conn_send(&c, request) == 0) {
		line = ctl_conn_read_line(&c, timeout_ms);
		if (line)
			reply = json_tokener_parse(line);
	}
	ctl_conn_close(&c);
	return reply;
}

struct json_object *json_path(struct json_object *obj, const char *path)
{
	char part[64];

	while (obj && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		if (!json_object_object_get_ex(obj, part, &obj))
			return NULL;
		path += n + (path[n] == '.');
	}
	return obj;
}

int ctl_conn_send_fds(struct ctl_conn *c, const char *line, const int *fds,
		      unsigned int nr)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctrl;
	size_t len = strlen(line);
	struct iovec iov = { (void *)line, len };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = ctrl.buf,
			      .msg_controllen = CMSG_SPACE(sizeof(int) * nr) };
	struct cmsghdr *h;
	ssize_t n;

	if (nr > 4)
		return -EINVAL;
	memset(&ctrl, 0, sizeof(ctrl));
	h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int) * nr);
	memcpy(CMSG_DATA(h), fds, sizeof(int) * nr);
	do
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* The files went with the first byte; the rest is plain text. */
	return (size_t)n < len ? ctl_conn_send(c, line + n) : 0;
}
