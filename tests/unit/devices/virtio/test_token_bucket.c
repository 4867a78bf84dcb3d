// SPDX-License-Identifier: LGPL-2.1-or-later
/* The token bucket behind --disk iops=/bw= and --net bw= (token_bucket.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "devices/virtio/token_bucket.h"

#define S 1000000000ull
#define MS 1000000ull

static void unlimited_always_passes(void **state)
{
	struct token_bucket tb;

	token_bucket_init(&tb, 0, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(token_bucket_take(&tb, 1u << 30, 0));
	assert_int_equal(token_bucket_wait_ns(&tb, 1u << 30, 0), 0);
}

static void starts_full_then_refills_at_the_rate(void **state)
{
	struct token_bucket tb;

	token_bucket_init(&tb, 100, 10, 0); /* 100/s, bucket of 10 */
	for (int i = 0; i < 10; i++)
		assert_true(token_bucket_take(&tb, 1, 0));
	assert_false(token_bucket_take(&tb, 1, 0));
	/* One token every 10 ms. */
	assert_int_equal(token_bucket_wait_ns(&tb, 1, 0), 10 * MS);
	assert_false(token_bucket_take(&tb, 1, 10 * MS - 1));
	assert_true(token_bucket_take(&tb, 1, 10 * MS));
	assert_false(token_bucket_take(&tb, 1, 10 * MS));
	/* Half a second refills 50, but the bucket holds 10. */
	for (int i = 0; i < 10; i++)
		assert_true(token_bucket_take(&tb, 1, 510 * MS));
	assert_false(token_bucket_take(&tb, 1, 510 * MS));
}

static void default_burst_is_one_second(void **state)
{
	struct token_bucket tb;

	token_bucket_init(&tb, 7, 0, 0);
	assert_int_equal(tb.burst, 7);
}

static void fractions_of_a_token_are_kept(void **state)
{
	struct token_bucket tb;
	int passed = 0;

	token_bucket_init(&tb, 3, 5, 0); /* 3/s, never full below */
	for (int i = 0; i < 5; i++)
		assert_true(token_bucket_take(&tb, 1, 0));
	/* 100 ms steps bring 0.3 tokens each: 3 tokens in 1 s, no fewer. */
	for (uint64_t t = 100 * MS; t <= S; t += 100 * MS)
		passed += token_bucket_take(&tb, 1, t);
	assert_int_equal(passed, 3);
}

static void larger_than_the_bucket_goes_into_debt(void **state)
{
	struct token_bucket tb;

	/* 1 MiB/s, bucket 100 KiB, a 1 MiB request: passes when full... */
	token_bucket_init(&tb, 1 << 20, 100 << 10, 0);
	assert_true(token_bucket_take(&tb, 1 << 20, 0));
	/* ... and the debt is repaid before anything else goes. */
	assert_false(token_bucket_take(&tb, 512, 800 * MS));
	/* (1 MiB - 100 KiB + 512) at 1 MiB/s: 902.8 ms after the start. */
	uint64_t wait = token_bucket_wait_ns(&tb, 512, 800 * MS);
	assert_true(wait > 102 * MS && wait < 103 * MS);
	assert_false(token_bucket_take(&tb, 512, 800 * MS + wait - 1));
	assert_true(token_bucket_take(&tb, 512, 800 * MS + wait));
}

static void wait_is_exact_at_odd_rates(void **state)
{
	struct token_bucket tb;
	uint64_t now = 0;

	token_bucket_init(&tb, 333, 1, 0);
	for (int i = 0; i < 1000; i++) {
		uint64_t wait = token_bucket_wait_ns(&tb, 1, now);

		if (wait) {
			assert_false(token_bucket_take(&tb, 1, now + wait - 1));
			now += wait;
		}
		assert_true(token_bucket_take(&tb, 1, now));
	}
	/* 1000 tokens at 333/s, the first free: 999 / 333 s = 3 s. */
	assert_true(now >= 3 * S - 1000 && now <= 3 * S + 1000);
}

static void clock_going_back_adds_nothing(void **state)
{
	struct token_bucket tb;

	token_bucket_init(&tb, 10, 1, 5 * S);
	assert_true(token_bucket_take(&tb, 1, 5 * S));
	assert_false(token_bucket_take(&tb, 1, 1 * S));
	assert_false(token_bucket_take(&tb, 1, 5 * S));
	assert_true(token_bucket_take(&tb, 1, 5 * S + 100 * MS));
}

static void charge_goes_into_bounded_debt(void **state)
{
	struct token_bucket tb;

	token_bucket_init(&tb, 1000, 100, 0);
	token_bucket_charge(&tb, 1ull << 40, 0);
	assert_int_equal(tb.tokens, -400); /* floor: four buckets */
	/* Needed 0 tokens: the debt alone keeps it waiting, 400 ms. */
	assert_int_equal(token_bucket_wait_ns(&tb, 0, 0), 400 * MS);
	assert_true(token_bucket_take(&tb, 0, 400 * MS));
}

/* A greedy client over 10 s gets the rate times 10 plus one bucket. */
static void greedy_client_gets_the_rate(void **state)
{
	struct token_bucket tb;
	uint64_t now = 0, bytes = 0;

	token_bucket_init(&tb, 10 << 20, 1 << 20, 0);
	while (now < 10 * S) {
		if (token_bucket_take(&tb, 65536, now))
			bytes += 65536;
		else
			now += token_bucket_wait_ns(&tb, 65536, now);
	}
	assert_true(bytes >= (100ull << 20));
	assert_true(bytes <= (101ull << 20) + 65536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unlimited_always_passes),
		cmocka_unit_test(starts_full_then_refills_at_the_rate),
		cmocka_unit_test(default_burst_is_one_second),
		cmocka_unit_test(fractions_of_a_token_are_kept),
		cmocka_unit_test(larger_than_the_bucket_goes_into_debt),
		cmocka_unit_test(wait_is_exact_at_odd_rates),
		cmocka_unit_test(clock_going_back_adds_nothing),
		cmocka_unit_test(charge_goes_into_bounded_debt),
		cmocka_unit_test(greedy_client_gets_the_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
