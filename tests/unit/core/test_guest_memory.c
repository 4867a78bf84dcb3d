// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "core/guest_memory.h"

static uint8_t low[0x1000], high[0x2000];

static struct guest_memory two_regions(void)
{
	struct guest_memory mem = { 0 };

	assert_int_equal(guest_memory_add_region(&mem, 0, sizeof(low), low), 0);
	assert_int_equal(
		guest_memory_add_region(&mem, 0x100000, sizeof(high), high), 0);
	return mem;
}

static void test_ptr_inside_regions(void **state)
{
	struct guest_memory mem = two_regions();

	assert_ptr_equal(guest_ptr(&mem, 0, 1), low);
	assert_ptr_equal(guest_ptr(&mem, 0xfff, 1), low + 0xfff);
	assert_ptr_equal(guest_ptr(&mem, 0x100010, 0x1ff0), high + 0x10);
	assert_int_equal(mem.ram_size, sizeof(low) + sizeof(high));
}

static void test_ptr_rejects_ranges_leaving_ram(void **state)
{
	struct guest_memory mem = two_regions();

	assert_null(guest_ptr(&mem, 0xfff, 2)); /* runs off the end */
	assert_null(guest_ptr(&mem, 0x1000, 1)); /* the hole */
	assert_null(guest_ptr(&mem, 0xfffff, 2)); /* starts in the hole */
	assert_null(guest_ptr(&mem, 0x100000, 0x2001));
	assert_null(guest_ptr(&mem, 0x100001, UINT64_MAX)); /* wraps */
	assert_null(guest_ptr(&mem, UINT64_MAX, 1));
	assert_null(guest_ptr(&mem, UINT64_MAX - 0xf, 0x20));
	/* A range spanning two regions is not contiguous in the host. */
	assert_null(guest_ptr(&mem, 0, 0x100001));
}

static void test_copy_helpers(void **state)
{
	struct guest_memory mem = two_regions();
	uint32_t v = 0xdeadbeef, r = 0;

	assert_int_equal(guest_write(&mem, 0x100004, &v, sizeof(v)), 0);
	assert_int_equal(guest_read(&mem, 0x100004, &r, sizeof(r)), 0);
	assert_int_equal(r, v);
	assert_int_equal(guest_write(&mem, 0xffe, &v, sizeof(v)), -EFAULT);
	assert_int_equal(guest_read(&mem, 0x2000, &r, sizeof(r)), -EFAULT);
}

static void test_add_region_validation(void **state)
{
	struct guest_memory mem = two_regions();
	static uint8_t more[16];

	assert_int_equal(guest_memory_add_region(&mem, 0x800, 0x1000, more),
			 -EEXIST);
	assert_int_equal(guest_memory_add_region(&mem, 0x200000, 0, more),
			 -EINVAL);
	assert_int_equal(guest_memory_add_region(&mem, UINT64_MAX, 2, more),
			 -EINVAL);
	assert_int_equal(guest_memory_add_region(&mem, 0x200000, 16, NULL),
			 -EINVAL);
	assert_int_equal(guest_memory_add_region(&mem, 0x200000, 16, more), 0);
	assert_int_equal(guest_memory_add_region(&mem, 0x300000, 16, more), 0);
	assert_int_equal(guest_memory_add_region(&mem, 0x400000, 16, more),
			 -ENOSPC);
}

static void test_map_anonymous(void **state)
{
	struct guest_memory mem = { 0 };

	assert_int_equal(guest_memory_map(&mem, 4 << 20, false), 0);
	assert_int_equal(guest_memory_add_region(&mem, 0, 4 << 20, mem.mapping),
			 0);
	memset(guest_ptr(&mem, 0, 4 << 20), 0xaa, 4 << 20);
	guest_memory_unmap(&mem);
	assert_int_equal(mem.nr_regions, 0);
	assert_int_equal(guest_memory_map(&mem, 0, false), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptr_inside_regions),
		cmocka_unit_test(test_ptr_rejects_ranges_leaving_ram),
		cmocka_unit_test(test_copy_helpers),
		cmocka_unit_test(test_add_region_validation),
		cmocka_unit_test(test_map_anonymous),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
