/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * I/O rate limits of one device (`-d PATH,iops=N,bw=BYTES`, `-n ...,bw=`):
 * an operations bucket and a bytes bucket (token_bucket.h), both or
 * neither taken per request. A request that does not fit is deferred, not
 * waited for: the device keeps it, stops taking requests from its queue,
 * and a one-shot timerfd watched by the device's event loop calls
 * resume() when enough tokens will have flowed in. Nothing spins and no
 * vCPU ever blocks on a limit.
 */
#ifndef HVM_DEVICES_VIRTIO_RATE_LIMITER_H
#define HVM_DEVICES_VIRTIO_RATE_LIMITER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event_loop.h"
#include "devices/virtio/token_bucket.h"

struct rate_limiter {
	struct token_bucket ops;
	struct token_bucket bytes;
	bool limited; /* any limit at all: else admit() always says yes */
	bool armed; /* the timer is set */
	int timer_fd;
	struct event_watch watch;
	/* On the event loop thread, when a deferred request may go. */
	void (*resume)(struct rate_limiter *rl);
	uint64_t deferred; /* requests that had to wait */
};

/*
 * OPS_PER_S operations and BYTES_PER_S bytes per second (0: no limit of
 * that kind). With a limit, creates the timer and watches it on LOOP.
 * Returns 0 or -errno (recorded).
 */
int rate_limiter_init(struct rate_limiter *rl, uint64_t ops_per_s,
		      uint64_t bytes_per_s, struct event_loop *loop,
		      void (*resume)(struct rate_limiter *rl));

/*
 * May one operation of BYTES bytes go now? Takes its tokens and says yes,
 * or arms the timer (resume() follows) and says no. On the loop thread.
 */
bool rate_limiter_admit(struct rate_limiter *rl, uint64_t bytes);

/* Charge BYTES already moved (a received packet); may go into debt. */
void rate_limiter_charge(struct rate_limiter *rl, uint64_t bytes);

/* After the event loop is gone (its watch points here). */
void rate_limiter_destroy(struct rate_limiter *rl);

#endif
