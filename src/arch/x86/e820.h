/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one guest memory map of the x86 machine. The bzImage zero page, the
 * PVH memmap and the memory-layout code all derive from it, so the guest
 * is never told two different stories about where its RAM is:
 *
 *   [0, X86_LOW_RAM_END)                     RAM
 *   [X86_LOW_RAM_END, X86_HIGH_MEM_START)    reserved (EBDA, ACPI, MP, BIOS)
 *   [X86_HIGH_MEM_START, low_end)            RAM, low_end = min(ram, hole)
 *   [X86_MMIO_HOLE_END, 4 GiB + rest)        RAM that did not fit below
 *                                            the MMIO hole
 *
 * RAM_SIZE counts all guest RAM, including the part the reserved window
 * hides (the 640 KiB-1 MiB window is backed by RAM too: the tables live
 * there).
 */
#ifndef HVM_ARCH_X86_E820_H
#define HVM_ARCH_X86_E820_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/platform.h"

enum x86_e820_type {
	X86_E820_RAM = 1,
	X86_E820_RESERVED = 2,
};

struct x86_e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

/* Smallest RAM a map can describe: low memory plus one page above 1 MiB. */
#define X86_E820_MIN_RAM (X86_HIGH_MEM_START + 0x1000)

/* The map never has more entries than this. */
#define X86_E820_MAX_ENTRIES 4

/*
 * Fill OUT (room for MAX entries) with the map of a guest with RAM_SIZE
 * bytes of RAM. Returns the number of entries, or -EINVAL when RAM_SIZE
 * is smaller than 1 MiB + 1 page (no room for a kernel) or MAX is too
 * small.
 */
int x86_e820_build(uint64_t ram_size, struct x86_e820_entry *out, size_t max);

/* Bytes of RAM below the MMIO hole, and above 4 GiB. */
uint64_t x86_ram_below_hole(uint64_t ram_size);
uint64_t x86_ram_above_4g(uint64_t ram_size);

#endif
