// SPDX-License-Identifier: LGPL-2.1-or-later
/* The MP table as a guest parses it: checksums, CPU entries, the I/O APIC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/mptable.h"
#include "arch/x86/platform.h"

static uint8_t ram[1 << 20];

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static void check_table(unsigned int cpus, bool legacy_pic)
{
	struct guest_memory mem = { 0 };
	const uint8_t *mpf = ram + X86_MPTABLE_GPA, *mpc, *p;
	unsigned int seen_cpus = 0, ioapics = 0, entries, extint = 0;
	uint32_t isa_irqs = 0;
	uint32_t physptr;
	uint16_t len;

	assert_int_equal(guest_memory_add_region(&mem, 0, sizeof(ram), ram), 0);
	assert_int_equal(mptable_write(&mem, X86_MPTABLE_GPA, X86_MPTABLE_MAX,
				       cpus, legacy_pic),
			 0);
	assert_memory_equal(mpf, "_MP_", 4);
	assert_int_equal(sum(mpf, 16), 0);
	memcpy(&physptr, mpf + 4, 4);
	mpc = ram + physptr;
	assert_memory_equal(mpc, "PCMP", 4);
	memcpy(&len, mpc + 4, 2);
	assert_int_equal(sum(mpc, len), 0);
	memcpy(&entries, mpc + 34, 2);
	entries &= 0xffff;
	p = mpc + 44;
	for (unsigned int i = 0; i < entries; i++) {
		switch (p[0]) {
		case 0:
			assert_int_equal(p[1], seen_cpus); /* APIC id */
			assert_true(p[3] & 1); /* enabled */
			assert_int_equal(!!(p[3] & 2), seen_cpus == 0);
			seen_cpus++;
			p += 20;
			break;
		case 2:
			assert_int_equal(p[1], cpus); /* id after the CPUs */
			ioapics++;
			p += 8;
			break;
		case 3: /* I/O interrupt: ISA IRQ p[5] */
			isa_irqs |= 1u << p[5];
			p += 8;
			break;
		case 4: /* local interrupt: ExtINT (3) is the PIC */
			extint += p[1] == 3;
			p += 8;
			break;
		default:
			p += 8;
			break;
		}
	}
	assert_ptr_equal(p, mpc + len);
	assert_int_equal(seen_cpus, cpus);
	assert_int_equal(ioapics, 1);
	/* Only what exists: no PIC, no PIT means no ExtINT, no IRQ 0/2. */
	assert_int_equal(extint, legacy_pic ? 1 : 0);
	assert_int_equal(isa_irqs, legacy_pic ? 0xffff : 0xfffa);
}

static void test_tables_for_various_cpu_counts(void **state)
{
	check_table(1, true);
	check_table(2, true);
	check_table(4, true);
	check_table(254, true);
	check_table(1, false);
	check_table(4, false);
	check_table(254, false);
}

static void test_rejects_impossible_counts(void **state)
{
	struct guest_memory mem = { 0 };

	assert_int_equal(guest_memory_add_region(&mem, 0, sizeof(ram), ram), 0);
	assert_true(mptable_write(&mem, X86_MPTABLE_GPA, X86_MPTABLE_MAX, 0,
				  true) < 0);
	assert_true(mptable_write(&mem, X86_MPTABLE_GPA, X86_MPTABLE_MAX, 255,
				  true) < 0);
	assert_true(mptable_write(&mem, sizeof(ram) - 64, 4096, 4, true) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_for_various_cpu_counts),
		cmocka_unit_test(test_rejects_impossible_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
