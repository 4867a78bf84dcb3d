// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The userspace I/O APIC as a guest and its devices see it: the register
 * window, what MSI each redirection entry sends, masking, level-triggered
 * pins with remote IRR and re-delivery on EOI, and the route table KVM is
 * told about.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/ioapic.h"

#define MAX_MSIS 16

struct recorder {
	unsigned int nr;
	uint64_t address[MAX_MSIS];
	uint32_t data[MAX_MSIS];
	unsigned int route_updates;
	struct ioapic_route routes[IOAPIC_PINS];
};

static int record_msi(void *ctx, uint64_t address, uint32_t data)
{
	struct recorder *rec = ctx;

	if (rec->nr < MAX_MSIS) {
		rec->address[rec->nr] = address;
		rec->data[rec->nr] = data;
	}
	rec->nr++;
	return 0;
}

static int record_routes(void *ctx,
			 const struct ioapic_route routes[IOAPIC_PINS])
{
	struct recorder *rec = ctx;

	rec->route_updates++;
	memcpy(rec->routes, routes, sizeof(rec->routes));
	return 0;
}

struct fixture {
	struct recorder rec;
	struct ioapic *io;
};

static int setup(void **state)
{
	static struct fixture f;
	struct ioapic_ops ops = { .send_msi = record_msi,
				  .routes_changed = record_routes,
				  .ctx = &f.rec };

	memset(&f, 0, sizeof(f));
	f.io = ioapic_create(&ops);
	assert_non_null(f.io);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ioapic_destroy(f->io);
	return 0;
}

static void mmio_write(struct ioapic *io, uint64_t offset, uint32_t value)
{
	uint8_t buf[4];

	memcpy(buf, &value, 4);
	ioapic_bus_ops.write(io, offset, buf, 4);
}

static uint32_t mmio_read(struct ioapic *io, uint64_t offset)
{
	uint8_t buf[4];
	uint32_t value;

	ioapic_bus_ops.read(io, offset, buf, 4);
	memcpy(&value, buf, 4);
	return value;
}

static void reg_write(struct ioapic *io, uint32_t index, uint32_t value)
{
	mmio_write(io, IOAPIC_REG_SELECT, index);
	mmio_write(io, IOAPIC_REG_WINDOW, value);
}

static uint32_t reg_read(struct ioapic *io, uint32_t index)
{
	mmio_write(io, IOAPIC_REG_SELECT, index);
	return mmio_read(io, IOAPIC_REG_WINDOW);
}

/* What a guest driver does: destination first, then the low dword. */
static void program(struct ioapic *io, unsigned int pin, uint8_t dest,
		    uint32_t low)
{
	reg_write(io, IOAPIC_INDEX_REDIR + 2 * pin + 1, (uint32_t)dest << 24);
	reg_write(io, IOAPIC_INDEX_REDIR + 2 * pin, low);
}

static void reset_state_and_identity(void **state)
{
	struct fixture *f = *state;
	uint32_t version = reg_read(f->io, IOAPIC_INDEX_VERSION);

	assert_int_equal(version & 0xff, IOAPIC_VERSION);
	assert_int_equal((version >> 16) & 0xff, IOAPIC_PINS - 1);
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++)
		assert_int_equal(ioapic_redirection(f->io, pin),
				 IOAPIC_RTE_MASKED);
	reg_write(f->io, IOAPIC_INDEX_ID, 0x0a000000);
	assert_int_equal(reg_read(f->io, IOAPIC_INDEX_ID), 0x0a000000);
	/* The version register is read-only. */
	reg_write(f->io, IOAPIC_INDEX_VERSION, 0);
	assert_int_equal(reg_read(f->io, IOAPIC_INDEX_VERSION), version);
	/* A raised pin that is masked sends nothing. */
	assert_int_equal(ioapic_set_irq(f->io, 4, true), 0);
	assert_int_equal(f->rec.nr, 0);
	assert_int_equal(ioapic_set_irq(f->io, IOAPIC_PINS, true), -EINVAL);
}

