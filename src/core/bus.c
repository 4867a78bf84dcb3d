// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/bus.h"

/* Index of the first region whose end lies above ADDR. */
static size_t bus_search(const struct bus *bus, uint64_t addr)
{
	size_t lo = 0, hi = bus->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bus_region *r = &bus->regions[mid];

		if (r->base + (r->len - 1) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bus_register(struct bus *bus, uint64_t base, uint64_t len,
		 const struct bus_ops *ops, void *dev, const char *name)
{
	uint64_t last;
	size_t pos;

	if (len == 0 || __builtin_add_overflow(base, len - 1, &last) || !ops)
		return -EINVAL;

	pos = bus_search(bus, base);
	if (pos < bus->nr && bus->regions[pos].base <= last)
		return -EEXIST;

	if (bus->nr == bus->cap) {
		size_t cap = bus->cap ? bus->cap * 2 : 16;
		struct bus_region *r =
			realloc(bus->regions, cap * sizeof(*bus->regions));

		if (!r)
			return -ENOMEM;
		bus->regions = r;
		bus->cap = cap;
	}
	memmove(&bus->regions[pos + 1], &bus->regions[pos],
		(bus->nr - pos) * sizeof(*bus->regions));
	bus->regions[pos] = (struct bus_region){
		.base = base,
		.len = len,
		.ops = ops,
		.dev = dev,
		.name = name,
	};
	bus->nr++;
	return 0;
}

int bus_set_coalesced(struct bus *bus, uint64_t base)
{
	size_t pos = bus_search(bus, base);

	if (pos >= bus->nr || bus->regions[pos].base != base)
		return -ENOENT;
	bus->regions[pos].coalesced = true;
	return 0;
}

const struct bus_region *bus_lookup(const struct bus *bus, uint64_t addr,
				    uint32_t len)
{
	const struct bus_region *r;
	uint64_t last;
	size_t pos;

	if (len == 0 || __builtin_add_overflow(addr, (uint64_t)len - 1, &last))
		return NULL;
	pos = bus_search(bus, addr);
	if (pos >= bus->nr)
		return NULL;
	r = &bus->regions[pos];
	if (addr < r->base || last > r->base + (r->len - 1))
		return NULL;
	return r;
}

bool bus_access(const struct bus *bus, uint64_t addr, uint8_t *data,
		uint32_t len, bool is_write)
{
	const struct bus_region *r = bus_lookup(bus, addr, len);

	if (!r) {
		if (!is_write)
			memset(data, 0xff, len);
		return false;
	}
	if (is_write) {
		if (r->ops->write)
			r->ops->write(r->dev, addr - r->base, data, len);
	} else if (r->ops->read) {
		r->ops->read(r->dev, addr - r->base, data, len);
	} else {
		memset(data, 0xff, len);
	}
	return true;
}

void bus_destroy(struct bus *bus)
{
	free(bus->regions);
	*bus = (struct bus){ 0 };
}
