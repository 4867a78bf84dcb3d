// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "devices/i8042.h"
#include "fakes.h"

#define STS_OBF 0x01
#define STS_IBF 0x02
#define STS_AUXDATA 0x20
#define CTR_KBDDIS 0x10
#define CTR_AUXDIS 0x20

struct fixture {
	struct i8042 *kbc;
	struct fake_power power;
};

static uint8_t status(struct fixture *f)
{
	uint8_t value;

	i8042_cmd_bus_ops.read(f->kbc, 0, &value, 1);
	/* Never busy, whatever state the controller is in. */
	assert_false(value & STS_IBF);
	return value;
}

static void command(struct fixture *f, uint8_t cmd)
{
	i8042_cmd_bus_ops.write(f->kbc, 0, &cmd, 1);
}

static void data_write(struct fixture *f, uint8_t byte)
{
	i8042_data_bus_ops.write(f->kbc, 0, &byte, 1);
}

static uint8_t data_read(struct fixture *f)
{
	uint8_t value;

	i8042_data_bus_ops.read(f->kbc, 0, &value, 1);
	return value;
}

/* A command with one response byte, as Linux's i8042_command() does it. */
static uint8_t query(struct fixture *f, uint8_t cmd)
{
	command(f, cmd);
	assert_true(status(f) & STS_OBF);
	return data_read(f);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->kbc = i8042_create(fake_power_sink(&f->power));
	assert_non_null(f->kbc);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	i8042_destroy(f->kbc);
	free(f);
	return 0;
}

static void test_idle_status(void **state)
{
	struct fixture *f = *state;
	uint8_t sts = status(f);

	assert_false(sts & STS_OBF);
	assert_true(sts & 0x04); /* system flag: POST passed */
	assert_true(sts & 0x10); /* keyboard not inhibited (no keylock) */
	/* Linux's flush finds nothing, and an empty data port reads 0. */
	assert_int_equal(data_read(f), 0);
	assert_false(status(f) & STS_OBF);
}

static void test_self_test_and_interface_tests(void **state)
{
	struct fixture *f = *state;
	uint8_t aux;

	assert_int_equal(query(f, 0xaa), 0x55);
	assert_false(status(f) & STS_OBF);
	assert_int_equal(query(f, 0xab), 0x00);
	/* No AUX port: an error code Linux's check_aux gives up on. */
	aux = query(f, 0xa9);
	assert_true(aux != 0x00 && aux != 0xfa && aux != 0xff);
	assert_int_equal(f->power.count, 0);
}

static void test_aux_loopback_fails_fast(void **state)
{
	struct fixture *f = *state;
	uint8_t sts;

	command(f, 0xd3);
	data_write(f, 0x5a);
	/* An answer at once, but not from AUX: "loopback failed". */
	sts = status(f);
	assert_true(sts & STS_OBF);
	assert_false(sts & STS_AUXDATA);
	/* Linux does not read it; the next command's answer replaces it. */
	assert_int_equal(query(f, 0xaa), 0x55);
	assert_false(status(f) & STS_OBF);
}

static void test_command_byte_round_trip(void **state)
{
	struct fixture *f = *state;

	command(f, 0x60);
	assert_false(status(f) & STS_OBF);
	data_write(f, 0x47);
	assert_int_equal(query(f, 0x20), 0x47);
	command(f, 0x60);
	data_write(f, 0x00);
	assert_int_equal(query(f, 0x20), 0x00);
	/* Reading it twice gives the same (Linux wants a stable CTR). */
	assert_int_equal(query(f, 0x20), 0x00);
	/* The command port flag reflects the last write. */
	command(f, 0x20);
	assert_true(status(f) & 0x08);
	(void)data_read(f);
	data_write(f, 0xf4); /* to the keyboard */
	assert_false(status(f) & 0x08);
}

static void test_port_enable_bits(void **state)
{
	struct fixture *f = *state;

	command(f, 0xa8);
	assert_false(query(f, 0x20) & CTR_AUXDIS);
	command(f, 0xa7);
	assert_true(query(f, 0x20) & CTR_AUXDIS);
	command(f, 0xad);
	assert_true(query(f, 0x20) & CTR_KBDDIS);
	command(f, 0xae);
	assert_false(query(f, 0x20) & CTR_KBDDIS);
}