static void redirection_entries_read_back(void **state)
{
	struct fixture *f = *state;
	unsigned int pin = 9;

	program(f->io, pin, 0x03, 0x1a9f1 | IOAPIC_RTE_MASKED);
	assert_int_equal(reg_read(f->io, IOAPIC_INDEX_REDIR + 2 * pin + 1),
			 0x03000000);
	/* Delivery status and remote IRR are read-only: written as 1,
	 * they read as 0. */
	program(f->io, pin, 0x03,
		0x31 | IOAPIC_RTE_DELIVERY_STATUS | IOAPIC_RTE_REMOTE_IRR |
			IOAPIC_RTE_LEVEL | IOAPIC_RTE_MASKED);
	assert_int_equal(reg_read(f->io, IOAPIC_INDEX_REDIR + 2 * pin),
			 0x31 | IOAPIC_RTE_LEVEL | IOAPIC_RTE_MASKED);
	assert_int_equal(ioapic_redirection(f->io, pin),
			 (0x03ull << 56) | 0x31 | IOAPIC_RTE_LEVEL |
				 IOAPIC_RTE_MASKED);
	/* Past the table reads zero and writes go nowhere. */
	reg_write(f->io, IOAPIC_INDEX_REDIR + 2 * IOAPIC_PINS, 0x55);
	assert_int_equal(reg_read(f->io, IOAPIC_INDEX_REDIR + 2 * IOAPIC_PINS),
			 0);
	/* Accesses that are not 32-bit are ignored. */
	ioapic_bus_ops.write(f->io, IOAPIC_REG_SELECT, (uint8_t[]){ 0x01 }, 1);
	assert_int_equal(mmio_read(f->io, IOAPIC_REG_SELECT),
			 IOAPIC_INDEX_REDIR + 2 * IOAPIC_PINS);
}

static void edge_pin_sends_its_message(void **state)
{
	struct fixture *f = *state;

	/* Pin 4 (the UART): vector 0x24, fixed, physical, to APIC 1. */
	program(f->io, 4, 1, 0x24);
	assert_int_equal(f->rec.nr, 0);
	ioapic_set_irq(f->io, 4, true);
	assert_int_equal(f->rec.nr, 1);
	assert_int_equal(f->rec.address[0], 0xfee01000);
	assert_int_equal(f->rec.data[0], 0x24);
	/* Staying high is no new edge. */
	ioapic_set_irq(f->io, 4, true);
	assert_int_equal(f->rec.nr, 1);
	ioapic_set_irq(f->io, 4, false);
	ioapic_set_irq(f->io, 4, true);
	assert_int_equal(f->rec.nr, 2);

	/* Logical destination, lowest priority: both reach the message. */
	program(f->io, 5, 0x0f, 0x31 | 1 << 8 | IOAPIC_RTE_DEST_LOGICAL);
	ioapic_set_irq(f->io, 5, true);
	assert_int_equal(f->rec.nr, 3);
	assert_int_equal(f->rec.address[2], 0xfee0f004);
	assert_int_equal(f->rec.data[2], 0x131);
}

static void masked_edge_is_delivered_on_unmask(void **state)
{
	struct fixture *f = *state;

	program(f->io, 4, 0, 0x24 | IOAPIC_RTE_MASKED);
	ioapic_set_irq(f->io, 4, true);
	ioapic_set_irq(f->io, 4, false);
	assert_int_equal(f->rec.nr, 0);
	program(f->io, 4, 0, 0x24);
	assert_int_equal(f->rec.nr, 1);
	/* Once: unmasking again does not repeat it. */
	program(f->io, 4, 0, 0x24 | IOAPIC_RTE_MASKED);
	program(f->io, 4, 0, 0x24);
	assert_int_equal(f->rec.nr, 1);
}

