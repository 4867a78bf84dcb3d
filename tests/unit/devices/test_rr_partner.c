// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The rr benchmark partner, driven through its bus_ops as a vCPU exit would
 * (without KVM, the doorbell write reaches the device instead of an
 * ioeventfd): every ring is answered on the response eventfd, registers
 * decode only aligned 32-bit accesses, instances share nothing.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "devices/rr_partner.h"

/* Generous: the partner thread only has to be scheduled once. */
#define ANSWER_WAIT_MS 10000

static uint32_t read32(struct rr_partner *rr, uint64_t offset)
{
	uint8_t data[4];

	rr_partner_bus_ops.read(rr, offset, data, 4);
	return (uint32_t)data[0] | (uint32_t)data[1] << 8 |
	       (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
}

static void write32(struct rr_partner *rr, uint64_t offset, uint32_t value)
{
	uint8_t data[4] = { (uint8_t)value, (uint8_t)(value >> 8),
			    (uint8_t)(value >> 16), (uint8_t)(value >> 24) };

	rr_partner_bus_ops.write(rr, offset, data, 4);
}

/* Wait for one answer and consume it; returns the eventfd count. */
static uint64_t wait_answer(struct rr_partner *rr)
{
	struct pollfd pfd = { .fd = rr_partner_response_fd(rr),
			      .events = POLLIN };
	uint64_t count = 0;

	assert_int_equal(poll(&pfd, 1, ANSWER_WAIT_MS), 1);
	assert_int_equal(read(pfd.fd, &count, sizeof(count)), sizeof(count));
	return count;
}

static bool answer_pending(struct rr_partner *rr)
{
	struct pollfd pfd = { .fd = rr_partner_response_fd(rr),
			      .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static void test_magic(void **state)
{
	struct rr_partner *rr = rr_partner_create();

	assert_non_null(rr);
	assert_int_equal(read32(rr, RR_REG_DOORBELL), RR_PARTNER_MAGIC);
	assert_int_equal(read32(rr, RR_REG_CONTROL), 0);
	rr_partner_destroy(rr);
}

static void test_each_ring_is_answered(void **state)
{
	struct rr_partner *rr = rr_partner_create();

	assert_non_null(rr);
	for (uint32_t i = 1; i <= 5; i++) {
		write32(rr, RR_REG_DOORBELL, i);
		assert_int_equal(wait_answer(rr), 1);
		/* The count is bumped after the answer is written. */
		while (read32(rr, RR_REG_CONTROL) < i)
			usleep(1000);
		assert_int_equal(read32(rr, RR_REG_CONTROL), i);
	}
	rr_partner_destroy(rr);
}

static void test_ring_through_request_fd(void **state)
{
	struct rr_partner *rr = rr_partner_create();
	uint64_t one = 1;

	/* What KVM's ioeventfd does when the guest writes the port. */
	assert_non_null(rr);
	assert_int_equal(write(rr_partner_request_fd(rr), &one, sizeof(one)),
			 sizeof(one));
	assert_int_equal(wait_answer(rr), 1);
	rr_partner_destroy(rr);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct rr_partner *rr = rr_partner_create();
	uint8_t data[8];

	assert_non_null(rr);
	for (uint32_t len = 1; len <= 8; len *= 2) {
		if (len == 4)
			continue;
		memset(data, 0, sizeof(data));
		rr_partner_bus_ops.read(rr, 0, data, len);
		for (uint32_t i = 0; i < len; i++)
			assert_int_equal(data[i], 0xff);
		rr_partner_bus_ops.write(rr, 0, data, len);
	}
	assert_int_equal(read32(rr, 2), 0xffffffff);
	assert_int_equal(read32(rr, RR_PARTNER_LEN), 0xffffffff);
	assert_int_equal(read32(rr, RR_PARTNER_LEN - 4), 0xffffffff); /* hole */
	assert_int_equal(read32(rr, 0x1000), 0xffffffff);
	write32(rr, 1, 1);
	write32(rr, RR_PARTNER_LEN, 1);
	write32(rr, RR_REG_CPU_NS_LO, 1); /* read-only */
	/* None of those rang: give a wrong answer time to show up. */
	usleep(20000);
	assert_false(answer_pending(rr));
	assert_int_equal(read32(rr, RR_REG_CONTROL), 0);
	rr_partner_destroy(rr);
}

static void test_cpu_time_between_start_and_stop(void **state)
{
	struct rr_partner *rr = rr_partner_create();
	volatile uint64_t sink = 0;
	uint64_t ns;

	assert_non_null(rr);
	write32(rr, RR_REG_CONTROL, RR_CTRL_STOP); /* no START: ignored */
	assert_int_equal(read32(rr, RR_REG_CPU_NS_LO), 0);
	write32(rr, RR_REG_CONTROL, RR_CTRL_START);
	for (uint64_t i = 0; i < 20000000; i++)
		sink += i;
	write32(rr, RR_REG_CONTROL, RR_CTRL_STOP);
	ns = read32(rr, RR_REG_CPU_NS_LO) |
	     (uint64_t)read32(rr, RR_REG_CPU_NS_HI) << 32;
	assert_true(ns > 0);
	/* A second STOP does not move the measurement. */
	write32(rr, RR_REG_CONTROL, RR_CTRL_STOP);
	assert_int_equal(read32(rr, RR_REG_CPU_NS_LO), (uint32_t)ns);
	rr_partner_destroy(rr);
}

static void test_service_time(void **state)
{
	struct rr_partner *rr = rr_partner_create();

	assert_non_null(rr);
	assert_int_equal(read32(rr, RR_REG_SERVICE_US), 0);
	write32(rr, RR_REG_SERVICE_US, 2000);
	assert_int_equal(read32(rr, RR_REG_SERVICE_US), 2000);
	/* Beyond the maximum: ignored, the old value stays. */
	write32(rr, RR_REG_SERVICE_US, RR_MAX_SERVICE_US + 1);
	assert_int_equal(read32(rr, RR_REG_SERVICE_US), 2000);
	/* A slow partner still answers every ring. */
	write32(rr, RR_REG_DOORBELL, 1);
	assert_int_equal(wait_answer(rr), 1);
	rr_partner_destroy(rr);
}

static void test_instances_are_independent(void **state)
{
	struct rr_partner *a = rr_partner_create();
	struct rr_partner *b = rr_partner_create();

	assert_non_null(a);
	assert_non_null(b);
	write32(a, RR_REG_DOORBELL, 1);
	assert_int_equal(wait_answer(a), 1);
	usleep(20000);
	assert_false(answer_pending(b));
	assert_int_equal(read32(b, RR_REG_CONTROL), 0);
	rr_partner_destroy(a);
	rr_partner_destroy(b);
}

static void test_destroy_null(void **state)
{
	rr_partner_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_magic),
		cmocka_unit_test(test_each_ring_is_answered),
		cmocka_unit_test(test_ring_through_request_fd),
		cmocka_unit_test(test_odd_widths_and_offsets),
		cmocka_unit_test(test_cpu_time_between_start_and_stop),
		cmocka_unit_test(test_service_time),
		cmocka_unit_test(test_instances_are_independent),
		cmocka_unit_test(test_destroy_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
