// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "core/bus.h"

struct fake_dev {
	uint64_t last_offset;
	uint32_t last_len;
	uint8_t last_byte;
	int writes;
};

static void fake_read(void *dev, uint64_t offset, uint8_t *data, uint32_t len)
{
	struct fake_dev *f = dev;

	f->last_offset = offset;
	f->last_len = len;
	memset(data, 0x5a, len);
}

static void fake_write(void *dev, uint64_t offset, const uint8_t *data,
		       uint32_t len)
{
	struct fake_dev *f = dev;

	f->last_offset = offset;
	f->last_len = len;
	f->last_byte = data[0];
	f->writes++;
}

static const struct bus_ops fake_ops = { .read = fake_read,
					 .write = fake_write };

static void test_lookup_finds_containing_region(void **state)
{
	struct bus bus = { 0 };
	struct fake_dev a = { 0 }, b = { 0 };

	assert_int_equal(bus_register(&bus, 0x3f8, 8, &fake_ops, &a, "a"), 0);
	assert_int_equal(bus_register(&bus, 0x70, 2, &fake_ops, &b, "b"), 0);
	assert_ptr_equal(bus_lookup(&bus, 0x3f8, 1)->dev, &a);
	assert_ptr_equal(bus_lookup(&bus, 0x3ff, 1)->dev, &a);
	assert_ptr_equal(bus_lookup(&bus, 0x71, 1)->dev, &b);
	assert_null(bus_lookup(&bus, 0x400, 1));
	assert_null(bus_lookup(&bus, 0x6f, 1));
	/* An access straddling the end of a region belongs to nobody. */
	assert_null(bus_lookup(&bus, 0x3fe, 4));
	bus_destroy(&bus);
}

static void test_overlap_and_bad_ranges_rejected(void **state)
{
	struct bus bus = { 0 };

	assert_int_equal(bus_register(&bus, 0x100, 0x10, &fake_ops, NULL, "x"),
			 0);
	assert_int_equal(bus_register(&bus, 0x10f, 1, &fake_ops, NULL, "y"),
			 -EEXIST);
	assert_int_equal(bus_register(&bus, 0xf0, 0x11, &fake_ops, NULL, "y"),
			 -EEXIST);
	assert_int_equal(bus_register(&bus, 0x110, 1, &fake_ops, NULL, "y"), 0);
	assert_int_equal(bus_register(&bus, 0x200, 0, &fake_ops, NULL, "z"),
			 -EINVAL);
	assert_int_equal(
		bus_register(&bus, UINT64_MAX, 2, &fake_ops, NULL, "z"),
		-EINVAL);
	assert_int_equal(
		bus_register(&bus, UINT64_MAX, 1, &fake_ops, NULL, "top"), 0);
	assert_non_null(bus_lookup(&bus, UINT64_MAX, 1));
	assert_null(bus_lookup(&bus, UINT64_MAX, 2));
	bus_destroy(&bus);
}

static void test_access_dispatches_relative_offset(void **state)
{
	struct bus bus = { 0 };
	struct fake_dev d = { 0 };
	uint8_t buf[4] = { 0x42 };

	assert_int_equal(bus_register(&bus, 0x1000, 0x100, &fake_ops, &d, "d"),
			 0);
	assert_true(bus_access(&bus, 0x1010, buf, 1, true));
	assert_int_equal(d.last_offset, 0x10);
	assert_int_equal(d.last_byte, 0x42);
	assert_true(bus_access(&bus, 0x10fc, buf, 4, false));
	assert_int_equal(d.last_offset, 0xfc);
	assert_int_equal(buf[3], 0x5a);
	bus_destroy(&bus);
}

static void test_unclaimed_read_is_all_ones(void **state)
{
	struct bus bus = { 0 };
	uint8_t buf[2] = { 0, 0 };

	assert_false(bus_access(&bus, 0x80, buf, 2, false));
	assert_int_equal(buf[0], 0xff);
	assert_int_equal(buf[1], 0xff);
	assert_false(bus_access(&bus, 0x80, buf, 2, true));
}

static void test_many_regions_stay_sorted(void **state)
{
	struct bus bus = { 0 };
	struct fake_dev devs[64];

	/* Register in a scrambled order to exercise insertion. */
	for (unsigned int i = 0; i < 64; i++) {
		unsigned int k = (i * 37) % 64;

		assert_int_equal(bus_register(&bus, k * 0x10, 0x8, &fake_ops,
					      &devs[k], "d"),
				 0);
	}
	for (unsigned int k = 0; k < 64; k++) {
		assert_ptr_equal(bus_lookup(&bus, k * 0x10 + 7, 1)->dev,
				 &devs[k]);
		assert_null(bus_lookup(&bus, k * 0x10 + 8, 1));
	}
	bus_destroy(&bus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_finds_containing_region),
		cmocka_unit_test(test_overlap_and_bad_ranges_rejected),
		cmocka_unit_test(test_access_dispatches_relative_offset),
		cmocka_unit_test(test_unclaimed_read_is_all_ones),
		cmocka_unit_test(test_many_regions_stay_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
