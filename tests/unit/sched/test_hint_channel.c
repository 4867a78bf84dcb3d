// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest hint channel device through the bus, as a guest would drive it:
 * decoding, validation of hostile words, identity of the writer, and the
 * per-vCPU token bucket against a flooding guest (with a fake clock).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "core/bus.h"
#include "sched/hint_channel.h"

#define BASE 0x610

struct fixture {
	struct bus bus;
	struct hint_channel hc;
	int current; /* the "calling vCPU" */
	uint64_t now;
	struct hint_event events[64];
	unsigned int nr_events;
};

static int current_vcpu(void *ctx)
{
	return ((struct fixture *)ctx)->current;
}

static uint64_t fake_now(void *ctx)
{
	return ((struct fixture *)ctx)->now;
}

static void deliver(void *ctx, const struct hint_event *ev)
{
	struct fixture *f = ctx;

	if (f->nr_events < 64)
		f->events[f->nr_events] = *ev;
	f->nr_events++;
}

static int setup(void **state)
{
	static struct fixture f;
	struct hint_channel_config cfg = {
		.nr_vcpus = 4,
		.current_vcpu = current_vcpu,
		.current_vcpu_ctx = &f,
		.now_ns = fake_now,
		.now_ctx = &f,
		.deliver = deliver,
		.deliver_ctx = &f,
		.rate_per_sec = 1000, /* one token per ms */
		.burst = 8,
	};

	memset(&f, 0, sizeof(f));
	f.now = 1000000000;
	assert_int_equal(hint_channel_init(&f.hc, &cfg), 0);
	assert_int_equal(bus_register(&f.bus, BASE, HINT_REGION_LEN,
				      &hint_channel_bus_ops, &f.hc, "hint"),
			 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	bus_destroy(&f->bus);
	hint_channel_destroy(&f->hc);
	return 0;
}

static void guest_write32(struct fixture *f, int vcpu, uint64_t off, uint32_t v)
{
	uint8_t b[4];

	f->current = vcpu;
	memcpy(b, &v, 4);
	assert_true(bus_access(&f->bus, BASE + off, b, 4, true));
}

static uint32_t guest_read32(struct fixture *f, int vcpu, uint64_t off)
{
	uint8_t b[4];
	uint32_t v;

	f->current = vcpu;
	assert_true(bus_access(&f->bus, BASE + off, b, 4, false));
	memcpy(&v, b, 4);
	return v;
}

static void test_identification_registers(void **state)
{
	struct fixture *f = *state;
	uint8_t b[2];

	assert_int_equal(guest_read32(f, 0, HINT_REG_EVENT), HINT_MAGIC);
	assert_int_equal(guest_read32(f, 0, HINT_REG_INFO),
			 HINT_VERSION | 4 << 16);
	/* The magic spells "HVMH" in memory order. */
	uint32_t magic = HINT_MAGIC;
	assert_memory_equal(&magic, "HVMH", 4);
	/* Wrong width: all ones, like an empty bus. */
	f->current = 0;
	assert_true(bus_access(&f->bus, BASE, b, 2, false));
	assert_int_equal(b[0], 0xff);
	assert_int_equal(b[1], 0xff);
}

static void test_spin_event_delivered_with_writer(void **state)
{
	struct fixture *f = *state;
	struct hint_vcpu_stats st;

	guest_write32(f, 2, HINT_REG_EVENT,
		      HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 1));
	assert_int_equal(f->nr_events, 1);
	assert_int_equal(f->events[0].kind, HINT_KIND_SPIN_ON_HOLDER);
	assert_int_equal(f->events[0].from, 2);
	assert_int_equal(f->events[0].target, 1);
	hint_channel_stats(&f->hc, 2, &st);
	assert_int_equal(st.accepted, 1);
	hint_channel_stats(&f->hc, 1, &st);
	assert_int_equal(st.named_holder, 1);
	/* The guest can read its own count back. */
	assert_int_equal(guest_read32(f, 2, HINT_REG_ACCEPTED), 1);
	assert_int_equal(guest_read32(f, 1, HINT_REG_ACCEPTED), 0);

	guest_write32(f, 3, HINT_REG_EVENT, HINT_EVENT(HINT_KIND_IDLE_POLL, 0));
	assert_int_equal(f->nr_events, 2);
	assert_int_equal(f->events[1].kind, HINT_KIND_IDLE_POLL);
	assert_int_equal(f->events[1].from, 3);
}

