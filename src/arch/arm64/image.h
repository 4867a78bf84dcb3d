/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux arm64 boot Image (Documentation/arch/arm64/booting.rst): a
 * 64-byte header with a magic, the offset from a 2 MiB aligned base the
 * kernel must sit at, the size it occupies including BSS, and flags. Every
 * field comes from a file the user handed us and is checked before use.
 */
#ifndef HVM_ARM64_IMAGE_H
#define HVM_ARM64_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_memory.h"

#define ARM64_IMAGE_HEADER_SIZE 64
#define ARM64_IMAGE_MAGIC 0x644d5241u /* "ARM\x64", little-endian */
#define ARM64_IMAGE_MAX_SIZE (512ULL << 20)
#define ARM64_IMAGE_LEGACY_TEXT_OFFSET 0x80000ULL /* image_size == 0 */

/* flags */
#define ARM64_IMAGE_FLAG_BE (1ULL << 0)
#define ARM64_IMAGE_PAGE_SIZE_SHIFT 1 /* 0 unknown, 1 4K, 2 16K, 3 64K */
#define ARM64_IMAGE_PAGE_SIZE_MASK (3ULL << ARM64_IMAGE_PAGE_SIZE_SHIFT)
#define ARM64_IMAGE_FLAG_ANYWHERE (1ULL << 3) /* base need not be low */

struct arm64_image {
	uint64_t text_offset; /* from the 2 MiB aligned load base */
	uint64_t image_size; /* bytes the kernel occupies, BSS included */
	uint64_t flags;
	size_t file_size; /* bytes to copy */
};

/*
 * Validate the header of the SIZE bytes at DATA (PATH names the file in
 * messages). Refuses other formats naming what they are, big-endian
 * kernels, and offsets or sizes that cannot be right. 0 or -EINVAL.
 */
int arm64_image_parse(const uint8_t *data, size_t size, const char *path,
		      struct arm64_image *out);

/*
 * Copy the image into RAM at the first 2 MiB boundary at or above
 * RAM_BASE, plus text_offset. Sets *ENTRY (the first instruction) and
 * *END (first byte after image_size). -E2BIG when RAM is too small.
 */
int arm64_image_load(const struct arm64_image *img, const uint8_t *data,
		     const struct guest_memory *mem, uint64_t ram_base,
		     uint64_t *entry, uint64_t *end);

#endif
