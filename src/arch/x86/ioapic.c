// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A userspace I/O APIC (ioapic.h): the redirection table, remote IRR for
 * level-triggered pins and delivery of each interrupt as an MSI.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/ioapic.h"
#include "base/log.h"

/* Bits of the low dword the guest cannot write. */
#define RTE_READ_ONLY (IOAPIC_RTE_DELIVERY_STATUS | IOAPIC_RTE_REMOTE_IRR)
/* Bits of an entry that exist at all (the rest reads as zero). */
#define RTE_IMPLEMENTED (0xff00000000000000ull | 0x1ffffull)

struct ioapic {
	pthread_mutex_t lock;
	struct ioapic_ops ops;
	uint32_t select; /* IOREGSEL */
	uint8_t id;
	uint64_t rte[IOAPIC_PINS];
	uint32_t line; /* pins whose input is asserted now */
	uint32_t edge_pending; /* rising edges not delivered yet (masked) */
	struct ioapic_route routes[IOAPIC_PINS];
};

void ioapic_rte_to_msi(uint64_t rte, uint64_t *address, uint32_t *data)
{
	uint32_t dest = (uint32_t)(rte >> IOAPIC_RTE_DEST_SHIFT) & 0xff;
	uint32_t mode = (uint32_t)(rte >> IOAPIC_RTE_DELIVERY_MODE_SHIFT) & 7;

	*address = MSI_ADDR_BASE | dest << MSI_ADDR_DEST_SHIFT |
		   (rte & IOAPIC_RTE_DEST_LOGICAL ? MSI_ADDR_DEST_LOGICAL : 0);
	*data = (uint32_t)(rte & IOAPIC_RTE_VECTOR) |
		mode << MSI_DATA_DELIVERY_SHIFT |
		(rte & IOAPIC_RTE_LEVEL
			 ? MSI_DATA_TRIGGER_LEVEL | MSI_DATA_LEVEL_ASSERT
			 : 0);
}

struct ioapic *ioapic_create(const struct ioapic_ops *ops)
{
	struct ioapic *io = calloc(1, sizeof(*io));

	if (!io)
		return NULL;
	pthread_mutex_init(&io->lock, NULL);
	io->ops = *ops;
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++)
		io->rte[pin] = IOAPIC_RTE_MASKED;
	return io;
}

void ioapic_destroy(struct ioapic *io)
{
	if (!io)
		return;
	pthread_mutex_destroy(&io->lock);
	free(io);
}

static int send_locked(struct ioapic *io, unsigned int pin)
{
	uint64_t address;
	uint32_t data;

	ioapic_rte_to_msi(io->rte[pin], &address, &data);
	return io->ops.send_msi ? io->ops.send_msi(io->ops.ctx, address, data)
				: 0;
}

/* Deliver what PIN has pending, if its entry lets it through now. */
static int service_locked(struct ioapic *io, unsigned int pin)
{
	uint64_t *rte = &io->rte[pin];
	uint32_t bit = 1u << pin;

	if (*rte & IOAPIC_RTE_MASKED)
		return 0;
	if (*rte & IOAPIC_RTE_LEVEL) {
		if (!(io->line & bit) || (*rte & IOAPIC_RTE_REMOTE_IRR))
			return 0;
		*rte |= IOAPIC_RTE_REMOTE_IRR; /* until the guest EOIs it */
		return send_locked(io, pin);
	}
	if (!(io->edge_pending & bit))
		return 0;
	io->edge_pending &= ~bit;
	return send_locked(io, pin);
}

int ioapic_set_irq(void *opaque, uint32_t pin, bool level)
{
	struct ioapic *io = opaque;
	uint32_t bit;
	int r;

	if (pin >= IOAPIC_PINS)
		return -EINVAL;
	bit = 1u << pin;
	pthread_mutex_lock(&io->lock);
	if (level && !(io->line & bit) && !(io->rte[pin] & IOAPIC_RTE_LEVEL))
		io->edge_pending |= bit;
	if (level)
		io->line |= bit;
	else
		io->line &= ~bit;
	r = service_locked(io, pin);
	pthread_mutex_unlock(&io->lock);
	return r;
}

