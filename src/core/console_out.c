// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The drain thread never blocks for long either: it waits for POLLOUT
 * (bounded) and then writes at most DRAIN_CHUNK bytes, which a pipe,
 * a Unix socket or a terminal that reported POLLOUT takes without
 * sleeping. So console_out_destroy() returns within the grace time plus
 * one poll interval however stuck the reader is.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/console_out.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

#define DRAIN_CHUNK 512
#define POLL_INTERVAL_MS 50
/* After stop, how long a slow reader still gets to take what is queued. */
#define STOP_GRACE_NS (250ull * 1000 * 1000)

struct console_out {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* data queued, data written, stopping */
	int fd;
	bool reader_gone; /* EPIPE and friends: drop from now on */
	bool flush_timed_out; /* the reader stalled once: no grace at stop */
	bool stopping;
	uint64_t stop_deadline_ns;
	pthread_t thread;
	size_t head, len;
	_Atomic uint64_t written, dropped;
	uint8_t buf[CONSOLE_OUT_BUFFER];
};

/* With the lock held: give up on what is queued. */
static void drop_queued(struct console_out *out)
{
	atomic_fetch_add(&out->dropped, out->len);
	out->head = 0;
	out->len = 0;
	pthread_cond_broadcast(&out->cond);
}

static void *drain_thread(void *arg)
{
	struct console_out *out = arg;

	pthread_setname_np(pthread_self(), "hvm-console-out");
	sandbox_thread_enter(SANDBOX_CONSOLE_OUT);
	pthread_mutex_lock(&out->lock);
	for (;;) {
		struct pollfd p = { .fd = out->fd, .events = POLLOUT };
		size_t chunk;
		ssize_t n = 0;
		int err = 0;

		while (!out->len && !out->stopping)
			pthread_cond_wait(&out->cond, &out->lock);
		if (!out->len)
			break;
		if (out->stopping &&
		    hvm_monotonic_ns() >= out->stop_deadline_ns) {
			drop_queued(out);
			break;
		}
		chunk = CONSOLE_OUT_BUFFER - out->head;
		if (chunk > out->len)
			chunk = out->len;
		if (chunk > DRAIN_CHUNK)
			chunk = DRAIN_CHUNK;
		/* Producers only append behind the queued bytes: these stay. */
		pthread_mutex_unlock(&out->lock);
		if (poll(&p, 1, POLL_INTERVAL_MS) > 0) {
			n = write(out->fd, out->buf + out->head, chunk);
			err = n < 0 ? errno : 0;
		}
		pthread_mutex_lock(&out->lock);
		if (n > 0) {
			out->head =
				(out->head + (size_t)n) % CONSOLE_OUT_BUFFER;
			out->len -= (size_t)n;
			atomic_fetch_add(&out->written, (uint64_t)n);
			pthread_cond_broadcast(&out->cond);
		} else if (err && err != EAGAIN && err != EINTR) {
			/* EPIPE (SIGPIPE is blocked here), EBADF, EIO... */
			out->reader_gone = true;
			drop_queued(out);
		}
	}
	pthread_mutex_unlock(&out->lock);
	return NULL;
}

struct console_out *console_out_create(int fd)
{
	struct console_out *out = calloc(1, sizeof(*out));
	sigset_t all, old;
	int r;

	if (!out) {
		hvm_set_error(-ENOMEM, "out of memory for the console buffer");
		return NULL;
	}
	out->fd = fd;
	pthread_mutex_init(&out->lock, NULL);
	pthread_cond_init(&out->cond, NULL);
	if (fd < 0)
		return out;
	/* No signal for this thread: EPIPE instead of SIGPIPE, for one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = vm_thread_create(&out->thread, drain_thread, out);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		pthread_cond_destroy(&out->cond);
		pthread_mutex_destroy(&out->lock);
		free(out);
		hvm_set_error(-r, "cannot start the console output thread: %s",
			      strerror(r));
		return NULL;
	}
	return out;
}

void console_out_destroy(struct console_out *out)
{
	if (!out)
		return;
	if (out->fd >= 0) {
		pthread_mutex_lock(&out->lock);
		out->stopping = true;
		out->stop_deadline_ns =
			hvm_monotonic_ns() +
			(out->flush_timed_out ? 0 : STOP_GRACE_NS);
		pthread_cond_broadcast(&out->cond);
		pthread_mutex_unlock(&out->lock);
		pthread_join(out->thread, NULL);
	}
	pthread_cond_destroy(&out->cond);
	pthread_mutex_destroy(&out->lock);
	free(out);
}

/* With the lock held: append what fits, count the rest as dropped. */
static size_t queue_locked(struct console_out *out, const uint8_t *buf,
			   size_t len)
{
	size_t room = out->reader_gone ? 0 : CONSOLE_OUT_BUFFER - out->len;
	size_t n = len < room ? len : room;
	size_t tail = (out->head + out->len) % CONSOLE_OUT_BUFFER;
	size_t first = CONSOLE_OUT_BUFFER - tail;

	if (first > n)
		first = n;
	memcpy(out->buf + tail, buf, first);
	memcpy(out->buf, buf + first, n - first);
	if (n && !out->len)
		pthread_cond_broadcast(&out->cond);
	out->len += n;
	if (n < len)
		atomic_fetch_add(&out->dropped, len - n);
	return n;
}

size_t console_out_write(struct console_out *out, const void *buf, size_t len)
{
	size_t n;

	if (!out || out->fd < 0 || !len)
		return len;
	pthread_mutex_lock(&out->lock);
	n = queue_locked(out, buf, len);
	pthread_mutex_unlock(&out->lock);
	return n;
}

size_t console_out_writev(struct console_out *out, const struct iovec *iov,
			  unsigned int nr)
{
	size_t n = 0;

	if (!out || out->fd < 0) {
		for (unsigned int i = 0; i < nr; i++)
			n += iov[i].iov_len;
		return n;
	}
	pthread_mutex_lock(&out->lock);
	for (unsigned int i = 0; i < nr; i++)
		n += queue_locked(out, iov[i].iov_base, iov[i].iov_len);
	pthread_mutex_unlock(&out->lock);
	return n;
}

int console_out_flush(struct console_out *out, unsigned int timeout_ms)
{
	uint64_t deadline = hvm_monotonic_ns() + timeout_ms * 1000000ull;
	int r = 0;

	if (!out || out->fd < 0)
		return 0;
	pthread_mutex_lock(&out->lock);
	while (out->len) {
		uint64_t now = hvm_monotonic_ns();
		struct timespec ts;

		if (now >= deadline) {
			out->flush_timed_out = true;
			r = -ETIMEDOUT;
			break;
		}
		/* The condition variable runs on CLOCK_REALTIME. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += POLL_INTERVAL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&out->cond, &out->lock, &ts);
	}
	pthread_mutex_unlock(&out->lock);
	return r;
}

uint64_t console_out_written(const struct console_out *out)
{
	return out ? atomic_load(&out->written) : 0;
}

uint64_t console_out_dropped(const struct console_out *out)
{
	return out ? atomic_load(&out->dropped) : 0;
}
