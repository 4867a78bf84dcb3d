// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>

#include "arch/x86/e820.h"
#include "arch/x86/platform.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static uint64_t ram_in_map(const struct x86_e820_entry *map, int n)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++)
		if (map[i].type == X86_E820_RAM)
			sum += map[i].size;
	return sum;
}

static void test_small_guest_has_low_and_high_ram(void **state)
{
	struct x86_e820_entry map[X86_E820_MAX_ENTRIES];
	int n = x86_e820_build(512 * MiB, map, X86_E820_MAX_ENTRIES);

	assert_int_equal(n, 3);
	assert_int_equal(map[0].addr, 0);
	assert_int_equal(map[0].size, X86_LOW_RAM_END);
	assert_int_equal(map[0].type, X86_E820_RAM);
	assert_int_equal(map[1].addr, X86_LOW_RAM_END);
	assert_int_equal(map[1].addr + map[1].size, X86_HIGH_MEM_START);
	assert_int_equal(map[1].type, X86_E820_RESERVED);
	assert_int_equal(map[2].addr, X86_HIGH_MEM_START);
	assert_int_equal(map[2].addr + map[2].size, 512 * MiB);
	assert_int_equal(map[2].type, X86_E820_RAM);
}

static void test_tables_live_in_the_reserved_window(void **state)
{
	struct x86_e820_entry map[X86_E820_MAX_ENTRIES];

	assert_int_equal(x86_e820_build(64 * MiB, map, X86_E820_MAX_ENTRIES),
			 3);
	/* ACPI and MP tables must not be handed out as RAM. */
	assert_true(map[1].addr <= X86_ACPI_GPA);
	assert_true(X86_MPTABLE_GPA + X86_MPTABLE_MAX <=
		    map[1].addr + map[1].size);
	/* The boot structures hintvm writes below 640 KiB stay RAM. */
	assert_true(X86_CMDLINE_GPA + X86_CMDLINE_MAX <= map[0].size);
}

static void test_big_guest_splits_around_the_mmio_hole(void **state)
{
	struct x86_e820_entry map[X86_E820_MAX_ENTRIES];
	int n = x86_e820_build(4 * GiB, map, X86_E820_MAX_ENTRIES);

	assert_int_equal(n, 4);
	assert_int_equal(map[2].addr + map[2].size, X86_MMIO_HOLE_START);
	assert_int_equal(map[3].addr, X86_MMIO_HOLE_END);
	assert_int_equal(map[3].size, 4 * GiB - X86_MMIO_HOLE_START);
	assert_int_equal(x86_ram_below_hole(4 * GiB), X86_MMIO_HOLE_START);
	assert_int_equal(x86_ram_above_4g(4 * GiB), GiB);
	/* All RAM but the reserved window is described. */
	assert_int_equal(ram_in_map(map, n),
			 4 * GiB - (X86_HIGH_MEM_START - X86_LOW_RAM_END));
}

static void test_exactly_the_hole_start_has_no_high_entry(void **state)
{
	struct x86_e820_entry map[X86_E820_MAX_ENTRIES];

	assert_int_equal(
		x86_e820_build(X86_MMIO_HOLE_START, map, X86_E820_MAX_ENTRIES),
		3);
	assert_int_equal(x86_ram_above_4g(X86_MMIO_HOLE_START), 0);
}

static void test_rejects_tiny_ram_and_short_arrays(void **state)
{
	struct x86_e820_entry map[X86_E820_MAX_ENTRIES];

	assert_int_equal(x86_e820_build(MiB, map, X86_E820_MAX_ENTRIES),
			 -EINVAL);
	assert_int_equal(
		x86_e820_build(X86_E820_MIN_RAM, map, X86_E820_MAX_ENTRIES), 3);
	assert_int_equal(x86_e820_build(512 * MiB, map, 2), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_guest_has_low_and_high_ram),
		cmocka_unit_test(test_tables_live_in_the_reserved_window),
		cmocka_unit_test(test_big_guest_splits_around_the_mmio_hole),
		cmocka_unit_test(test_exactly_the_hole_start_has_no_high_entry),
		cmocka_unit_test(test_rejects_tiny_ram_and_short_arrays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
