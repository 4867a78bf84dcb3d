/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PIO and MMIO buses: a sorted table of non-overlapping address ranges,
 * each owned by one device. Devices register before the vCPUs start; after
 * that the table is read-only, so lookups need no lock. A device that must
 * change what it decodes at run time (a PCI host with BARs) registers one
 * fixed window and decodes inside it.
 */
#ifndef HVM_CORE_BUS_H
#define HVM_CORE_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bus_ops {
	/*
	 * OFFSET is relative to the region base; LEN is 1, 2, 4 or 8 (any
	 * length up to 8 for MMIO); DATA is in guest (little-endian) byte
	 * order. A read must fill all LEN bytes. Called from vCPU threads,
	 * concurrently: a device with state locks it.
	 */
	void (*read)(void *dev, uint64_t offset, uint8_t *data, uint32_t len);
	void (*write)(void *dev, uint64_t offset, const uint8_t *data,
		      uint32_t len);
};

struct bus_region {
	uint64_t base;
	uint64_t len;
	const struct bus_ops *ops;
	void *dev;
	const char *name;
	bool coalesced; /* writes may be batched by KVM; reads still exit */
};

struct bus {
	struct bus_region *regions; /* sorted by base */
	size_t nr;
	size_t cap;
};

/*
 * Claim [BASE, BASE + LEN). Returns 0, -EINVAL for an empty or wrapping
 * range, -EEXIST when it overlaps a region already registered, -ENOMEM.
 */
int bus_register(struct bus *bus, uint64_t base, uint64_t len,
		 const struct bus_ops *ops, void *dev, const char *name);

/* Mark the registered region at BASE as coalescible (see struct bus_region). */
int bus_set_coalesced(struct bus *bus, uint64_t base);

/* The region containing all of [ADDR, ADDR + LEN), or NULL. */
const struct bus_region *bus_lookup(const struct bus *bus, uint64_t addr,
				    uint32_t len);

/*
 * Forward one guest access. Returns false when no device claims it; a read
 * nobody claims returns all-ones, as on a real bus with nothing attached.
 */
bool bus_access(const struct bus *bus, uint64_t addr, uint8_t *data,
		uint32_t len, bool is_write);

void bus_destroy(struct bus *bus);

#endif