void ioapic_eoi(struct ioapic *io, uint8_t vector)
{
	pthread_mutex_lock(&io->lock);
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		uint64_t *rte = &io->rte[pin];

		if ((*rte & IOAPIC_RTE_VECTOR) != vector ||
		    !(*rte & IOAPIC_RTE_LEVEL) ||
		    !(*rte & IOAPIC_RTE_REMOTE_IRR))
			continue;
		*rte &= ~IOAPIC_RTE_REMOTE_IRR;
		service_locked(io, pin); /* still asserted: once more */
	}
	pthread_mutex_unlock(&io->lock);
}

uint64_t ioapic_redirection(struct ioapic *io, unsigned int pin)
{
	uint64_t rte;

	if (pin >= IOAPIC_PINS)
		return 0;
	pthread_mutex_lock(&io->lock);
	rte = io->rte[pin];
	pthread_mutex_unlock(&io->lock);
	return rte;
}

/* Follow PIN's unmasked message in the route table; tell the owner. */
static void update_route_locked(struct ioapic *io, unsigned int pin)
{
	struct ioapic_route route = { .valid = true };

	if (io->rte[pin] & IOAPIC_RTE_MASKED)
		return; /* keep the last route: an EOI may still be due */
	ioapic_rte_to_msi(io->rte[pin], &route.address, &route.data);
	if (!memcmp(&route, &io->routes[pin], sizeof(route)))
		return;
	io->routes[pin] = route;
	if (io->ops.routes_changed)
		io->ops.routes_changed(io->ops.ctx, io->routes);
}

static uint32_t read_indirect_locked(struct ioapic *io)
{
	uint32_t index = io->select;

	switch (index) {
	case IOAPIC_INDEX_ID:
	case IOAPIC_INDEX_ARBITRATION:
		return (uint32_t)io->id << 24;
	case IOAPIC_INDEX_VERSION:
		return (IOAPIC_PINS - 1) << 16 | IOAPIC_VERSION;
	}
	if (index >= IOAPIC_INDEX_REDIR &&
	    index < IOAPIC_INDEX_REDIR + 2 * IOAPIC_PINS) {
		uint64_t rte = io->rte[(index - IOAPIC_INDEX_REDIR) / 2];

		return (uint32_t)(index & 1 ? rte >> 32 : rte);
	}
	return 0;
}

static void write_redirection_locked(struct ioapic *io, unsigned int pin,
				     bool high, uint32_t value)
{
	uint64_t *rte = &io->rte[pin];
	uint64_t v;

	if (high) {
		v = (*rte & 0xffffffffull) | (uint64_t)value << 32;
	} else {
		v = (*rte & ~0xffffffffull) | value;
		v = (v & ~RTE_READ_ONLY) | (*rte & RTE_READ_ONLY);
	}
	v &= RTE_IMPLEMENTED;
	/* Switching a pin to edge clears remote IRR: the old-style EOI
	 * (pre-0x20 I/O APICs) Linux still uses to unstick a pin. */
	if (!(v & IOAPIC_RTE_LEVEL))
		v &= ~IOAPIC_RTE_REMOTE_IRR;
	*rte = v;
	update_route_locked(io, pin);
	service_locked(io, pin); /* unmasked with something pending */
}

static void write_indirect_locked(struct ioapic *io, uint32_t value)
{
	uint32_t index = io->select;

	if (index == IOAPIC_INDEX_ID) {
		io->id = (uint8_t)((value >> 24) & 0x0f);
		return;
	}
	if (index >= IOAPIC_INDEX_REDIR &&
	    index < IOAPIC_INDEX_REDIR + 2 * IOAPIC_PINS)
		write_redirection_locked(io, (index - IOAPIC_INDEX_REDIR) / 2,
					 index & 1, value);
	/* Version and arbitration are read-only. */
}

static void ioapic_mmio_read(void *dev, uint64_t offset, uint8_t *data,
			     uint32_t len)
{
	struct ioapic *io = dev;
	uint32_t value = 0;

	memset(data, 0, len);
	if (len != 4)
		return; /* the registers are 32 bits wide, nothing else */
	pthread_mutex_lock(&io->lock);
	if (offset == IOAPIC_REG_SELECT)
		value = io->select;
	else if (offset == IOAPIC_REG_WINDOW)
		value = read_indirect_locked(io);
	pthread_mutex_unlock(&io->lock);
	memcpy(data, &value, 4);
}

