// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "devices/pvpanic.h"
#include "fakes.h"

static void write_byte(struct pvpanic *dev, uint64_t offset, uint8_t value)
{
	pvpanic_bus_ops.write(dev, offset, &value, 1);
}

static uint8_t read_byte(struct pvpanic *dev, uint64_t offset)
{
	uint8_t value = 0;

	pvpanic_bus_ops.read(dev, offset, &value, 1);
	return value;
}

static void test_reads_back_supported_events(void **state)
{
	struct fake_power power;
	struct pvpanic *dev = pvpanic_create(fake_power_sink(&power));

	assert_non_null(dev);
	/* What Linux's driver masks its capabilities with at probe time. */
	assert_int_equal(read_byte(dev, 0), 0x03);
	assert_int_equal(read_byte(dev, 0), PVPANIC_EVENTS);
	assert_int_equal(power.count, 0);
	pvpanic_destroy(dev);
}

static void test_panicked_reports_a_guest_panic(void **state)
{
	struct fake_power power;
	struct pvpanic *dev = pvpanic_create(fake_power_sink(&power));

	write_byte(dev, 0, PVPANIC_PANICKED);
	assert_int_equal(power.count, 1);
	assert_int_equal(power.events[0], POWER_GUEST_PANIC);
	assert_int_equal(power.codes[0], PVPANIC_PANICKED);
	pvpanic_destroy(dev);
}

static void test_crash_loaded_does_not_stop(void **state)
{
	struct fake_power power;
	struct pvpanic *dev = pvpanic_create(fake_power_sink(&power));

	/* kdump takes over inside the guest: log only, no power event. */
	write_byte(dev, 0, PVPANIC_CRASH_LOADED);
	assert_int_equal(power.count, 0);
	/* A later PANICKED (the kdump kernel panicking too) still counts. */
	write_byte(dev, 0, PVPANIC_PANICKED);
	assert_int_equal(power.count, 1);
	assert_int_equal(power.events[0], POWER_GUEST_PANIC);
	pvpanic_destroy(dev);
}

static void test_both_bits_panicked_wins(void **state)
{
	struct fake_power power;
	struct pvpanic *dev = pvpanic_create(fake_power_sink(&power));

	write_byte(dev, 0, PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
	assert_int_equal(power.count, 1);
	assert_int_equal(power.events[0], POWER_GUEST_PANIC);
	pvpanic_destroy(dev);
}

static void test_unknown_bits_are_ignored(void **state)
{
	struct fake_power power;
	struct pvpanic *dev = pvpanic_create(fake_power_sink(&power));

	/* Bit 2 (a newer QEMU's "shutdown") and above: not known here. */
	write_byte(dev, 0, 0x04);
	write_byte(dev, 0, 0xfc);
	write_byte(dev, 0, 0);
	assert_int_equal(power.count, 0);
	/* Unknown bits next to PANICKED do not hide it. */
	write_byte(dev, 0, 0xf0 | PVPANIC_PANICKED);
	assert_int_equal(power.count, 1);
	assert_int_equal(power.events[0], POWER_GUEST_PANIC);
	pvpanic_destroy(dev);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct fake_power power;
	struct pvpanic *dev = pvpanic_create(fake_power_sink(&power));
	uint8_t data[8];

	/* Only offset 0 is the register. */
	write_byte(dev, 1, PVPANIC_PANICKED);
	write_byte(dev, UINT64_MAX, PVPANIC_PANICKED);
	pvpanic_bus_ops.write(dev, 0, data, 0);
	assert_int_equal(power.count, 0);
	assert_int_equal(read_byte(dev, 1), 0xff);
	assert_int_equal(read_byte(dev, UINT64_MAX), 0xff);

	/* A wide MMIO access: the first byte is the register. */
	memset(data, 0, sizeof(data));
	pvpanic_bus_ops.read(dev, 0, data, 8);
	assert_int_equal(data[0], PVPANIC_EVENTS);
	for (int i = 1; i < 8; i++)
		assert_int_equal(data[i], 0xff);
	memset(data, 0, sizeof(data));
	data[1] = PVPANIC_PANICKED; /* not the register byte */
	pvpanic_bus_ops.write(dev, 0, data, 4);
	assert_int_equal(power.count, 0);
	data[0] = PVPANIC_PANICKED;
	pvpanic_bus_ops.write(dev, 0, data, 4);
	assert_int_equal(power.count, 1);
	pvpanic_destroy(dev);
}

static void test_instances_are_independent(void **state)
{
	struct fake_power a_power, b_power;
	struct pvpanic *a = pvpanic_create(fake_power_sink(&a_power));
	struct pvpanic *b = pvpanic_create(fake_power_sink(&b_power));

	write_byte(a, 0, PVPANIC_PANICKED);
	assert_int_equal(a_power.count, 1);
	assert_int_equal(b_power.count, 0);
	pvpanic_destroy(a);
	pvpanic_destroy(b);
	pvpanic_destroy(NULL);
}

static void test_sink_without_callback(void **state)
{
	struct pvpanic *dev = pvpanic_create((struct power_sink){ 0 });

	write_byte(dev, 0, PVPANIC_PANICKED);
	pvpanic_destroy(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_back_supported_events),
		cmocka_unit_test(test_panicked_reports_a_guest_panic),
		cmocka_unit_test(test_crash_loaded_does_not_stop),
		cmocka_unit_test(test_both_bits_panicked_wins),
		cmocka_unit_test(test_unknown_bits_are_ignored),
		cmocka_unit_test(test_odd_widths_and_offsets),
		cmocka_unit_test(test_instances_are_independent),
		cmocka_unit_test(test_sink_without_callback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
