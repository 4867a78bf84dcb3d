/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PVH boot: an ELF kernel (ELF64, or ELF32 as i386 or x86-64) carrying a XEN_ELFNOTE_PHYS32_ENTRY note is loaded
 * at its physical addresses and entered in 32-bit protected mode with EBX
 * pointing at a struct hvm_start_info (Xen's PVH ABI, which Linux, QEMU,
 * Firecracker and cloud-hypervisor share).
 */
#ifndef HVM_X86_PVH_H
#define HVM_X86_PVH_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_memory.h"

#define HVM_START_MAGIC 0x336ec578
#define XEN_ELFNOTE_PHYS32_ENTRY 18

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

/* Result of loading: where to jump and which guest memory the image took. */
struct pvh_image {
	uint64_t entry;
	uint64_t load_start;
	uint64_t load_end; /* exclusive */
};

/* True when IMG starts with the ELF magic (whether or not it is valid). */
int pvh_is_elf(const uint8_t *img, size_t size);

/*
 * Validate the ELF image IMG (named NAME in errors) and copy its PT_LOAD
 * segments into guest memory. Segments must lie in RAM at or above
 * MIN_LOAD_ADDR and must not overlap each other.
 */
int pvh_load_elf(const uint8_t *img, size_t size, const char *name,
		 const struct guest_memory *mem, uint64_t min_load_addr,
		 struct pvh_image *out);

#endif