static void level_pin_waits_for_eoi(void **state)
{
	struct fixture *f = *state;
	uint32_t low = 0x39 | IOAPIC_RTE_LEVEL;

	program(f->io, 9, 0, low);
	ioapic_set_irq(f->io, 9, true);
	assert_int_equal(f->rec.nr, 1);
	assert_int_equal(f->rec.data[0],
			 0x39 | MSI_DATA_TRIGGER_LEVEL | MSI_DATA_LEVEL_ASSERT);
	assert_true(reg_read(f->io, IOAPIC_INDEX_REDIR + 18) &
		    IOAPIC_RTE_REMOTE_IRR);
	/* In service: a line that stays or goes high again is held back. */
	ioapic_set_irq(f->io, 9, false);
	ioapic_set_irq(f->io, 9, true);
	assert_int_equal(f->rec.nr, 1);
	/* The EOI of another vector changes nothing. */
	ioapic_eoi(f->io, 0x3a);
	assert_int_equal(f->rec.nr, 1);
	/* EOI while the device still asserts: delivered again. */
	ioapic_eoi(f->io, 0x39);
	assert_int_equal(f->rec.nr, 2);
	assert_true(ioapic_redirection(f->io, 9) & IOAPIC_RTE_REMOTE_IRR);
	/* The device is served, then the EOI: quiet, remote IRR clear. */
	ioapic_set_irq(f->io, 9, false);
	ioapic_eoi(f->io, 0x39);
	assert_int_equal(f->rec.nr, 2);
	assert_false(ioapic_redirection(f->io, 9) & IOAPIC_RTE_REMOTE_IRR);
}

static void level_pin_masked_while_asserted(void **state)
{
	struct fixture *f = *state;
	uint32_t low = 0x39 | IOAPIC_RTE_LEVEL;

	program(f->io, 9, 0, low | IOAPIC_RTE_MASKED);
	ioapic_set_irq(f->io, 9, true);
	assert_int_equal(f->rec.nr, 0);
	program(f->io, 9, 0, low); /* still asserted: delivered on unmask */
	assert_int_equal(f->rec.nr, 1);
	/* Masked while in service; the EOI still clears remote IRR, and
	 * the unmask delivers the level that is still there. */
	program(f->io, 9, 0, low | IOAPIC_RTE_MASKED);
	ioapic_eoi(f->io, 0x39);
	assert_int_equal(f->rec.nr, 1);
	assert_false(ioapic_redirection(f->io, 9) & IOAPIC_RTE_REMOTE_IRR);
	program(f->io, 9, 0, low);
	assert_int_equal(f->rec.nr, 2);
}

static void remote_irr_cleared_by_eoi_register_and_edge_switch(void **state)
{
	struct fixture *f = *state;
	uint32_t low = 0x41 | IOAPIC_RTE_LEVEL;

	program(f->io, 10, 0, low);
	program(f->io, 11, 0, low);
	ioapic_set_irq(f->io, 10, true);
	ioapic_set_irq(f->io, 11, true);
	assert_int_equal(f->rec.nr, 2);
	/* The directed EOI register (version 0x20) ends every pin with
	 * the vector; both lines are still high, so both fire again. */
	mmio_write(f->io, IOAPIC_REG_EOI, 0x41);
	assert_int_equal(f->rec.nr, 4);
	/* Older guests flip the pin to edge and back to clear it. */
	ioapic_set_irq(f->io, 10, false);
	program(f->io, 10, 0, 0x41 | IOAPIC_RTE_MASKED);
	assert_false(ioapic_redirection(f->io, 10) & IOAPIC_RTE_REMOTE_IRR);
	program(f->io, 10, 0, low);
	assert_int_equal(f->rec.nr, 4);
	assert_false(ioapic_redirection(f->io, 10) & IOAPIC_RTE_REMOTE_IRR);
}

