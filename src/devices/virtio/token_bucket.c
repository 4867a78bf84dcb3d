// SPDX-License-Identifier: LGPL-2.1-or-later
#include "devices/virtio/token_bucket.h"

#define NS_PER_S 1000000000ull

void token_bucket_init(struct token_bucket *tb, uint64_t rate, uint64_t burst,
		       uint64_t now_ns)
{
	if (!burst)
		burst = rate;
	/* Keep the arithmetic below inside 64 bits. */
	if (burst > (uint64_t)INT64_MAX / 2)
		burst = (uint64_t)INT64_MAX / 2;
	*tb = (struct token_bucket){
		.rate = rate,
		.burst = burst,
		.tokens = (int64_t)burst,
		.last_ns = now_ns,
	};
}

static void refill(struct token_bucket *tb, uint64_t now_ns)
{
	unsigned __int128 scaled;
	uint64_t elapsed, room;

	if (now_ns <= tb->last_ns)
		return; /* a clock that went back adds nothing */
	elapsed = now_ns - tb->last_ns;
	tb->last_ns = now_ns;
	/* tokens = elapsed * rate / 1e9, keeping the fraction for later. */
	scaled = (unsigned __int128)elapsed * tb->rate + tb->remainder;
	room = (uint64_t)((int64_t)tb->burst - tb->tokens);
	if (scaled / NS_PER_S >= room) {
		tb->tokens = (int64_t)tb->burst; /* full: the rest spills */
		tb->remainder = 0;
	} else {
		tb->tokens += (int64_t)(scaled / NS_PER_S);
		tb->remainder = (uint64_t)(scaled % NS_PER_S);
	}
}

/* What must be in the bucket before an operation of N tokens may go. */
static int64_t needed(const struct token_bucket *tb, uint64_t n)
{
	return (int64_t)(n < tb->burst ? n : tb->burst);
}

bool token_bucket_take(struct token_bucket *tb, uint64_t n, uint64_t now_ns)
{
	if (!tb->rate)
		return true;
	refill(tb, now_ns);
	if (tb->tokens < needed(tb, n))
		return false;
	/* Debt is bounded: at most one operation's worth beyond the bucket. */
	tb->tokens -= n > (uint64_t)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)n;
	return true;
}

void token_bucket_charge(struct token_bucket *tb, uint64_t n, uint64_t now_ns)
{
	int64_t floor = -(int64_t)tb->burst * 4;

	if (!tb->rate)
		return;
	refill(tb, now_ns);
	if (n > (uint64_t)INT64_MAX / 4)
		n = (uint64_t)INT64_MAX / 4;
	/* Bounded debt: a burst of huge packets waits seconds, not hours. */
	tb->tokens = tb->tokens - (int64_t)n < floor ? floor
						     : tb->tokens - (int64_t)n;
}

uint64_t token_bucket_wait_ns(struct token_bucket *tb, uint64_t n,
			      uint64_t now_ns)
{
	unsigned __int128 missing_scaled;
	int64_t missing;

	if (!tb->rate)
		return 0;
	refill(tb, now_ns);
	missing = needed(tb, n) - tb->tokens;
	if (missing <= 0)
		return 0;
	/* Round up: waking a nanosecond early would find too few tokens. */
	missing_scaled = (unsigned __int128)missing * NS_PER_S;
	if (missing_scaled <= tb->remainder)
		return 1;
	missing_scaled -= tb->remainder;
	return (uint64_t)((missing_scaled + tb->rate - 1) / tb->rate);
}
