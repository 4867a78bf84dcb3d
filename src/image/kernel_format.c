// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "image/kernel_format.h"

#define BZIMAGE_HDRS_OFFSET 0x202 /* "HdrS" in the x86 setup header */
#define ARM64_IMAGE_MAGIC_OFFSET 56 /* "ARM\x64" in the arm64 Image header */
#define EFI_ZBOOT_TYPE_OFFSET 4 /* "zimg" after "MZ" and 2 bytes */
#define ELF_MACHINE_OFFSET 18
#define EM_X86_64 62
#define EM_AARCH64 183

static int has(const uint8_t *data, size_t size, size_t off, const char *magic,
	       size_t len)
{
	return size >= off + len && !memcmp(data + off, magic, len);
}

enum kernel_format kernel_format_detect(const uint8_t *data, size_t size)
{
	if (has(data, size, 0,
		"\x7f"
		"ELF",
		4)) {
		uint16_t machine;

		if (size < ELF_MACHINE_OFFSET + 2)
			return KERNEL_FORMAT_ELF_OTHER;
		machine = (uint16_t)(data[ELF_MACHINE_OFFSET] |
				     data[ELF_MACHINE_OFFSET + 1] << 8);
		if (machine == EM_X86_64)
			return KERNEL_FORMAT_ELF_X86_64;
		if (machine == EM_AARCH64)
			return KERNEL_FORMAT_ELF_AARCH64;
		return KERNEL_FORMAT_ELF_OTHER;
	}
	if (has(data, size, ARM64_IMAGE_MAGIC_OFFSET, "ARM\x64", 4))
		return KERNEL_FORMAT_ARM64_IMAGE;
	if (has(data, size, BZIMAGE_HDRS_OFFSET, "HdrS", 4))
		return KERNEL_FORMAT_X86_BZIMAGE;
	if (has(data, size, 0, "MZ", 2) &&
	    has(data, size, EFI_ZBOOT_TYPE_OFFSET, "zimg", 4))
		return KERNEL_FORMAT_EFI_ZBOOT;
	if (has(data, size, 0, "\x1f\x8b", 2))
		return KERNEL_FORMAT_GZIP;
	if (has(data, size, 0,
		"\xfd"
		"7zXZ",
		5))
		return KERNEL_FORMAT_XZ;
	if (has(data, size, 0, "\x28\xb5\x2f\xfd", 4))
		return KERNEL_FORMAT_ZSTD;
	return KERNEL_FORMAT_UNKNOWN;
}

const char *kernel_format_name(enum kernel_format format)
{
	switch (format) {
	case KERNEL_FORMAT_X86_BZIMAGE:
		return "an x86 bzImage";
	case KERNEL_FORMAT_ARM64_IMAGE:
		return "an arm64 Image";
	case KERNEL_FORMAT_ELF_X86_64:
		return "an x86-64 ELF file";
	case KERNEL_FORMAT_ELF_AARCH64:
		return "an arm64 ELF file (vmlinux)";
	case KERNEL_FORMAT_ELF_OTHER:
		return "an ELF file for another machine";
	case KERNEL_FORMAT_EFI_ZBOOT:
		return "a compressed arm64 EFI zboot image";
	case KERNEL_FORMAT_GZIP:
		return "gzip-compressed data";
	case KERNEL_FORMAT_XZ:
		return "xz-compressed data";
	case KERNEL_FORMAT_ZSTD:
		return "zstd-compressed data";
	case KERNEL_FORMAT_UNKNOWN:
		break;
	}
	return "an unrecognised file";
}
