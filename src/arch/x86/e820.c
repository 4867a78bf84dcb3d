// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "arch/x86/e820.h"
#include "arch/x86/platform.h"

uint64_t x86_ram_below_hole(uint64_t ram_size)
{
	return ram_size < X86_MMIO_HOLE_START ? ram_size : X86_MMIO_HOLE_START;
}

uint64_t x86_ram_above_4g(uint64_t ram_size)
{
	return ram_size - x86_ram_below_hole(ram_size);
}

static void put(struct x86_e820_entry *e, uint64_t addr, uint64_t end,
		uint32_t type)
{
	e->addr = addr;
	e->size = end - addr;
	e->type = type;
}

int x86_e820_build(uint64_t ram_size, struct x86_e820_entry *out, size_t max)
{
	uint64_t low_end = x86_ram_below_hole(ram_size);
	uint64_t high = x86_ram_above_4g(ram_size);
	size_t n = 0;

	if (ram_size < X86_E820_MIN_RAM || max < X86_E820_MAX_ENTRIES)
		return -EINVAL;

	put(&out[n++], 0, X86_LOW_RAM_END, X86_E820_RAM);
	put(&out[n++], X86_LOW_RAM_END, X86_HIGH_MEM_START, X86_E820_RESERVED);
	put(&out[n++], X86_HIGH_MEM_START, low_end, X86_E820_RAM);
	if (high)
		put(&out[n++], X86_MMIO_HOLE_END, X86_MMIO_HOLE_END + high,
		    X86_E820_RAM);
	return (int)n;
}
