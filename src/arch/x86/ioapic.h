/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The I/O APIC in userspace, for the split irqchip (LAPICs in KVM, this
 * here): a 24-pin redirection table behind the IOREGSEL/IOWIN window at
 * X86_IOAPIC_GPA. A pin that fires becomes an MSI built from its
 * redirection entry, sent through ops->send_msi (KVM_SIGNAL_MSI).
 *
 * Level-triggered pins follow the hardware: delivery sets remote IRR and
 * the pin stays quiet until the guest EOIs the vector (KVM reports that as
 * KVM_EXIT_IOAPIC_EOI, or the guest writes the EOI register); then, if the
 * device still holds the line high, the interrupt is delivered again.
 * Edge-triggered pins deliver on a rising edge; an edge that arrives while
 * the pin is masked stays latched and is delivered on unmask.
 *
 * KVM only reports the EOI of a vector it knows to be level-triggered
 * from an I/O APIC pin: it learns that from the GSI routing table (one MSI
 * route per pin, GSI = pin). ops->routes_changed is called whenever the
 * message a pin would send changes, so the owner can mirror the table
 * with KVM_SET_GSI_ROUTING (an irqfd on a pin's GSI goes the same way).
 * Masking a pin keeps its last route, as QEMU does: an EOI for an
 * interrupt already in service must still reach us.
 *
 * Polarity is recorded but not applied: devices drive "asserted" levels.
 * Thread-safe: every entry point takes the I/O APIC's lock; the ops are
 * called with it held and must not call back into the I/O APIC.
 */
#ifndef HVM_ARCH_X86_IOAPIC_H
#define HVM_ARCH_X86_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"

#define IOAPIC_PINS 24
#define IOAPIC_WINDOW_SIZE 0x1000
#define IOAPIC_VERSION 0x20 /* 0x20 and later have the EOI register */

/* The window's registers (offsets from the base). */
#define IOAPIC_REG_SELECT 0x00
#define IOAPIC_REG_WINDOW 0x10
#define IOAPIC_REG_EOI 0x40

/* Indirect registers, selected through IOAPIC_REG_SELECT. */
#define IOAPIC_INDEX_ID 0x00
#define IOAPIC_INDEX_VERSION 0x01
#define IOAPIC_INDEX_ARBITRATION 0x02
#define IOAPIC_INDEX_REDIR 0x10 /* low, high dword per pin */

/* Redirection entry bits. */
#define IOAPIC_RTE_VECTOR 0xffull
#define IOAPIC_RTE_DELIVERY_MODE_SHIFT 8
#define IOAPIC_RTE_DEST_LOGICAL (1ull << 11)
#define IOAPIC_RTE_DELIVERY_STATUS (1ull << 12)
#define IOAPIC_RTE_POLARITY_LOW (1ull << 13)
#define IOAPIC_RTE_REMOTE_IRR (1ull << 14)
#define IOAPIC_RTE_LEVEL (1ull << 15)
#define IOAPIC_RTE_MASKED (1ull << 16)
#define IOAPIC_RTE_DEST_SHIFT 56

/* MSI address/data bits an I/O APIC message uses. */
#define MSI_ADDR_BASE 0xfee00000u
#define MSI_ADDR_DEST_SHIFT 12
#define MSI_ADDR_DEST_LOGICAL (1u << 2)
#define MSI_DATA_DELIVERY_SHIFT 8
#define MSI_DATA_LEVEL_ASSERT (1u << 14)
#define MSI_DATA_TRIGGER_LEVEL (1u << 15)

struct ioapic_route {
	bool valid; /* the pin was unmasked at least once */
	uint64_t address;
	uint32_t data;
};

struct ioapic_ops {
	int (*send_msi)(void *ctx, uint64_t address, uint32_t data);
	/* ROUTES[pin] for every pin; called when any of them changed. */
	int (*routes_changed)(void *ctx,
			      const struct ioapic_route routes[IOAPIC_PINS]);
	void *ctx;
};

struct ioapic;

/* Every pin starts masked and edge-triggered, as after reset. */
struct ioapic *ioapic_create(const struct ioapic_ops *ops);
void ioapic_destroy(struct ioapic *io);

/*
 * Drive PIN to LEVEL (true: asserted). Returns 0, -EINVAL for a pin
 * beyond the table, or send_msi's error. Shaped as struct irq_line's
 * set_level (core/irq.h), with the I/O APIC as context.
 */
int ioapic_set_irq(void *io, uint32_t pin, bool level);

/*
 * The LAPIC EOI'd VECTOR: clear remote IRR on every level-triggered pin
 * that uses it and deliver again any whose line is still asserted.
 */
void ioapic_eoi(struct ioapic *io, uint8_t vector);

/* Inspection for tests and the fuzzer. */
uint64_t ioapic_redirection(struct ioapic *io, unsigned int pin);

/* MMIO window ops; DEV is the struct ioapic. */
extern const struct bus_ops ioapic_bus_ops;

/* The MSI that redirection entry RTE sends (pure, for tests). */
void ioapic_rte_to_msi(uint64_t rte, uint64_t *address, uint32_t *data);

/*
 * Snapshot (docs/snapshot.md, section "ioapic"): IOREGSEL, the ID, every
 * redirection entry, the input lines, pending edges and the last route of
 * each pin (a masked pin keeps its route for a due EOI).
 */
#define IOAPIC_STATE_VERSION 1
struct ioapic_state {
	uint32_t version;
	uint32_t select;
	uint32_t id;
	uint32_t line;
	uint32_t edge_pending;
	uint32_t route_valid; /* a bit per pin */
	uint64_t rte[IOAPIC_PINS];
	uint64_t route_address[IOAPIC_PINS];
	uint32_t route_data[IOAPIC_PINS];
};
void ioapic_save(struct ioapic *io, struct ioapic_state *s);
/*
 * Checks every field against what the guest could have written (-EINVAL,
 * reason recorded), then loads it and hands the routes to the owner.
 */
int ioapic_load(struct ioapic *io, const struct ioapic_state *s);

#endif