static void routes_follow_unmasked_entries(void **state)
{
	struct fixture *f = *state;
	uint64_t address;
	uint32_t data;

	/* Masked programming tells KVM nothing. */
	program(f->io, 9, 2, 0x39 | IOAPIC_RTE_LEVEL | IOAPIC_RTE_MASKED);
	assert_int_equal(f->rec.route_updates, 0);
	program(f->io, 9, 2, 0x39 | IOAPIC_RTE_LEVEL);
	assert_int_equal(f->rec.route_updates, 1);
	assert_true(f->rec.routes[9].valid);
	ioapic_rte_to_msi(ioapic_redirection(f->io, 9), &address, &data);
	assert_int_equal(f->rec.routes[9].address, address);
	assert_int_equal(f->rec.routes[9].data, data);
	assert_true(data & MSI_DATA_TRIGGER_LEVEL);
	assert_int_equal(address, 0xfee02000);
	assert_false(f->rec.routes[4].valid);
	/* Rewriting the same entry costs no KVM_SET_GSI_ROUTING. */
	program(f->io, 9, 2, 0x39 | IOAPIC_RTE_LEVEL);
	assert_int_equal(f->rec.route_updates, 1);
	/* Masking keeps the route, so an EOI in flight still exits. */
	program(f->io, 9, 2, 0x39 | IOAPIC_RTE_LEVEL | IOAPIC_RTE_MASKED);
	assert_int_equal(f->rec.route_updates, 1);
	assert_true(f->rec.routes[9].valid);
	/* A new vector is a new route. */
	program(f->io, 9, 2, 0x3a | IOAPIC_RTE_LEVEL);
	assert_int_equal(f->rec.route_updates, 2);
	assert_int_equal(f->rec.routes[9].data & 0xff, 0x3a);
}

/* Snapshot state (docs/snapshot.md): what is saved loads back into a
 * fresh I/O APIC, routes included; bits no guest can set are refused. */
static void snapshot_state_round_trip_and_refusals(void **state)
{
	struct fixture *f = *state;
	struct ioapic_ops ops = { .routes_changed = record_routes,
				  .ctx = &f->rec };
	struct ioapic *copy = ioapic_create(&ops);
	struct ioapic_state s, bad;

	assert_non_null(copy);
	program(f->io, 4, 1, 0x31);
	program(f->io, 9, 2, 0x39 | IOAPIC_RTE_LEVEL);
	ioapic_save(f->io, &s);
	f->rec.route_updates = 0;
	assert_int_equal(ioapic_load(copy, &s), 0);
	assert_int_equal(f->rec.route_updates, 1); /* handed to KVM */
	assert_int_equal(ioapic_redirection(copy, 9),
			 ioapic_redirection(f->io, 9));
	assert_true(f->rec.routes[4].valid);

	bad = s;
	bad.rte[3] |= IOAPIC_RTE_DELIVERY_STATUS;
	assert_int_equal(ioapic_load(copy, &bad), -EINVAL);
	bad = s;
	bad.rte[4] |= IOAPIC_RTE_REMOTE_IRR; /* edge pin */
	assert_int_equal(ioapic_load(copy, &bad), -EINVAL);
	bad = s;
	bad.route_address[4] = 0xdead0000;
	assert_int_equal(ioapic_load(copy, &bad), -EINVAL);
	bad = s;
	bad.line = 1u << 24;
	assert_int_equal(ioapic_load(copy, &bad), -EINVAL);
	bad = s;
	bad.version = 2;
	assert_int_equal(ioapic_load(copy, &bad), -EINVAL);
	ioapic_destroy(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(reset_state_and_identity, setup,
						teardown),
		cmocka_unit_test_setup_teardown(redirection_entries_read_back,
						setup, teardown),
		cmocka_unit_test_setup_teardown(edge_pin_sends_its_message,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			masked_edge_is_delivered_on_unmask, setup, teardown),
		cmocka_unit_test_setup_teardown(level_pin_waits_for_eoi, setup,
						teardown),
		cmocka_unit_test_setup_teardown(level_pin_masked_while_asserted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			remote_irr_cleared_by_eoi_register_and_edge_switch,
			setup, teardown),
		cmocka_unit_test_setup_teardown(routes_follow_unmasked_entries,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			snapshot_state_round_trip_and_refusals, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