static void test_hostile_words_rejected(void **state)
{
	struct fixture *f = *state;
	struct hint_vcpu_stats st;
	uint32_t bad[] = {
		HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 0), /* self */
		HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 4), /* out of range */
		HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 0xfff),
		HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 1) | 1, /* reserved */
		HINT_EVENT(HINT_KIND_IDLE_POLL, 1), /* target must be 0 */
		HINT_EVENT(HINT_KIND_RELEASED, 0), /* to itself */
		HINT_EVENT(HINT_KIND_RELEASED, 4), /* out of range */
		HINT_EVENT(0, 1),
		HINT_EVENT(4, 1),
		0xffffffff,
		0,
	};
	uint8_t b[8] = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		guest_write32(f, 0, HINT_REG_EVENT, bad[i]);
	/* Writes to read-only registers and odd widths. */
	guest_write32(f, 0, HINT_REG_INFO,
		      HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 1));
	f->current = 0;
	assert_true(bus_access(&f->bus, BASE, b, 2, true));
	assert_true(bus_access(&f->bus, BASE, b, 1, true));

	assert_int_equal(f->nr_events, 0);
	hint_channel_stats(&f->hc, 0, &st);
	assert_int_equal(st.invalid, sizeof(bad) / sizeof(bad[0]) + 3);
	assert_int_equal(st.accepted, 0);
	assert_int_equal(st.dropped, 0);
}

static void test_writes_from_non_vcpu_threads_ignored(void **state)
{
	struct fixture *f = *state;

	guest_write32(f, -1, HINT_REG_EVENT,
		      HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 1));
	guest_write32(f, 17, HINT_REG_EVENT,
		      HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 1));
	assert_int_equal(f->nr_events, 0);
	assert_int_equal(f->hc.foreign_writes, 2);
	assert_int_equal(guest_read32(f, -1, HINT_REG_ACCEPTED), 0);
}

static void test_flood_is_rate_limited(void **state)
{
	struct fixture *f = *state;
	struct hint_vcpu_stats st;
	uint32_t spin = HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 0);

	/* 1000 writes at one instant: the burst (8) passes, the rest drop. */
	for (int i = 0; i < 1000; i++)
		guest_write32(f, 1, HINT_REG_EVENT, spin);
	hint_channel_stats(&f->hc, 1, &st);
	assert_int_equal(st.accepted, 8);
	assert_int_equal(st.dropped, 992);
	assert_int_equal(f->nr_events, 8);
	assert_int_equal(guest_read32(f, 1, HINT_REG_DROPPED), 992);

	/* Another vCPU has its own bucket. */
	guest_write32(f, 2, HINT_REG_EVENT, spin);
	assert_int_equal(f->nr_events, 9);

	/* 5 ms later: 5 more tokens. */
	f->now += 5000000;
	for (int i = 0; i < 100; i++)
		guest_write32(f, 1, HINT_REG_EVENT, spin);
	hint_channel_stats(&f->hc, 1, &st);
	assert_int_equal(st.accepted, 13);

	/* A sustained flood: one write every 100 µs for a second gets the
	 * refill rate (1000/s), not the write rate (10000/s). */
	for (int i = 0; i < 10000; i++) {
		f->now += 100000;
		guest_write32(f, 1, HINT_REG_EVENT, spin);
	}
	hint_channel_stats(&f->hc, 1, &st);
	assert_int_equal(st.accepted, 13 + 1000);
	assert_int_equal(st.accepted + st.dropped, 1000 + 100 + 10000);

	/* After a long pause the bucket is full again, but no fuller. */
	f->now += 60ull * 1000000000;
	for (int i = 0; i < 20; i++)
		guest_write32(f, 1, HINT_REG_EVENT, spin);
	hint_channel_stats(&f->hc, 1, &st);
	assert_int_equal(st.accepted, 13 + 1000 + 8);
}

static void test_clock_going_backwards(void **state)
{
	struct fixture *f = *state;
	struct hint_vcpu_stats st;
	uint32_t spin = HINT_EVENT(HINT_KIND_SPIN_ON_HOLDER, 1);

	for (int i = 0; i < 8; i++)
		guest_write32(f, 0, HINT_REG_EVENT, spin);
	f->now -= 500000000;
	for (int i = 0; i < 8; i++)
		guest_write32(f, 0, HINT_REG_EVENT, spin);
	hint_channel_stats(&f->hc, 0, &st);
	assert_int_equal(st.accepted, 8);
	assert_int_equal(st.dropped, 8);
}

static void test_init_validation(void **state)
{
	struct hint_channel hc;
	struct hint_channel_config cfg = { .nr_vcpus = 0,
					   .current_vcpu = current_vcpu };

	assert_int_equal(hint_channel_init(&hc, &cfg), -EINVAL);
	cfg.nr_vcpus = 4097;
	assert_int_equal(hint_channel_init(&hc, &cfg), -EINVAL);
	cfg.nr_vcpus = 2;
	cfg.current_vcpu = NULL;
	assert_int_equal(hint_channel_init(&hc, &cfg), -EINVAL);
	/* Defaults: burst and rate filled in, a real clock. */
	cfg.current_vcpu = current_vcpu;
	assert_int_equal(hint_channel_init(&hc, &cfg), 0);
	assert_int_equal(hc.cfg.burst, HINT_DEFAULT_BURST);
	assert_int_equal(hc.cfg.rate_per_sec, HINT_DEFAULT_RATE);
	hint_channel_destroy(&hc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identification_registers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_spin_event_delivered_with_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_words_rejected,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_writes_from_non_vcpu_threads_ignored, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_flood_is_rate_limited,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_going_backwards,
						setup, teardown),
		cmocka_unit_test(test_init_validation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
