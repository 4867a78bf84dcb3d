// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "devices/debug_exit.h"
#include "fakes.h"

static void write_value(struct power_sink *sink, uint64_t offset,
			uint64_t value, uint32_t len)
{
	uint8_t data[8];
	uint32_t i;

	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(value >> (8 * i));
	debug_exit_bus_ops.write(sink, offset, data, len);
}

static void test_each_width(void **state)
{
	struct fake_power power;
	struct power_sink sink = fake_power_sink(&power);

	write_value(&sink, 0, 0x01, 1);
	write_value(&sink, 0, 0xbeef, 2);
	write_value(&sink, 0, 0xdeadbeef, 4);
	assert_int_equal(power.count, 3);
	assert_int_equal(power.events[0], POWER_DEBUG_EXIT);
	assert_int_equal(power.codes[0], 0x01);
	assert_int_equal(power.events[1], POWER_DEBUG_EXIT);
	assert_int_equal(power.codes[1], 0xbeef);
	assert_int_equal(power.events[2], POWER_DEBUG_EXIT);
	assert_int_equal(power.codes[2], 0xdeadbeef);
}

static void test_zero_is_a_value(void **state)
{
	struct fake_power power;
	struct power_sink sink = fake_power_sink(&power);

	/* 0 exits with status 1 under QEMU too: it still ends the VM. */
	write_value(&sink, 0, 0, 4);
	assert_int_equal(power.count, 1);
	assert_int_equal(power.codes[0], 0);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct fake_power power;
	struct power_sink sink = fake_power_sink(&power);
	uint8_t data[8];

	/* A byte inside the 4-byte window (outb to 0xf5) counts too. */
	write_value(&sink, 1, 0x42, 1);
	/* 3-byte and 8-byte MMIO writes: the low four bytes at most. */
	write_value(&sink, 0, 0xabcdef, 3);
	write_value(&sink, 0, 0x1122334455667788ULL, 8);
	assert_int_equal(power.count, 3);
	assert_int_equal(power.codes[0], 0x42);
	assert_int_equal(power.codes[1], 0xabcdef);
	assert_int_equal(power.codes[2], 0x55667788);

	/* Outside the window, or zero bytes: nothing. */
	write_value(&sink, DEBUG_EXIT_LEN, 1, 1);
	write_value(&sink, UINT64_MAX, 1, 1);
	write_value(&sink, 0, 1, 0);
	assert_int_equal(power.count, 3);

	/* Reads are all-ones and have no effect. */
	memset(data, 0, sizeof(data));
	debug_exit_bus_ops.read(&sink, 0, data, 4);
	assert_int_equal(data[0], 0xff);
	assert_int_equal(data[3], 0xff);
	assert_int_equal(power.count, 3);
}

static void test_sink_without_callback(void **state)
{
	struct power_sink sink = { 0 };

	/* A sink nobody wired up swallows the event. */
	write_value(&sink, 0, 7, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_width),
		cmocka_unit_test(test_zero_is_a_value),
		cmocka_unit_test(test_odd_widths_and_offsets),
		cmocka_unit_test(test_sink_without_callback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
