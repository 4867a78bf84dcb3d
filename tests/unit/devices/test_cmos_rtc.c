// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "devices/cmos_rtc.h"

enum {
	SECONDS = 0x00,
	SECONDS_ALARM = 0x01,
	MINUTES = 0x02,
	HOURS = 0x04,
	DAY_OF_WEEK = 0x06,
	DAY_OF_MONTH = 0x07,
	MONTH = 0x08,
	YEAR = 0x09,
	REG_A = 0x0a,
	REG_B = 0x0b,
	REG_C = 0x0c,
	REG_D = 0x0d,
	CENTURY = 0x32,
};

static time_t fake_time;

static time_t fake_now(void)
{
	return fake_time;
}

static time_t utc(int year, int mon, int mday, int hour, int min, int sec)
{
	struct tm tm = {
		.tm_year = year - 1900,
		.tm_mon = mon - 1,
		.tm_mday = mday,
		.tm_hour = hour,
		.tm_min = min,
		.tm_sec = sec,
	};

	return timegm(&tm);
}

static uint8_t cmos_read(struct cmos_rtc *rtc, uint8_t index)
{
	uint8_t value;

	cmos_rtc_bus_ops.write(rtc, 0, &index, 1);
	cmos_rtc_bus_ops.read(rtc, 1, &value, 1);
	return value;
}

static void cmos_write(struct cmos_rtc *rtc, uint8_t index, uint8_t value)
{
	cmos_rtc_bus_ops.write(rtc, 0, &index, 1);
	cmos_rtc_bus_ops.write(rtc, 1, &value, 1);
}

static int setup(void **state)
{
	/* Sunday 2026-11-29 21:05:09 UTC */
	fake_time = utc(2026, 11, 29, 21, 5, 9);
	*state = cmos_rtc_create(fake_now);
	assert_non_null(*state);
	return 0;
}

static int teardown(void **state)
{
	cmos_rtc_destroy(*state);
	return 0;
}

static void test_bcd_time_by_default(void **state)
{
	struct cmos_rtc *rtc = *state;

	assert_int_equal(cmos_read(rtc, REG_B), 0x02);
	assert_int_equal(cmos_read(rtc, SECONDS), 0x09);
	assert_int_equal(cmos_read(rtc, MINUTES), 0x05);
	assert_int_equal(cmos_read(rtc, HOURS), 0x21);
	assert_int_equal(cmos_read(rtc, DAY_OF_WEEK), 0x01); /* Sunday */
	assert_int_equal(cmos_read(rtc, DAY_OF_MONTH), 0x29);
	assert_int_equal(cmos_read(rtc, MONTH), 0x11);
	assert_int_equal(cmos_read(rtc, YEAR), 0x26);
	assert_int_equal(cmos_read(rtc, CENTURY), 0x20);

	/* The clock follows the host. */
	fake_time += 61;
	assert_int_equal(cmos_read(rtc, SECONDS), 0x10);
	assert_int_equal(cmos_read(rtc, MINUTES), 0x06);
}

static void test_binary_mode(void **state)
{
	struct cmos_rtc *rtc = *state;

	cmos_write(rtc, REG_B, 0x06); /* DM binary, 24h */
	assert_int_equal(cmos_read(rtc, REG_B), 0x06);
	assert_int_equal(cmos_read(rtc, SECONDS), 9);
	assert_int_equal(cmos_read(rtc, HOURS), 21);
	assert_int_equal(cmos_read(rtc, DAY_OF_MONTH), 29);
	assert_int_equal(cmos_read(rtc, MONTH), 11);
	assert_int_equal(cmos_read(rtc, YEAR), 26);
	assert_int_equal(cmos_read(rtc, CENTURY), 20);
}

static void test_12_hour_mode(void **state)
{
	struct cmos_rtc *rtc = *state;

	cmos_write(rtc, REG_B, 0x00); /* BCD, 12h */
	assert_int_equal(cmos_read(rtc, HOURS), 0x80 | 0x09); /* 9 PM */
	fake_time = utc(2026, 11, 29, 0, 30, 0);
	assert_int_equal(cmos_read(rtc, HOURS), 0x12); /* 12 AM */
	fake_time = utc(2026, 11, 29, 12, 30, 0);
	assert_int_equal(cmos_read(rtc, HOURS), 0x80 | 0x12); /* 12 PM */
	fake_time = utc(2026, 11, 29, 11, 30, 0);
	assert_int_equal(cmos_read(rtc, HOURS), 0x11); /* 11 AM */

	cmos_write(rtc, REG_B, 0x04); /* binary, 12h */
	fake_time = utc(2026, 11, 29, 23, 0, 0);
	assert_int_equal(cmos_read(rtc, HOURS), 0x80 | 11);
}

