/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PVH boot ABI (Xen's hvm_start_info, version 0 and 1 fields). */
#ifndef TK_PVH_H
#define TK_PVH_H

#include <stdint.h>

#define HVM_START_MAGIC 0x336ec578

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr; /* version >= 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
};

#endif
