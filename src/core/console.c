// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "core/console.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

#define ESCAPE_CHAR 0x01 /* Ctrl-A, as QEMU's -nographic */

struct console {
	int in_fd;
	int wake_fd; /* eventfd: console_stop() wakes the thread */
	pthread_t thread;
	struct console_sink sink;
	struct console_in_stats *stats; /* may be NULL */
	bool raw;
	struct termios saved;
	bool escape; /* Ctrl-A is hintvm's escape key on this terminal */
	bool escape_pending;
};

/*
 * The terminal must come back even if the process dies on a path that
 * never reaches console_stop() (exit() from an embedder, a fatal signal
 * caught by the CLI): keep one saved state for an atexit hook.
 */
static pthread_mutex_t tty_lock = PTHREAD_MUTEX_INITIALIZER;
static struct termios tty_saved;
static int tty_fd = -1;

static void restore_tty_at_exit(void)
{
	pthread_mutex_lock(&tty_lock);
	if (tty_fd >= 0)
		tcsetattr(tty_fd, TCSANOW, &tty_saved);
	tty_fd = -1;
	pthread_mutex_unlock(&tty_lock);
}

static void enter_raw_mode(struct console *con)
{
	static bool atexit_registered;
	struct termios raw;

	if (!isatty(con->in_fd) || tcgetattr(con->in_fd, &con->saved) < 0)
		return;
	raw = con->saved;
	cfmakeraw(&raw);
	/*
	 * Raw input; output processed as the terminal's owner set it. A
	 * user's own terminal keeps OPOST and ONLCR, as under QEMU's -serial
	 * stdio: guests that write a bare "\n" (the test kernel, firmware)
	 * and hintvm's own messages on stderr stay readable, and the "\r\r\n"
	 * a Linux guest's tty then produces looks the same on a screen. A
	 * terminal handed over fully raw (hintvm-runtime's, like the ones
	 * runc gives containers) stays raw: a container's line ends in
	 * exactly what its guest tty wrote.
	 */
	raw.c_oflag = con->saved.c_oflag;
	pthread_mutex_lock(&tty_lock);
	if (tty_fd < 0) {
		tty_saved = con->saved;
		tty_fd = con->in_fd;
		if (!atexit_registered)
			atexit_registered = atexit(restore_tty_at_exit) == 0;
	}
	pthread_mutex_unlock(&tty_lock);
	if (tcsetattr(con->in_fd, TCSANOW, &raw) == 0)
		con->raw = true;
	/*
	 * The Ctrl-A escape is for a user at a terminal hintvm made raw. A
	 * terminal that came raw (no line editing, no signal keys: a
	 * container's, from hintvm-runtime or an engine) belongs to the
	 * guest's programs: every byte passes, Ctrl-A included, as with
	 * runc; the container is stopped through its engine.
	 */
	con->escape = con->raw && (con->saved.c_lflag & (ICANON | ISIG));
}

static void count(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/*
 * Hand BUF to the guest whole: what the device does not take now is
 * offered again every millisecond (the guest reads its queue, or posts
 * receive buffers) until it is taken or the console stops.
 */
static void deliver_all(struct console *con, const uint8_t *buf, size_t len)
{
	bool waited = false;

	while (len) {
		size_t n = con->sink.deliver(con->sink.ctx, buf, len);
		struct pollfd wake = { .fd = con->wake_fd, .events = POLLIN };

		buf += n;
		len -= n;
		if (con->stats)
			count(&con->stats->bytes, n);
		if (!len)
			break;
		if (con->stats && !waited)
			count(&con->stats->waits, 1);
		waited = true;
		if (poll(&wake, 1, 1) > 0)
			return;
	}
}

/* Handle the Ctrl-A escape; returns false when the user asked to quit. */
static bool filter_input(struct console *con, uint8_t *buf, size_t *len)
{
	size_t out = 0;

	for (size_t i = 0; i < *len; i++) {
		uint8_t c = buf[i];

		if (con->escape_pending) {
			con->escape_pending = false;
			if (c == 'x' || c == 'X')
				return false;
			if (c != ESCAPE_CHAR)
				continue; /* unknown escape: swallow */
		} else if (c == ESCAPE_CHAR && con->escape) {
			con->escape_pending = true;
			continue;
		}
		buf[out++] = c;
	}
	*len = out;
	return true;
}

static void *console_thread(void *arg)
{
	struct console *con = arg;
	uint8_t buf[256];

	pthread_setname_np(pthread_self(), "hvm-console-in");
	sandbox_thread_enter(SANDBOX_CONSOLE_IN);

	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = con->wake_fd, .events = POLLIN },
			{ .fd = con->in_fd, .events = POLLIN },
		};
		ssize_t n;
		size_t len;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents)
			break;
		if (!(fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(con->in_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break; /* EOF: the guest simply gets no more input */
		len = (size_t)n;
		if (!filter_input(con, buf, &len)) {
			con->sink.quit(con->sink.quit_ctx);
			break;
		}
		deliver_all(con, buf, len);
	}
	return NULL;
}

struct console *console_start(int in_fd, struct console_sink sink,
			      struct console_in_stats *stats)
{
	struct console *con = calloc(1, sizeof(*con));

	if (!con)
		return NULL;
	con->in_fd = in_fd;
	con->sink = sink;
	con->stats = stats;
	con->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (con->wake_fd < 0) {
		free(con);
		return NULL;
	}
	if (in_fd >= 0) {
		enter_raw_mode(con);
		if (vm_thread_create(&con->thread, console_thread, con)) {
			console_stop(con);
			return NULL;
		}
	} else {
		con->in_fd = -1;
	}
	return con;
}

void console_stop(struct console *con)
{
	uint64_t one = 1;

	if (!con)
		return;
	if (con->in_fd >= 0 && con->thread) {
		if (write(con->wake_fd, &one, sizeof(one)) < 0)
			pr_warn("cannot wake the console thread");
		pthread_join(con->thread, NULL);
	}
	if (con->raw) {
		tcsetattr(con->in_fd, TCSANOW, &con->saved);
		pthread_mutex_lock(&tty_lock);
		tty_fd = -1;
		pthread_mutex_unlock(&tty_lock);
	}
	close(con->wake_fd);
	free(con);
}
