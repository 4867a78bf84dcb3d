// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "devices/acpi_pm.h"
#include "fakes.h"

#define PM1_STS 0
#define PM1_EN 2
#define WAK_STS 0x8000

struct fixture {
	struct acpi_pm *pm;
	struct fake_power power;
	struct fake_irq sci;
};

static uint64_t rd(const struct bus_ops *ops, struct acpi_pm *pm,
		   uint64_t offset, uint32_t len)
{
	uint8_t data[8];
	uint64_t value = 0;
	uint32_t i;

	memset(data, 0xee, sizeof(data));
	ops->read(pm, offset, data, len);
	for (i = 0; i < len; i++)
		value |= (uint64_t)data[i] << (8 * i);
	return value;
}

static void wr(const struct bus_ops *ops, struct acpi_pm *pm, uint64_t offset,
	       uint64_t value, uint32_t len)
{
	uint8_t data[8];
	uint32_t i;

	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(value >> (8 * i));
	ops->write(pm, offset, data, len);
}

#define EVT (&acpi_pm1_evt_bus_ops)
#define CNT (&acpi_pm1_cnt_bus_ops)
#define RST (&acpi_reset_bus_ops)
#define GPE (&acpi_gpe0_bus_ops)
#define GPE_STS 0
#define GPE_EN 2
#define SLP(typ) ((uint64_t)(typ) << ACPI_SLP_TYP_SHIFT)

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->pm = acpi_pm_create(fake_power_sink(&f->power),
			       fake_irq_line(&f->sci, 9));
	assert_non_null(f->pm);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	acpi_pm_destroy(f->pm);
	free(f);
	return 0;
}

static void test_s5_powers_off(void **state)
{
	struct fixture *f = *state;

	/* Linux: SLP_TYP first, then SLP_TYP | SLP_EN, preserving SCI_EN. */
	wr(CNT, f->pm, 0, ACPI_SCI_EN | SLP(ACPI_SLP_TYP_S5), 2);
	assert_int_equal(f->power.count, 0);
	wr(CNT, f->pm, 0, ACPI_SCI_EN | SLP(ACPI_SLP_TYP_S5) | ACPI_SLP_EN, 2);
	assert_int_equal(f->power.count, 1);
	assert_int_equal(f->power.events[0], POWER_OFF);
	/* SLP_EN is write-only; SLP_TYP reads back. */
	assert_int_equal(rd(CNT, f->pm, 0, 2),
			 ACPI_SCI_EN | SLP(ACPI_SLP_TYP_S5));
}

static void test_other_sleep_types_ignored(void **state)
{
	struct fixture *f = *state;
	unsigned int typ;

	for (typ = 0; typ < 8; typ++) {
		if (typ == ACPI_SLP_TYP_S5)
			continue;
		wr(CNT, f->pm, 0, SLP(typ) | ACPI_SLP_EN, 2);
		assert_int_equal(f->power.count, 0);
		/* "Woke up at once", so a waiting guest does not spin. */
		assert_int_equal(rd(EVT, f->pm, PM1_STS, 2), WAK_STS);
		wr(EVT, f->pm, PM1_STS, WAK_STS, 2);
		assert_int_equal(rd(EVT, f->pm, PM1_STS, 2), 0);
	}
}

static void test_sci_en_always_set(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(rd(CNT, f->pm, 0, 2), ACPI_SCI_EN);
	wr(CNT, f->pm, 0, 0, 2);
	assert_int_equal(rd(CNT, f->pm, 0, 2), ACPI_SCI_EN);
	assert_int_equal(rd(CNT, f->pm, 0, 1), ACPI_SCI_EN);
}

static void test_pm1_sts_write_one_to_clear(void **state)
{
	struct fixture *f = *state;

	wr(CNT, f->pm, 0, SLP(1) | ACPI_SLP_EN, 2);
	assert_int_equal(rd(EVT, f->pm, PM1_STS, 2), WAK_STS);
	/* Writing 0s (or other bits) leaves it. */
	wr(EVT, f->pm, PM1_STS, 0x7fff, 2);
	assert_int_equal(rd(EVT, f->pm, PM1_STS, 2), WAK_STS);
	/* A byte write of the high half clears it. */
	wr(EVT, f->pm, PM1_STS + 1, WAK_STS >> 8, 1);
	assert_int_equal(rd(EVT, f->pm, PM1_STS, 2), 0);
}

