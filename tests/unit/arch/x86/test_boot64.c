// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "arch/x86/boot64.h"
#include "core/guest_memory.h"

#define RAM_SIZE (1u << 20)

static uint8_t ram[RAM_SIZE];

/* Walk the guest's page tables like the MMU would (4-level, 2 MiB pages). */
static uint64_t translate(uint64_t va)
{
	uint64_t cr3 = BOOT64_PML4_GPA, e;

	memcpy(&e, ram + cr3 + ((va >> 39) & 511) * 8, 8);
	assert_true(e & 1);
	memcpy(&e, ram + (e & ~0xfffULL) + ((va >> 30) & 511) * 8, 8);
	assert_true(e & 1);
	assert_false(e & 0x80); /* no 1 GiB pages: not every CPU has them */
	memcpy(&e, ram + (e & ~0xfffULL) + ((va >> 21) & 511) * 8, 8);
	assert_true(e & 1);
	assert_true(e & 2);
	assert_true(e & 0x80);
	return (e & ~0x1fffffULL & ((1ULL << 52) - 1)) | (va & 0x1fffff);
}

static void test_tables_identity_map_4g(void **state)
{
	struct guest_memory mem = { 0 };
	static const uint64_t probes[] = { 0,	       0x3000,	   0x1000200,
					   0x7ffff000, 0xbfffffff, 0xfee00000,
					   0xffffffff };

	assert_int_equal(guest_memory_add_region(&mem, 0, RAM_SIZE, ram), 0);
	assert_int_equal(boot64_write_tables(&mem), 0);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		assert_int_equal(translate(probes[i]), probes[i]);
}

static void test_gdt_has_flat_boot_cs_and_ds(void **state)
{
	struct guest_memory mem = { 0 };
	uint64_t cs, ds;

	assert_int_equal(guest_memory_add_region(&mem, 0, RAM_SIZE, ram), 0);
	assert_int_equal(boot64_write_tables(&mem), 0);
	memcpy(&cs, ram + BOOT64_GDT_GPA + BOOT64_CS_SELECTOR, 8);
	memcpy(&ds, ram + BOOT64_GDT_GPA + BOOT64_DS_SELECTOR, 8);
	/* Present, S=1, DPL 0; code: type 0xb, L=1, D=0; data: type 3, D=1. */
	assert_int_equal((cs >> 40) & 0xff, 0x9b);
	assert_int_equal((cs >> 53) & 3, 1);
	assert_int_equal((ds >> 40) & 0xff, 0x93);
	assert_int_equal((ds >> 54) & 1, 1);
	/* Limit 0xfffff with G=1: 4 GiB. */
	assert_int_equal(cs & 0xffff, 0xffff);
	assert_int_equal((ds >> 48) & 0xf, 0xf);
	assert_int_equal((ds >> 55) & 1, 1);
}

static void test_tables_outside_ram_fail(void **state)
{
	struct guest_memory mem = { 0 };

	/* RAM only from 1 MiB: the low tables cannot be written. */
	assert_int_equal(guest_memory_add_region(&mem, 1 << 20, RAM_SIZE, ram),
			 0);
	assert_int_equal(boot64_write_tables(&mem), -EFAULT);
}

static void test_entry_state(void **state)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	memset(&regs, 0xff, sizeof(regs));
	memset(&sregs, 0, sizeof(sregs));
	sregs.cr0 = 0x60000010; /* KVM's reset value: CD, NW, ET */
	boot64_set_entry_state(&regs, &sregs, 0x1000200, 0x3000);
	assert_int_equal(regs.rip, 0x1000200);
	assert_int_equal(regs.rsi, 0x3000);
	assert_int_equal(regs.rflags, 2); /* IF clear */
	assert_int_equal(regs.rax, 0);
	assert_int_equal(sregs.cr0, 0x80000011);
	assert_int_equal(sregs.cr3, BOOT64_PML4_GPA);
	assert_true(sregs.cr4 & (1 << 5));
	assert_int_equal(sregs.efer & 0x500, 0x500);
	assert_int_equal(sregs.cs.selector, BOOT64_CS_SELECTOR);
	assert_int_equal(sregs.cs.l, 1);
	assert_int_equal(sregs.cs.db, 0);
	assert_int_equal(sregs.cs.type, 0xb);
	assert_int_equal(sregs.ds.selector, BOOT64_DS_SELECTOR);
	assert_int_equal(sregs.ss.selector, BOOT64_DS_SELECTOR);
	assert_int_equal(sregs.es.selector, BOOT64_DS_SELECTOR);
	assert_int_equal(sregs.ss.db, 1);
	assert_int_equal(sregs.gdt.base, BOOT64_GDT_GPA);
	assert_int_equal(sregs.gdt.limit, 31);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_identity_map_4g),
		cmocka_unit_test(test_gdt_has_flat_boot_cs_and_ds),
		cmocka_unit_test(test_tables_outside_ram_fail),
		cmocka_unit_test(test_entry_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
