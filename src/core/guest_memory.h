/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guest RAM and the only sanctioned ways to reach it from the host. Every
 * guest-physical address that comes from a guest, an image file or a user
 * goes through guest_ptr() (or guest_read/guest_write), which refuses any
 * range that does not lie entirely inside one RAM region, including ranges
 * whose end wraps around 2^64.
 */
#ifndef HVM_CORE_GUEST_MEMORY_H
#define HVM_CORE_GUEST_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_MAX_REGIONS 4

struct guest_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;
};

struct guest_memory {
	struct guest_region regions[GUEST_MAX_REGIONS];
	unsigned int nr_regions;
	uint64_t ram_size; /* sum of region sizes */
	void *mapping; /* one host mapping backs all regions */
	size_t mapping_size;
	bool hugetlb;
};

/*
 * Add a region backed by HVA (used by the arch layout code and by tests
 * with a plain buffer). Regions must not overlap. Returns 0 or -errno.
 */
int guest_memory_add_region(struct guest_memory *mem, uint64_t gpa,
			    uint64_t size, void *hva);

/*
 * Map SIZE bytes of anonymous memory for the guest: MAP_PRIVATE with
 * MADV_HUGEPAGE, or hugetlbfs pages when HUGETLB. Regions are then carved
 * from it with guest_memory_add_region(). Returns 0 or -errno.
 */
int guest_memory_map(struct guest_memory *mem, uint64_t size, bool hugetlb);
/*
 * Guest RAM of SIZE bytes from the file FD (a snapshot's memory file),
 * MAP_PRIVATE: pages are read on first touch, writes stay private.
 */
int guest_memory_map_file(struct guest_memory *mem, uint64_t size, int fd);
void guest_memory_unmap(struct guest_memory *mem);

/* Host pointer for [GPA, GPA + LEN) when it is all RAM, else NULL. */
void *guest_ptr(const struct guest_memory *mem, uint64_t gpa, uint64_t len);

/* Copy to or from guest RAM; -EFAULT when the range is not all RAM. */
int guest_read(const struct guest_memory *mem, uint64_t gpa, void *dst,
	       size_t len);
int guest_write(const struct guest_memory *mem, uint64_t gpa, const void *src,
		size_t len);

/* True when [GPA, GPA + LEN) is all RAM (LEN 0 counts when GPA is RAM). */
bool guest_range_is_ram(const struct guest_memory *mem, uint64_t gpa,
			uint64_t len);

#endif
