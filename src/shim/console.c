// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A terminal task (ctr -t, CreateTaskRequest.terminal): hintvm-runtime's
 * create opens the pty and sends its master over --console-socket, as
 * runc does; the slave is the VMM process's stdio. The shim receives the
 * master and copies, in its poll round, containerd's stdin fifo to the
 * master and the master to the stdout fifo (a terminal has no stderr of
 * its own). ResizePty sets the master's window size.
 *
 * An exec with a terminal (ctr task exec -t) is the same with the
 * runtime's exec in place of create: its helper runs for the exec's
 * whole life, so the master is taken from the socket in the poll round
 * when it comes (shim_console_attach_later), and a size asked before
 * that is kept and set then.
 *
 * The socket is created before create runs and only read after it
 * returned: the runtime's connect and send complete against the listen
 * backlog without an accept, so the shim can wait for the helper.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "base/log.h"
#include "shim/shim.h"

/* How long one write to the pty may wait for room (the guest reads). */
#define CONSOLE_WRITE_WAIT_MS 1000
/* How long a runtime that connected to the console socket may take to send. */
#define CONSOLE_SEND_WAIT_MS 5000

void shim_console_reset(struct shim_console *c)
{
	memset(c, 0, sizeof(*c));
	c->listen = c->master = c->in = c->out = -1;
}

int shim_console_listen(struct shim_console *c, struct ttrpc_server *server,
			const char *name, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	c->server = server;
	if (mkdir(SHIM_STATE_ROOT, 0711) && errno != EEXIST) {
		snprintf(err, errlen, SHIM_STATE_ROOT ": %s", strerror(errno));
		return -errno;
	}
	/* Short and the shim's own: the bundle's path may not fit in
	 * sun_path (k8s ids are 64 characters). */
	snprintf(c->path, sizeof(c->path), SHIM_STATE_ROOT "/%s-%d.sock", name,
		 (int)getpid());
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", c->path);
	unlink(c->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 1)) {
		snprintf(err, errlen, "console socket %s: %s", c->path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	c->listen = fd;
	return 0;
}

/* The master the runtime sent, or -errno. */
static int receive_master(int listen_fd)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int conn, fd = -EPROTO;

	struct pollfd p = { .events = POLLIN };
	ssize_t n;

	conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (conn < 0)
		return -errno;
	/*
	 * The runtime connects, then sends: the connection can be here
	 * before its message is. Wait for it, but not forever: this is the
	 * shim's only thread.
	 */
	p.fd = conn;
	do
		n = poll(&p, 1, CONSOLE_SEND_WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		fd = -ETIMEDOUT;
	else if (n < 0)
		fd = -errno;
	else if ((n = recvmsg(conn, &m, MSG_CMSG_CLOEXEC)) < 0)
		fd = -errno;
	if (n == 1) {
		cm = CMSG_FIRSTHDR(&m);
		if (cm && cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	}
	close(conn);
	return fd;
}

void shim_console_close(struct shim_console *c)
{
	int *fds[] = { &c->listen, &c->master, &c->in, &c->out };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] < 0)
			continue;
		if (c->server)
			ttrpc_server_unwatch(c->server, *fds[i]);
		close(*fds[i]);
		*fds[i] = -1;
	}
	if (c->path[0]) {
		unlink(c->path);
		c->path[0] = '\0';
	}
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			if (poll(&p, 1, CONSOLE_WRITE_WAIT_MS) <= 0)
				return; /* nobody takes it: dropped */
			continue;
		}
		if (n <= 0 && errno != EINTR)
			return;
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		}
	}
}

/*
 * One read from FD, written whole to DST (dropped when DST is closed):
 * true when FD has ended (EOF, or an error other than a retry).
 */
static bool copy_once(int fd, int dst)
{
	char buf[16384];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0) {
		if (dst >= 0)
			write_all(dst, buf, (size_t)n);
		return false;
	}
	return !(n < 0 && (errno == EAGAIN || errno == EINTR));
}

/* Master -> stdout, until the slave side is gone (EIO). */
static void on_master(void *opaque, int fd, short revents)
{
	struct shim_console *c = opaque;

	(void)revents;
	if (copy_once(fd, c->out))
		ttrpc_server_unwatch(c->server, fd);
}

/* stdin fifo -> master; its end stops the copy (the tty stays). */
static void on_stdin(void *opaque, int fd, short revents)
{
	struct shim_console *c = opaque;

	(void)revents;
	if (!copy_once(fd, c->master))
		return;
	ttrpc_server_unwatch(c->server, fd);
	close(fd);
	c->in = -1;
}

static void set_size(struct shim_console *c)
{
	struct winsize ws = { .ws_row = c->rows, .ws_col = c->cols };

	if (c->master >= 0 && c->rows && c->cols)
		ioctl(c->master, TIOCSWINSZ, &ws);
}

int shim_console_attach(struct shim_console *c, char *err, size_t errlen)
{
	int fd = receive_master(c->listen);

	ttrpc_server_unwatch(c->server, c->listen);
	close(c->listen);
	c->listen = -1;
	unlink(c->path);
	c->path[0] = '\0';
	if (fd < 0) {
		snprintf(
			err, errlen,
			"the runtime sent no terminal over its console socket: %s",
			strerror(-fd));
		return fd;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c->master = fd;
	set_size(c);
	if (ttrpc_server_watch(c->server, fd, POLLIN, on_master, c) ||
	    (c->in >= 0 &&
	     ttrpc_server_watch(c->server, c->in, POLLIN, on_stdin, c))) {
		snprintf(err, errlen, "cannot watch the terminal: %s",
			 hvm_error_message());
		return -EIO;
	}
	return 0;
}

/* The runtime connected: take the master and start copying. */
static void on_console_socket(void *opaque, int fd, short revents)
{
	struct shim_console *c = opaque;
	char err[160];

	(void)fd;
	(void)revents;
	if (shim_console_attach(c, err, sizeof(err)))
		rt_error("%s", err);
}

int shim_console_attach_later(struct shim_console *c)
{
	return ttrpc_server_watch(c->server, c->listen, POLLIN,
				  on_console_socket, c);
}

void shim_console_drain(struct shim_console *c)
{
	char buf[16384], err[160];
	ssize_t n;

	/* A runtime that ended before the shim took its master: now. */
	if (c->listen >= 0 && c->master < 0)
		shim_console_attach(c, err, sizeof(err));
	if (c->master < 0) {
		shim_console_close(c);
		return;
	}
	/* What the process wrote last is still in the master: out before
	 * the exit event, then the fifo closes so that containerd sees EOF. */
	while ((n = read(c->master, buf, sizeof(buf))) > 0)
		if (c->out >= 0)
			write_all(c->out, buf, (size_t)n);
	shim_console_close(c);
}

int shim_console_resize(struct shim_console *c, uint32_t width, uint32_t height)
{
	if (c->master < 0 && c->listen < 0)
		return -ENOTTY;
	c->rows = (unsigned short)height;
	c->cols = (unsigned short)width;
	/* Before the master came: set when it comes. */
	if (c->master < 0)
		return 0;
	struct winsize ws = { .ws_row = c->rows, .ws_col = c->cols };

	return ioctl(c->master, TIOCSWINSZ, &ws) ? -errno : 0;
}