static void ioapic_mmio_write(void *dev, uint64_t offset, const uint8_t *data,
			      uint32_t len)
{
	struct ioapic *io = dev;
	uint32_t value;

	if (len != 4)
		return;
	memcpy(&value, data, 4);
	if (offset == IOAPIC_REG_EOI) {
		ioapic_eoi(io, (uint8_t)value);
		return;
	}
	pthread_mutex_lock(&io->lock);
	if (offset == IOAPIC_REG_SELECT)
		io->select = value & 0xff;
	else if (offset == IOAPIC_REG_WINDOW)
		write_indirect_locked(io, value);
	pthread_mutex_unlock(&io->lock);
}

const struct bus_ops ioapic_bus_ops = {
	.read = ioapic_mmio_read,
	.write = ioapic_mmio_write,
};

void ioapic_save(struct ioapic *io, struct ioapic_state *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&io->lock);
	s->version = IOAPIC_STATE_VERSION;
	s->select = io->select;
	s->id = io->id;
	s->line = io->line;
	s->edge_pending = io->edge_pending;
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		s->rte[pin] = io->rte[pin];
		if (io->routes[pin].valid)
			s->route_valid |= 1u << pin;
		s->route_address[pin] = io->routes[pin].address;
		s->route_data[pin] = io->routes[pin].data;
	}
	pthread_mutex_unlock(&io->lock);
}

static int check_state(const struct ioapic_state *s)
{
	const uint32_t pins = (1u << IOAPIC_PINS) - 1;

	if (s->version != IOAPIC_STATE_VERSION)
		return hvm_set_error(-EINVAL,
				     "I/O APIC state version %u, expected %d",
				     s->version, IOAPIC_STATE_VERSION);
	if (s->select > 0xff || s->id > 0xf || s->line & ~pins ||
	    s->edge_pending & ~pins || s->route_valid & ~pins)
		return hvm_set_error(
			-EINVAL,
			"I/O APIC state: select 0x%x id %u lines 0x%x edges 0x%x routes 0x%x: expected a byte, a 4-bit ID and %d pins",
			s->select, s->id, s->line, s->edge_pending,
			s->route_valid, IOAPIC_PINS);
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		uint64_t rte = s->rte[pin];

		if (rte & ~RTE_IMPLEMENTED ||
		    rte & IOAPIC_RTE_DELIVERY_STATUS ||
		    (rte & IOAPIC_RTE_REMOTE_IRR && !(rte & IOAPIC_RTE_LEVEL)))
			return hvm_set_error(
				-EINVAL,
				"I/O APIC state: pin %u's entry 0x%016llx has bits no guest can set",
				pin, (unsigned long long)rte);
		/* A route is only ever the message of an entry: an address
		 * in the MSI window, as ioapic_rte_to_msi() makes. */
		if (s->route_valid & 1u << pin &&
		    (s->route_address[pin] & ~0xff004ull) != MSI_ADDR_BASE)
			return hvm_set_error(
				-EINVAL,
				"I/O APIC state: pin %u's route address 0x%llx is not an MSI address (0xfee00000 + destination)",
				pin, (unsigned long long)s->route_address[pin]);
	}
	return 0;
}

int ioapic_load(struct ioapic *io, const struct ioapic_state *s)
{
	int r = check_state(s);

	if (r < 0)
		return r;
	pthread_mutex_lock(&io->lock);
	io->select = s->select;
	io->id = (uint8_t)s->id;
	io->line = s->line;
	io->edge_pending = s->edge_pending;
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		io->rte[pin] = s->rte[pin];
		io->routes[pin] = (struct ioapic_route){
			.valid = s->route_valid & 1u << pin,
			.address = s->route_address[pin],
			.data = s->route_data[pin],
		};
	}
	r = io->ops.routes_changed
		    ? io->ops.routes_changed(io->ops.ctx, io->routes)
		    : 0;
	pthread_mutex_unlock(&io->lock);
	return r;
}