static void test_pm1_en_round_trip(void **state)
{
	struct fixture *f = *state;

	wr(EVT, f->pm, PM1_EN, 0x0100, 2); /* PWRBTN_EN */
	assert_int_equal(rd(EVT, f->pm, PM1_EN, 2), 0x0100);
	/* Reserved bits read 0. */
	wr(EVT, f->pm, PM1_EN, 0xffff, 2);
	assert_int_equal(rd(EVT, f->pm, PM1_EN, 2), 0x4721);
	/* Writing EN does not touch STS, and the reverse. */
	assert_int_equal(rd(EVT, f->pm, PM1_STS, 2), 0);
	wr(EVT, f->pm, PM1_STS, 0xffff, 2);
	assert_int_equal(rd(EVT, f->pm, PM1_EN, 2), 0x4721);
}

static void test_reset_register(void **state)
{
	struct fixture *f = *state;

	/* Linux's cf9 sequence: 0x02 (hard reset requested) then 0x06. */
	wr(RST, f->pm, 0, 0x02, 1);
	assert_int_equal(f->power.count, 0);
	assert_int_equal(rd(RST, f->pm, 0, 1), 0x02);
	wr(RST, f->pm, 0, 0x06, 1);
	assert_int_equal(f->power.count, 1);
	assert_int_equal(f->power.events[0], POWER_RESET);
	wr(RST, f->pm, 0, 0x0e, 1);
	assert_int_equal(f->power.count, 2);
	assert_int_equal(f->power.events[1], POWER_RESET);
	/* RST_CPU reads back 0, the other bits stay. */
	assert_int_equal(rd(RST, f->pm, 0, 1), 0x0a);
	wr(RST, f->pm, 0, 0x00, 1);
	wr(RST, f->pm, 0, 0x08, 1);
	assert_int_equal(f->power.count, 2);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct fixture *f = *state;

	/* A byte write of CNT's high byte carries SLP_TYP and SLP_EN. */
	wr(CNT, f->pm, 1, (SLP(ACPI_SLP_TYP_S5) | ACPI_SLP_EN) >> 8, 1);
	assert_int_equal(f->power.count, 1);
	assert_int_equal(f->power.events[0], POWER_OFF);
	/* A low-byte write cannot hold SLP_EN. */
	wr(CNT, f->pm, 0, 0xff, 1);
	assert_int_equal(f->power.count, 1);

	/* 16-bit at offset 1 of CNT: byte 1 only, the rest is not there. */
	wr(CNT, f->pm, 1, 0xff00 | ((SLP(3) | ACPI_SLP_EN) >> 8), 2);
	assert_int_equal(f->power.count, 1);
	assert_int_equal(rd(CNT, f->pm, 1, 2), 0xff00 | (SLP(3) >> 8));
	/* 32-bit read of the 2-byte block. */
	assert_int_equal(rd(CNT, f->pm, 0, 4),
			 0xffff0000 | SLP(3) | ACPI_SCI_EN | 0x2);

	/* One 32-bit write of the event block: STS and EN together. */
	wr(EVT, f->pm, 0, (uint64_t)0x0120 << 16 | WAK_STS, 4);
	assert_int_equal(rd(EVT, f->pm, 0, 4), (uint64_t)0x0120 << 16);
	/* 16-bit at offset 1: STS high byte and EN low byte. */
	wr(EVT, f->pm, 1, 0x2100, 2);
	assert_int_equal(rd(EVT, f->pm, PM1_EN, 2), 0x0121);
	assert_int_equal(rd(EVT, f->pm, 3, 2), 0xff01);

	/* Far out of range: all-ones, and writes change nothing. */
	assert_int_equal(rd(EVT, f->pm, 4, 1), 0xff);
	assert_int_equal(rd(EVT, f->pm, UINT64_MAX, 2), 0xffff);
	assert_int_equal(rd(CNT, f->pm, UINT64_MAX, 1), 0xff);
	assert_int_equal(rd(RST, f->pm, 1, 1), 0xff);
	wr(EVT, f->pm, UINT64_MAX, 0xffff, 2);
	wr(CNT, f->pm, UINT64_MAX, 0xffff, 2);
	wr(RST, f->pm, 1, 0x06, 1);
	wr(RST, f->pm, UINT64_MAX, 0x06, 1);
	assert_int_equal(rd(EVT, f->pm, PM1_EN, 2), 0x0121);
	assert_int_equal(f->power.count, 1);
	/* A wide RESET_REG write acts on its first byte. */
	wr(RST, f->pm, 0, 0xff06, 2);
	assert_int_equal(f->power.count, 2);
	assert_int_equal(rd(RST, f->pm, 0, 2), 0xff02);
}

