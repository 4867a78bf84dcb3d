/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files a boot starts from, as every architecture needs them: the
 * kernel (the --kernel file or the built-in test kernel) and the initrd,
 * placed where the architecture's boot protocol allows.
 */
#ifndef HVM_IMAGE_BOOT_FILES_H
#define HVM_IMAGE_BOOT_FILES_H

#include <stddef.h>
#include <stdint.h>

struct vm;

#define INITRD_MAX_SIZE (1u << 30)

struct kernel_file {
	const uint8_t *data;
	size_t size;
	const char *name; /* the path, or "(built-in test kernel)" */
	uint8_t *owned; /* what kernel_file_release() frees */
	size_t mapped; /* or unmaps: DATA's length when mapped */
};

/* Read --kernel (at most MAX bytes) or take the built-in test kernel. */
int kernel_file_open(const struct vm *vm, size_t max, struct kernel_file *k);
void kernel_file_release(struct kernel_file *k);

/* Read --initrd into a malloc'ed buffer; *DATA stays NULL without one. */
int initrd_read(const struct vm *vm, uint8_t **data, size_t *size);

/*
 * Copy --initrd page-aligned as high as possible into guest RAM in
 * [FLOOR, CEILING) (FLOOR: where the kernel ends; CEILING: the highest
 * address the boot protocol or the next blob allows). *GPA and *SIZE stay
 * 0 without an initrd.
 */
int initrd_load_high(struct vm *vm, uint64_t floor, uint64_t ceiling,
		     uint64_t *gpa, uint64_t *size);

#endif
