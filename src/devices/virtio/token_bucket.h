/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A token bucket (Firecracker's rate limiter is the anchor): RATE tokens
 * per second flow into a bucket that holds at most BURST; an operation of
 * N tokens may proceed when the bucket holds min(N, BURST), and then takes
 * all N, so the bucket may go into debt (an operation larger than the
 * bucket still passes, once, when the bucket is full, and the debt is
 * repaid before anything else passes). Pure arithmetic on a caller's
 * clock, so every case is unit-tested; the timer that wakes a deferred
 * request lives in rate_limiter.c.
 */
#ifndef HVM_DEVICES_VIRTIO_TOKEN_BUCKET_H
#define HVM_DEVICES_VIRTIO_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct token_bucket {
	uint64_t rate; /* tokens per second; 0: unlimited */
	uint64_t burst; /* capacity in tokens */
	int64_t tokens; /* may be negative: debt */
	uint64_t last_ns; /* clock of the last refill */
	uint64_t remainder; /* sub-token part of the last refill, in ns*rate */
};

/*
 * RATE tokens per second (0: unlimited), bucket of BURST tokens (0: one
 * second's worth), full at NOW_NS.
 */
void token_bucket_init(struct token_bucket *tb, uint64_t rate, uint64_t burst,
		       uint64_t now_ns);

/* Take N tokens at NOW_NS if they may be taken; false leaves it as it was. */
bool token_bucket_take(struct token_bucket *tb, uint64_t n, uint64_t now_ns);

/*
 * Take N tokens at NOW_NS whatever the bucket holds (into debt): for work
 * whose size is known only once done (a received packet).
 */
void token_bucket_charge(struct token_bucket *tb, uint64_t n, uint64_t now_ns);

/* How long from NOW_NS until N tokens may be taken (0: now). */
uint64_t token_bucket_wait_ns(struct token_bucket *tb, uint64_t n,
			      uint64_t now_ns);

#endif
