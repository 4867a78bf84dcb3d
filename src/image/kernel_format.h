/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What kind of file a --kernel is, judged from its first bytes, so that a
 * loader refusing it can say what it got ("an arm64 Image", "an x86
 * bzImage", ...) instead of only what it expected. Pure: no I/O.
 */
#ifndef HVM_IMAGE_KERNEL_FORMAT_H
#define HVM_IMAGE_KERNEL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

enum kernel_format {
	KERNEL_FORMAT_UNKNOWN,
	KERNEL_FORMAT_X86_BZIMAGE,
	KERNEL_FORMAT_ARM64_IMAGE,
	KERNEL_FORMAT_ELF_X86_64,
	KERNEL_FORMAT_ELF_AARCH64,
	KERNEL_FORMAT_ELF_OTHER,
	KERNEL_FORMAT_EFI_ZBOOT, /* compressed arm64 EFI zboot (vmlinuz.efi) */
	KERNEL_FORMAT_GZIP,
	KERNEL_FORMAT_XZ,
	KERNEL_FORMAT_ZSTD,
};

enum kernel_format kernel_format_detect(const uint8_t *data, size_t size);

/* "an arm64 Image", "gzip-compressed data", "an unrecognised file", ... */
const char *kernel_format_name(enum kernel_format format);

#endif