static void test_nmi_bit_masked(void **state)
{
	struct cmos_rtc *rtc = *state;

	/* Linux sets bit 7 of the index; it selects no other register. */
	assert_int_equal(cmos_read(rtc, 0x80 | REG_B), 0x02);
	assert_int_equal(cmos_read(rtc, 0x80 | SECONDS), 0x09);
	cmos_write(rtc, 0x80 | 0x40, 0x5a);
	assert_int_equal(cmos_read(rtc, 0x40), 0x5a);
}

static void test_status_registers(void **state)
{
	struct cmos_rtc *rtc = *state;
	int i;

	/* Never an update in progress: Linux's UIP loops end at once. */
	for (i = 0; i < 1000; i++) {
		fake_time += i % 3 == 0;
		assert_false(cmos_read(rtc, REG_A) & 0x80);
	}
	assert_int_equal(cmos_read(rtc, REG_A), 0x26);
	cmos_write(rtc, REG_A, 0xa6); /* UIP is read-only */
	assert_int_equal(cmos_read(rtc, REG_A), 0x26);
	/* Valid RAM and time, whatever the guest writes. */
	assert_int_equal(cmos_read(rtc, REG_D), 0x80);
	cmos_write(rtc, REG_D, 0x00);
	assert_int_equal(cmos_read(rtc, REG_D), 0x80);
}

static void test_reg_c_read_clears(void **state)
{
	struct cmos_rtc *rtc = *state;

	assert_int_equal(cmos_read(rtc, REG_C), 0);
	fake_time++;
	/* An update cycle ended: UF, no IRQF while UIE is off. */
	assert_int_equal(cmos_read(rtc, REG_C), 0x10);
	assert_int_equal(cmos_read(rtc, REG_C), 0);

	cmos_write(rtc, REG_B, 0x12); /* UIE */
	fake_time++;
	assert_int_equal(cmos_read(rtc, REG_C), 0x90);
	assert_int_equal(cmos_read(rtc, REG_C), 0);
	/* Register C is read-only. */
	cmos_write(rtc, REG_C, 0xff);
	assert_int_equal(cmos_read(rtc, REG_C), 0);
}

static void test_cmos_ram_round_trip(void **state)
{
	struct cmos_rtc *rtc = *state;
	unsigned int i;

	for (i = 0x0e; i < 0x80; i++) {
		if (i == CENTURY)
			continue;
		cmos_write(rtc, (uint8_t)i, (uint8_t)(i ^ 0xa5));
	}
	for (i = 0x0e; i < 0x80; i++) {
		if (i == CENTURY)
			continue;
		assert_int_equal(cmos_read(rtc, (uint8_t)i), i ^ 0xa5);
	}
	/* Alarm registers are plain bytes too. */
	cmos_write(rtc, SECONDS_ALARM, 0x45);
	assert_int_equal(cmos_read(rtc, SECONDS_ALARM), 0x45);
	/* Setting RAM did not disturb the clock. */
	assert_int_equal(cmos_read(rtc, SECONDS), 0x09);
}

static void test_set_time_with_set_bit(void **state)
{
	struct cmos_rtc *rtc = *state;

	/* Linux's mc146818_set_time: SET, fields, then SET off. */
	cmos_write(rtc, REG_B, 0x82);
	cmos_write(rtc, SECONDS, 0x30);
	cmos_write(rtc, MINUTES, 0x45);
	cmos_write(rtc, HOURS, 0x07);
	cmos_write(rtc, DAY_OF_MONTH, 0x01);
	cmos_write(rtc, MONTH, 0x02);
	cmos_write(rtc, YEAR, 0x30);
	fake_time += 100; /* frozen while SET is on */
	assert_int_equal(cmos_read(rtc, SECONDS), 0x30);
	cmos_write(rtc, REG_B, 0x02);

	assert_int_equal(cmos_read(rtc, SECONDS), 0x30);
	assert_int_equal(cmos_read(rtc, MINUTES), 0x45);
	assert_int_equal(cmos_read(rtc, HOURS), 0x07);
	assert_int_equal(cmos_read(rtc, DAY_OF_MONTH), 0x01);
	assert_int_equal(cmos_read(rtc, MONTH), 0x02);
	assert_int_equal(cmos_read(rtc, YEAR), 0x30);
	assert_int_equal(cmos_read(rtc, DAY_OF_WEEK), 0x06); /* a Friday */
	/* From now on the guest's clock runs with the host's. */
	fake_time += 15;
	assert_int_equal(cmos_read(rtc, SECONDS), 0x45);
}