/*
 * A raised event interrupts only once the guest enables it, stays
 * pending until the guest clears its status bit (write 1), and the SCI
 * follows (as Linux's GPE handling expects of a level SCI).
 */
static void test_gpe_raises_sci_while_pending_and_enabled(void **state)
{
	struct fixture *f = *state;

	acpi_pm_raise_gpe(f->pm, 0);
	assert_int_equal(rd(GPE, f->pm, GPE_STS, 2), 0x0001);
	assert_false(f->sci.level); /* not enabled yet */
	wr(GPE, f->pm, GPE_EN, 0x0001, 1);
	assert_true(f->sci.level);
	assert_int_equal(f->sci.gsi, 9);
	/* Clearing another bit, or writing 0, leaves it pending. */
	wr(GPE, f->pm, GPE_STS, 0x0002, 1);
	wr(GPE, f->pm, GPE_STS, 0x0000, 1);
	assert_true(f->sci.level);
	wr(GPE, f->pm, GPE_STS, 0x0001, 1);
	assert_false(f->sci.level);
	assert_int_equal(rd(GPE, f->pm, 0, 4), 0x00010000);
	/* Disabled while pending: no SCI; enabled again: the SCI again. */
	acpi_pm_raise_gpe(f->pm, 0);
	assert_true(f->sci.level);
	wr(GPE, f->pm, GPE_EN, 0, 2);
	assert_false(f->sci.level);
	wr(GPE, f->pm, GPE_EN, 0x0001, 2);
	assert_true(f->sci.level);
	/* Out of range: ignored. */
	acpi_pm_raise_gpe(f->pm, 16);
	assert_int_equal(rd(GPE, f->pm, GPE_STS, 2), 0x0001);
	/* The line is set only when it changes. */
	assert_int_equal(f->sci.changes, 5);
}

/* A snapshot carries a pending event; the restored SCI matches it. */
static void test_gpe_state_round_trip(void **state)
{
	struct fixture *f = *state;
	struct acpi_pm_state s;
	struct fake_power power = { 0 };
	struct fake_irq sci;
	struct acpi_pm *pm2 =
		acpi_pm_create(fake_power_sink(&power), fake_irq_line(&sci, 9));

	assert_non_null(pm2);
	wr(GPE, f->pm, GPE_EN, 0x0005, 2);
	acpi_pm_raise_gpe(f->pm, 2);
	acpi_pm_save(f->pm, &s);
	assert_int_equal(acpi_pm_load(pm2, &s), 0);
	assert_int_equal(rd(GPE, pm2, 0, 4), 0x00050004);
	assert_true(sci.level);
	acpi_pm_destroy(pm2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_s5_powers_off),
		T(test_other_sleep_types_ignored),
		T(test_sci_en_always_set),
		T(test_pm1_sts_write_one_to_clear),
		T(test_pm1_en_round_trip),
		T(test_reset_register),
		T(test_odd_widths_and_offsets),
		T(test_gpe_raises_sci_while_pending_and_enabled),
		T(test_gpe_state_round_trip),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