static void test_pulse_reset_line(void **state)
{
	struct fixture *f = *state;

	command(f, 0xff); /* pulses no line */
	assert_int_equal(f->power.count, 0);
	command(f, 0xfe);
	assert_int_equal(f->power.count, 1);
	assert_int_equal(f->power.events[0], POWER_RESET);
	/* Linux's reboot loop: the status port still reads idle. */
	assert_false(status(f) & STS_OBF);
}

static void test_output_port_reset(void **state)
{
	struct fixture *f = *state;

	/* A20 and reset inactive: nothing happens. */
	command(f, 0xd1);
	data_write(f, 0xdf);
	assert_int_equal(f->power.count, 0);
	assert_int_equal(query(f, 0xd0), 0xdf);
	/* Bit 0 low asserts reset. */
	command(f, 0xd1);
	data_write(f, 0xde);
	assert_int_equal(f->power.count, 1);
	assert_int_equal(f->power.events[0], POWER_RESET);
	/* The data byte was consumed: the next one goes to the keyboard. */
	data_write(f, 0x00);
	assert_int_equal(f->power.count, 1);
}

static void test_keyboard_bytes_dropped(void **state)
{
	struct fixture *f = *state;

	/* No keyboard: ACK never comes, and nothing clogs the output. */
	data_write(f, 0xf2);
	data_write(f, 0xff);
	assert_false(status(f) & STS_OBF);
	/* Unknown commands are ignored; a following command still works. */
	command(f, 0xc1);
	command(f, 0xd4);
	data_write(f, 0xff);
	assert_false(status(f) & STS_OBF);
	assert_int_equal(query(f, 0xaa), 0x55);
	/* 0xd2 puts its byte in the output buffer as keyboard data. */
	command(f, 0xd2);
	data_write(f, 0x1c);
	assert_int_equal(status(f) & (STS_OBF | STS_AUXDATA), STS_OBF);
	assert_int_equal(data_read(f), 0x1c);
	assert_int_equal(f->power.count, 0);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct fixture *f = *state;
	uint8_t data[4];
	const uint8_t wide[2] = { 0xaa, 0xfe };

	/* A 16-bit command write is the low byte only: self test. */
	i8042_cmd_bus_ops.write(f->kbc, 0, wide, 2);
	assert_int_equal(f->power.count, 0);
	memset(data, 0xee, sizeof(data));
	i8042_cmd_bus_ops.read(f->kbc, 0, data, 4);
	assert_int_equal(data[0] & (STS_OBF | STS_IBF), STS_OBF);
	assert_int_equal(data[1], 0);
	assert_int_equal(data[3], 0);
	i8042_data_bus_ops.read(f->kbc, 0, data, 2);
	assert_int_equal(data[0], 0x55);
	assert_int_equal(data[1], 0);

	/* Offsets beyond the port: all-ones, writes ignored. */
	i8042_cmd_bus_ops.read(f->kbc, 1, data, 1);
	assert_int_equal(data[0], 0xff);
	i8042_data_bus_ops.read(f->kbc, UINT64_MAX, data, 2);
	assert_int_equal(data[0], 0xff);
	assert_int_equal(data[1], 0xff);
	i8042_cmd_bus_ops.write(f->kbc, 1, wide + 1, 1);
	i8042_cmd_bus_ops.write(f->kbc, UINT64_MAX, wide + 1, 1);
	i8042_cmd_bus_ops.write(f->kbc, 0, wide + 1, 0);
	assert_int_equal(f->power.count, 0);
}

static void test_instances_are_independent(void **state)
{
	struct fake_power pa, pb;
	struct i8042 *a = i8042_create(fake_power_sink(&pa));
	struct i8042 *b = i8042_create(fake_power_sink(&pb));
	uint8_t cmd = 0xfe;

	assert_non_null(a);
	assert_non_null(b);
	i8042_cmd_bus_ops.write(a, 0, &cmd, 1);
	assert_int_equal(pa.count, 1);
	assert_int_equal(pb.count, 0);
	i8042_destroy(a);
	i8042_destroy(b);
	i8042_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_idle_status),
		T(test_self_test_and_interface_tests),
		T(test_aux_loopback_fails_fast),
		T(test_command_byte_round_trip),
		T(test_port_enable_bits),
		T(test_pulse_reset_line),
		T(test_output_port_reset),
		T(test_keyboard_bytes_dropped),
		T(test_odd_widths_and_offsets),
		cmocka_unit_test(test_instances_are_independent),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