static void test_time_field_writes(void **state)
{
	struct cmos_rtc *rtc = *state;

	/* One field at a time, without SET. */
	cmos_write(rtc, MINUTES, 0x59);
	assert_int_equal(cmos_read(rtc, MINUTES), 0x59);
	assert_int_equal(cmos_read(rtc, HOURS), 0x21);
	cmos_write(rtc, CENTURY, 0x21);
	assert_int_equal(cmos_read(rtc, CENTURY), 0x21);
	assert_int_equal(cmos_read(rtc, YEAR), 0x26);

	/* Invalid values are ignored: bad BCD, out of range, bad 12h. */
	cmos_write(rtc, SECONDS, 0x0a);
	cmos_write(rtc, MINUTES, 0x60);
	cmos_write(rtc, MONTH, 0x13);
	cmos_write(rtc, DAY_OF_MONTH, 0x00);
	cmos_write(rtc, HOURS, 0x24);
	assert_int_equal(cmos_read(rtc, SECONDS), 0x09);
	assert_int_equal(cmos_read(rtc, MINUTES), 0x59);
	assert_int_equal(cmos_read(rtc, MONTH), 0x11);
	assert_int_equal(cmos_read(rtc, DAY_OF_MONTH), 0x29);
	assert_int_equal(cmos_read(rtc, HOURS), 0x21);

	/* 12-hour writes: 7 AM and 12 PM. */
	cmos_write(rtc, REG_B, 0x00);
	cmos_write(rtc, HOURS, 0x13); /* 13 is no 12h hour */
	assert_int_equal(cmos_read(rtc, HOURS), 0x80 | 0x09);
	cmos_write(rtc, HOURS, 0x07);
	cmos_write(rtc, REG_B, 0x02);
	assert_int_equal(cmos_read(rtc, HOURS), 0x07);
	cmos_write(rtc, REG_B, 0x00);
	cmos_write(rtc, HOURS, 0x80 | 0x12);
	cmos_write(rtc, REG_B, 0x02);
	assert_int_equal(cmos_read(rtc, HOURS), 0x12);
	/* Day of week follows the date (2126-11-29 is a Friday); writes
	 * to it are ignored. */
	assert_int_equal(cmos_read(rtc, DAY_OF_WEEK), 0x06);
	cmos_write(rtc, DAY_OF_WEEK, 0x05);
	assert_int_equal(cmos_read(rtc, DAY_OF_WEEK), 0x06);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct cmos_rtc *rtc = *state;
	uint8_t data[4];
	const uint8_t index_and_data[2] = { 0x80 | 0x50, 0x77 };

	/* outw to the index port: index in the low byte, data in the high. */
	cmos_rtc_bus_ops.write(rtc, 0, index_and_data, 2);
	assert_int_equal(cmos_read(rtc, 0x50), 0x77);
	/* inw from the index port: nothing at 0x70, the data at 0x71. */
	memset(data, 0, sizeof(data));
	cmos_rtc_bus_ops.read(rtc, 0, data, 2);
	assert_int_equal(data[0], 0xff);
	assert_int_equal(data[1], 0x77);
	/* A 4-byte read at the data port: the byte, then nothing. */
	cmos_rtc_bus_ops.read(rtc, 1, data, 4);
	assert_int_equal(data[0], 0x77);
	assert_int_equal(data[1], 0xff);
	assert_int_equal(data[3], 0xff);

	/* Beyond the two ports: all-ones, and writes change nothing. */
	cmos_rtc_bus_ops.read(rtc, 2, data, 2);
	assert_int_equal(data[0], 0xff);
	assert_int_equal(data[1], 0xff);
	cmos_rtc_bus_ops.read(rtc, UINT64_MAX, data, 1);
	assert_int_equal(data[0], 0xff);
	cmos_rtc_bus_ops.write(rtc, 2, index_and_data, 2);
	cmos_rtc_bus_ops.write(rtc, UINT64_MAX, index_and_data, 2);
	assert_int_equal(cmos_read(rtc, 0x50), 0x77);
	assert_int_equal(cmos_read(rtc, 0x7f), 0);
}

static void test_default_clock_and_independent_instances(void **state)
{
	struct cmos_rtc *a = cmos_rtc_create(NULL);
	struct cmos_rtc *b = cmos_rtc_create(NULL);
	uint8_t century;

	assert_non_null(a);
	assert_non_null(b);
	/* time(): some century from 20 on, in BCD. */
	century = cmos_read(a, CENTURY);
	assert_true(century >= 0x20 && (century & 0xf) <= 9);
	cmos_write(a, 0x20, 1);
	cmos_write(b, 0x20, 2);
	assert_int_equal(cmos_read(a, 0x20), 1);
	assert_int_equal(cmos_read(b, 0x20), 2);
	cmos_rtc_destroy(a);
	cmos_rtc_destroy(b);
	cmos_rtc_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_bcd_time_by_default),
		T(test_binary_mode),
		T(test_12_hour_mode),
		T(test_nmi_bit_masked),
		T(test_status_registers),
		T(test_reg_c_read_clears),
		T(test_cmos_ram_round_trip),
		T(test_set_time_with_set_bit),
		T(test_time_field_writes),
		T(test_odd_widths_and_offsets),
		cmocka_unit_test(test_default_clock_and_independent_instances),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
