// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "devices/virtio/rate_limiter.h"

/*
 * A bucket holds a tenth of a second's worth: a limit then holds over any
 * window longer than that, and a request larger than the bucket still
 * goes (into debt) when the bucket is full.
 */
#define BURST_DIVISOR 10

static uint64_t burst_of(uint64_t rate)
{
	return rate / BURST_DIVISOR ? rate / BURST_DIVISOR : 1;
}

static void timer_fired(struct event_watch *w)
{
	struct rate_limiter *rl =
		(struct rate_limiter *)((char *)w -
					offsetof(struct rate_limiter, watch));

	rl->armed = false;
	rl->resume(rl);
}

int rate_limiter_init(struct rate_limiter *rl, uint64_t ops_per_s,
		      uint64_t bytes_per_s, struct event_loop *loop,
		      void (*resume)(struct rate_limiter *rl))
{
	uint64_t now = hvm_monotonic_ns();
	int r;

	*rl = (struct rate_limiter){ .timer_fd = -1, .resume = resume };
	token_bucket_init(&rl->ops, ops_per_s, burst_of(ops_per_s), now);
	token_bucket_init(&rl->bytes, bytes_per_s, burst_of(bytes_per_s), now);
	rl->limited = ops_per_s || bytes_per_s;
	if (!rl->limited)
		return 0;
	rl->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (rl->timer_fd < 0)
		return hvm_set_errno_error("rate limit timer");
	/* Reading the expiry count is what drain_eventfd does. */
	r = event_loop_watch(loop, &rl->watch, rl->timer_fd, true, timer_fired);
	if (r < 0) {
		close(rl->timer_fd);
		rl->timer_fd = -1;
		return hvm_set_error(r, "rate limit timer: %s", strerror(-r));
	}
	return 0;
}

bool rate_limiter_admit(struct rate_limiter *rl, uint64_t bytes)
{
	uint64_t now, wait_ops, wait_bytes, wait;
	struct itimerspec when = { 0 };

	if (!rl->limited)
		return true;
	now = hvm_monotonic_ns();
	wait_ops = token_bucket_wait_ns(&rl->ops, 1, now);
	wait_bytes = token_bucket_wait_ns(&rl->bytes, bytes, now);
	if (!wait_ops && !wait_bytes) {
		token_bucket_take(&rl->ops, 1, now);
		token_bucket_take(&rl->bytes, bytes, now);
		return true;
	}
	rl->deferred++;
	if (rl->armed)
		return false;
	wait = wait_ops > wait_bytes ? wait_ops : wait_bytes;
	when.it_value.tv_sec = (time_t)(wait / 1000000000ull);
	when.it_value.tv_nsec = (long)(wait % 1000000000ull);
	if (timerfd_settime(rl->timer_fd, 0, &when, NULL) < 0) {
		/* Cannot defer: let it go rather than stall the queue. */
		pr_warn_ratelimited("rate limit timer: %s", strerror(errno));
		return true;
	}
	rl->armed = true;
	return false;
}

void rate_limiter_charge(struct rate_limiter *rl, uint64_t bytes)
{
	if (rl->limited)
		token_bucket_charge(&rl->bytes, bytes, hvm_monotonic_ns());
}

void rate_limiter_destroy(struct rate_limiter *rl)
{
	if (rl->timer_fd >= 0)
		close(rl->timer_fd);
	rl->timer_fd = -1;
}
