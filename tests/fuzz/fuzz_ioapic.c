// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the userspace I/O APIC (src/arch/x86/ioapic.c):
 * its MMIO window as the guest reaches it (any offset in the page, any
 * width 1-8), interleaved with what devices and KVM do meanwhile (lines
 * raised and lowered, EOIs of any vector). No KVM.
 *
 * Invariants beyond "no sanitizer report":
 *  - a read sends no MSI and changes no route, and fills every byte;
 *  - raising or lowering a line sends at most one MSI, never while the
 *    pin is masked, and never for a level pin whose remote IRR was set;
 *  - an EOI sends at most one MSI per pin programmed with that vector;
 *  - every MSI carries the message of an unmasked redirection entry;
 *  - remote IRR is only ever set on level-triggered pins, delivery
 *    status never, and no bit beyond the implemented ones.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/ioapic.h"
#include "fuzz.h"

#define RTE_IMPLEMENTED (0xff00000000000000ull | 0x1ffffull)

struct sink {
	unsigned int msis;
	unsigned int route_updates;
	uint64_t address;
	uint32_t data;
};

static int sink_msi(void *ctx, uint64_t address, uint32_t data)
{
	struct sink *s = ctx;

	s->msis++;
	s->address = address;
	s->data = data;
	return 0;
}

static int sink_routes(void *ctx, const struct ioapic_route routes[IOAPIC_PINS])
{
	struct sink *s = ctx;

	s->route_updates++;
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++)
		check(!routes[pin].valid ||
		      (routes[pin].address & 0xfff00000u) == MSI_ADDR_BASE);
	return 0;
}

/* The MSI just sent came from some unmasked entry with that message. */
static void check_message_from_table(struct ioapic *io, const struct sink *s)
{
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		uint64_t rte = ioapic_redirection(io, pin), address;
		uint32_t data;

		if (rte & IOAPIC_RTE_MASKED)
			continue;
		ioapic_rte_to_msi(rte, &address, &data);
		if (address == s->address && data == s->data)
			return;
	}
	check(!"an MSI no unmasked entry sends");
}

static void check_table(struct ioapic *io)
{
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		uint64_t rte = ioapic_redirection(io, pin);

		check(!(rte & ~RTE_IMPLEMENTED));
		check(!(rte & IOAPIC_RTE_DELIVERY_STATUS));
		check(!(rte & IOAPIC_RTE_REMOTE_IRR) ||
		      (rte & IOAPIC_RTE_LEVEL));
	}
}

static unsigned int pins_with_vector(struct ioapic *io, uint8_t vector)
{
	unsigned int n = 0;

	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++)
		n += (ioapic_redirection(io, pin) & IOAPIC_RTE_VECTOR) ==
		     vector;
	return n;
}

/* An offset near one of the registers, or anywhere in the page. */
static uint64_t pick_offset(uint8_t sel, uint8_t raw)
{
	static const uint64_t regs[] = { IOAPIC_REG_SELECT, IOAPIC_REG_WINDOW,
					 IOAPIC_REG_EOI };

	if (sel & 0x80)
		return ((uint64_t)raw << 4 | (sel & 0xf)) % IOAPIC_WINDOW_SIZE;
	return regs[sel % 3] + (raw & 3);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sink s = { 0 };
	struct ioapic_ops ops = { .send_msi = sink_msi,
				  .routes_changed = sink_routes,
				  .ctx = &s };
	struct ioapic *io = ioapic_create(&ops);
	size_t i = 0;

	check(io);
	while (size - i >= 7) {
		const uint8_t *rec = data + i;
		uint8_t op = rec[0] % 5;
		uint32_t len = rec[1] % 8 + 1;
		unsigned int before = s.msis, routes = s.route_updates;
		uint32_t value;

		memcpy(&value, rec + 3, 4);
		i += 7;
		if (op == 0 || op == 1) {
			uint64_t off = pick_offset(rec[2], rec[3]);
			/* Exactly LEN bytes, so an overrun hits a redzone. */
			uint8_t *buf = malloc(len);

			check(buf);
			if (op == 0) {
				ioapic_bus_ops.read(io, off, buf, len);
				check(s.msis == before);
				check(s.route_updates == routes);
				if (len == 4) {
					uint32_t again;

					memcpy(&value, buf, 4);
					ioapic_bus_ops.read(io, off, buf, 4);
					memcpy(&again, buf, 4);
					check(value == again);
				}
			} else {
				for (uint32_t b = 0; b < len; b++)
					buf[b] = (uint8_t)(value >>
							   (8 * (b % 4)));
				ioapic_bus_ops.write(io, off, buf, len);
				if (off == IOAPIC_REG_EOI && len == 4)
					check(s.msis - before <=
					      pins_with_vector(io,
							       (uint8_t)value));
				else
					check(s.msis - before <= 1);
			}
			free(buf);
		} else if (op == 2 || op == 3) {
			/* A line; an out-of-range pin must be refused. */
			uint32_t pin = rec[1] % (IOAPIC_PINS + 2);
			uint64_t rte = ioapic_redirection(io, pin);
			int r = ioapic_set_irq(io, pin, op == 2);

			check((r == -EINVAL) == (pin >= IOAPIC_PINS));
			check(s.msis - before <= 1);
			if (pin < IOAPIC_PINS &&
			    ((rte & IOAPIC_RTE_MASKED) ||
			     ((rte & IOAPIC_RTE_LEVEL) &&
			      (rte & IOAPIC_RTE_REMOTE_IRR))))
				check(s.msis == before);
		} else {
			ioapic_eoi(io, rec[1]);
			check(s.msis - before <= pins_with_vector(io, rec[1]));
			check(s.route_updates == routes);
		}
		if (s.msis != before)
			check_message_from_table(io, &s);
		check_table(io);
	}
	ioapic_destroy(io);
	return 0;
}
