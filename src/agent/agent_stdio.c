// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The main process's stdio over vsock (docs/agent.md, "The main process's
 * stdio"), for embedders that set hvm_config_set_agent_stdio_fds(): the
 * guest opens one connection per stream to host ports AGENT_STDIN_PORT,
 * AGENT_STDOUT_PORT and AGENT_STDERR_PORT, and each is copied one way
 * between its connection and the embedder's fd. Unlike a serial console,
 * stderr stays apart from stdout and the end of stdin reaches the process.
 *
 * One thread per stream ("hvm-stdio"): a process that reads its input
 * while it writes its output deadlocks a single copier whose stdout is
 * full. The threads start before the sandbox closes; the event loop only
 * hands them connections through a pipe, which also stops them. Writes to
 * the embedder's fds are at most PIPE_BUF bytes after POLLOUT, so they do
 * not block and a stop is seen in time; the fds' flags are left alone
 * (the embedder may share them). The threads run with every signal
 * blocked: a reader that went away is EPIPE here, not a SIGPIPE.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/agent_proto.h"
#include "agent/agent_stdio.h"
#include "base/log.h"
#include "core/vm.h"
#include "hintvm/hintvm.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

#define STREAM_BUF (64 * 1024)
/* After a stop, a copy that makes no progress for this long ends. */
#define DRAIN_IDLE_MS 1000

struct stdio_stream {
	pthread_t thread;
	bool running;
	bool to_guest; /* stdin: host fd -> connection */
	int host_fd; /* the embedder's, never closed here */
	int pipe[2]; /* connections (fd numbers) in, -1 to stop */
	char buf[STREAM_BUF];
};

struct agent_stdio {
	struct stdio_stream streams[AGENT_STDIO_STREAMS];
};

const uint32_t agent_stdio_port[AGENT_STDIO_STREAMS] = { AGENT_STDIN_PORT,
							 AGENT_STDOUT_PORT,
							 AGENT_STDERR_PORT };

enum pump_end { PUMP_DONE, PUMP_STOPPED };

/*
 * A message on the stream's pipe while it copies: -1 (or a broken pipe)
 * stops it; a second connection for the same stream is refused (closed).
 */
static bool stop_requested(struct stdio_stream *s)
{
	int fd;

	if (read(s->pipe[0], &fd, sizeof(fd)) != sizeof(fd) || fd < 0)
		return true;
	close(fd);
	return false;
}

/*
 * Copy SRC to DST until SRC ends or either fails (PUMP_DONE), or until a
 * stop. HUP: an fd whose hang-up also ends the copy (the guest's
 * connection, while the host's stdin has nothing to say), or -1. A stop
 * lets the copy finish while it makes progress (at teardown the device
 * is gone first, so what the guest wrote is delivered, then SRC ends),
 * and ends it after DRAIN_IDLE_MS without any (an embedder that stopped
 * reading does not hold the teardown).
 */
static enum pump_end pump(struct stdio_stream *s, int src, int dst, int hup)
{
	size_t len = 0, off = 0;
	bool stopping = false;

	for (;;) {
		bool writing = off < len;
		struct pollfd p[3] = {
			{ .fd = stopping ? -1 : s->pipe[0], .events = POLLIN },
			{ .fd = writing ? dst : src,
			  .events = writing ? POLLOUT : POLLIN },
			{ .fd = hup, .events = 0 }, /* POLLHUP comes anyway */
		};
		nfds_t n = hup >= 0 ? 3 : 2;
		enum pump_end end = stopping ? PUMP_STOPPED : PUMP_DONE;
		short ev, hup_ev;
		ssize_t r;

		r = poll(p, n, stopping ? DRAIN_IDLE_MS : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return end;
		ev = p[1].revents;
		hup_ev = n == 3 ? p[2].revents : 0;
		if (!writing && (ev & POLLIN)) {
			r = read(src, s->buf, sizeof(s->buf));
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0)
				return end;
			len = (size_t)r;
			off = 0;
			continue;
		}
		if ((ev & (POLLERR | POLLNVAL)) ||
		    ((ev & POLLHUP) && !(ev & POLLOUT)) ||
		    (hup_ev & (POLLHUP | POLLERR | POLLNVAL)))
			return end;
		if (writing && (ev & POLLOUT)) {
			r = write(dst, s->buf + off,
				  len - off < PIPE_BUF ? len - off : PIPE_BUF);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0)
				return end;
			off += (size_t)r;
			continue;
		}
		if (p[0].revents && stop_requested(s))
			stopping = true;
	}
}

