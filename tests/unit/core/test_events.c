// SPDX-License-Identifier: LGPL-2.1-or-later
/* The event ring: subscribers read in order, a slow one loses (counted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/events.h"

static void test_nobody_listening(void **state)
{
	struct event_ring r;
	struct vm_event ev[4];
	uint64_t cursor = 0, lost;

	assert_int_equal(event_ring_init(&r), 0);
	event_post(&r, VM_EVENT_STATE, -1, 0, "paused", NULL);
	/* No subscriber: nothing was stored. */
	assert_int_equal(event_read(&r, &cursor, ev, 4, &lost), 0);
	assert_int_equal(event_ring_tail(&r), 0);
	event_ring_destroy(&r);
}

static void test_order_and_loss(void **state)
{
	struct event_ring r;
	struct vm_event ev[EVENT_RING_SIZE];
	uint64_t fast, slow, lost;
	size_t n;

	assert_int_equal(event_ring_init(&r), 0);
	atomic_store(&r.subscribers, 2);
	fast = slow = event_ring_tail(&r);
	for (unsigned int i = 0; i < 10; i++)
		event_post(&r, VM_EVENT_HALT_POLL, -1, i, NULL, NULL);
	n = event_read(&r, &fast, ev, EVENT_RING_SIZE, &lost);
	assert_int_equal(n, 10);
	assert_int_equal(lost, 0);
	for (unsigned int i = 0; i < 10; i++) {
		assert_int_equal(ev[i].seq, i);
		assert_int_equal(ev[i].a, i);
	}
	/* The slow reader falls 100 events past the ring's size behind. */
	for (unsigned int i = 10; i < EVENT_RING_SIZE + 110; i++)
		event_post(&r, VM_EVENT_HALT_POLL, -1, i, NULL, NULL);
	n = event_read(&r, &slow, ev, 8, &lost);
	assert_int_equal(lost, 110);
	assert_int_equal(n, 8);
	assert_int_equal(ev[0].seq, 110);
	n = event_read(&r, &slow, ev, EVENT_RING_SIZE, &lost);
	assert_int_equal(lost, 0);
	assert_int_equal(n, EVENT_RING_SIZE - 8);
	event_ring_destroy(&r);
}

static void test_boost_rate_limit(void **state)
{
	struct event_ring r;
	struct vm_event ev[8];
	uint64_t cursor = 0, lost;

	assert_int_equal(event_ring_init(&r), 0);
	atomic_store(&r.subscribers, 1);
	for (int i = 0; i < 50; i++)
		event_post_boost(&r, 1, "hint");
	/* One event; the other 49 wait to be reported with the next one. */
	assert_int_equal(event_read(&r, &cursor, ev, 8, &lost), 1);
	assert_int_equal(ev[0].a, 0);
	assert_int_equal(atomic_load(&r.boosts_suppressed), 49);
	atomic_store(&r.last_boost_ns, 1); /* long ago */
	event_post_boost(&r, 0, "irq");
	assert_int_equal(event_read(&r, &cursor, ev, 8, &lost), 1);
	assert_int_equal(ev[0].a, 49);
	event_ring_destroy(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nobody_listening),
		cmocka_unit_test(test_order_and_loss),
		cmocka_unit_test(test_boost_rate_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