static void *stream_thread(void *arg)
{
	struct stdio_stream *s = arg;
	enum pump_end end = PUMP_DONE;
	int conn;

	pthread_setname_np(pthread_self(), "hvm-stdio"); /* prctl: first */
	sandbox_thread_enter(SANDBOX_AGENT_STDIO);
	/* One connection after another: a guest may open a stream again. */
	while (end == PUMP_DONE) {
		ssize_t n = read(s->pipe[0], &conn, sizeof(conn));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(conn) || conn < 0)
			break;
		if (s->to_guest)
			end = pump(s, s->host_fd, conn, conn);
		else
			end = pump(s, conn, s->host_fd, -1);
		/* The guest sees the end of its stdin, or that we are done. */
		close(conn);
	}
	return NULL;
}

static void hand_over(struct agent_stdio *st, int stream, int fd)
{
	struct stdio_stream *s = &st->streams[stream];

	/* Never blocks: a pipe holds thousands of fd numbers. */
	if (write(s->pipe[1], &fd, sizeof(fd)) != sizeof(fd))
		close(fd);
}

static void on_stdin(int fd, void *opaque)
{
	hand_over(opaque, 0, fd);
}

static void on_stdout(int fd, void *opaque)
{
	hand_over(opaque, 1, fd);
}

static void on_stderr(int fd, void *opaque)
{
	hand_over(opaque, 2, fd);
}

int agent_stdio_start(struct vm *vm)
{
	const struct hvm_config *cfg = vm->cfg;
	const int host_fd[AGENT_STDIO_STREAMS] = { cfg->agent_stdio_fd[0],
						   cfg->agent_stdio_fd[1],
						   cfg->agent_stdio_fd[2] };
	struct agent_stdio *st;
	sigset_t all, old;
	int r = 0;

	if (host_fd[0] < 0)
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->agent_stdio = st;
	for (int i = 0; i < AGENT_STDIO_STREAMS; i++) {
		st->streams[i].pipe[0] = st->streams[i].pipe[1] = -1;
		st->streams[i].host_fd = host_fd[i];
		st->streams[i].to_guest = i == 0;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < AGENT_STDIO_STREAMS && !r; i++) {
		struct stdio_stream *s = &st->streams[i];

		if (pipe2(s->pipe, O_CLOEXEC) < 0) {
			s->pipe[0] = s->pipe[1] = -1;
			r = hvm_set_errno_error("agent stdio: pipe");
		} else if (vm_thread_create(&s->thread, stream_thread, s)) {
			r = hvm_set_error(-EAGAIN,
					  "agent stdio: cannot start a thread");
		} else {
			s->running = true;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

void (*const agent_stdio_on_connect[AGENT_STDIO_STREAMS])(int, void *) = {
	on_stdin, on_stdout, on_stderr
};

void agent_stdio_destroy(struct vm *vm)
{
	struct agent_stdio *st = vm->agent_stdio;
	int stop = -1;

	if (!st)
		return;
	/* All stops first: the copiers drain side by side. */
	for (int i = 0; i < AGENT_STDIO_STREAMS; i++) {
		struct stdio_stream *s = &st->streams[i];

		if (s->running &&
		    write(s->pipe[1], &stop, sizeof(stop)) != sizeof(stop)) {
			pthread_detach(s->thread);
			s->running = false;
		}
	}
	for (int i = 0; i < AGENT_STDIO_STREAMS; i++) {
		struct stdio_stream *s = &st->streams[i];

		if (s->running)
			pthread_join(s->thread, NULL);
		if (s->pipe[0] >= 0)
			close(s->pipe[0]);
		if (s->pipe[1] >= 0)
			close(s->pipe[1]);
	}
	free(st);
	vm->agent_stdio = NULL;
}
