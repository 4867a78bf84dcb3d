// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "arch/arm64/image.h"
#include "arch/arm64/platform.h"
#include "base/log.h"
#include "image/kernel_format.h"

#define OFF_TEXT_OFFSET 8
#define OFF_IMAGE_SIZE 16
#define OFF_FLAGS 24
#define OFF_MAGIC 56
#define TEXT_OFFSET_ALIGN 4096

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static int refuse_format(const uint8_t *data, size_t size, const char *path)
{
	enum kernel_format f = kernel_format_detect(data, size);
	const char *hint = "";

	switch (f) {
	case KERNEL_FORMAT_GZIP:
	case KERNEL_FORMAT_XZ:
	case KERNEL_FORMAT_ZSTD:
	case KERNEL_FORMAT_EFI_ZBOOT:
		hint = "; decompress it to the plain Image first";
		break;
	case KERNEL_FORMAT_ELF_AARCH64:
		hint = "; boot arch/arm64/boot/Image instead";
		break;
	case KERNEL_FORMAT_X86_BZIMAGE:
	case KERNEL_FORMAT_ELF_X86_64:
		hint = " (an x86-64 kernel)";
		break;
	default:
		break;
	}
	return hvm_set_error(
		-EINVAL,
		"kernel %s is %s%s; an arm64 hintvm boots a Linux arm64 Image (magic \"ARM\\x64\" at byte 56)",
		path, kernel_format_name(f), hint);
}

int arm64_image_parse(const uint8_t *data, size_t size, const char *path,
		      struct arm64_image *out)
{
	struct arm64_image img;

	if (size < ARM64_IMAGE_HEADER_SIZE ||
	    le32(data + OFF_MAGIC) != ARM64_IMAGE_MAGIC)
		return refuse_format(data, size, path);
	if (size > ARM64_IMAGE_MAX_SIZE)
		return hvm_set_error(
			-EINVAL,
			"kernel %s is %zu bytes; an arm64 Image larger than %llu MiB is not plausible",
			path, size, ARM64_IMAGE_MAX_SIZE >> 20);

	img = (struct arm64_image){
		.text_offset = le64(data + OFF_TEXT_OFFSET),
		.image_size = le64(data + OFF_IMAGE_SIZE),
		.flags = le64(data + OFF_FLAGS),
		.file_size = size,
	};
	if (img.image_size == 0) {
		/* Kernels before 3.17: fixed offset, size unknown. */
		img.text_offset = ARM64_IMAGE_LEGACY_TEXT_OFFSET;
		img.image_size = size;
		img.flags = 0;
	}
	if (img.flags & ARM64_IMAGE_FLAG_BE)
		return hvm_set_error(
			-EINVAL,
			"kernel %s is a big-endian arm64 Image (flags 0x%llx); KVM guests here boot little-endian",
			path, (unsigned long long)img.flags);
	if (img.text_offset >= ARM64_KERNEL_ALIGN ||
	    img.text_offset % TEXT_OFFSET_ALIGN)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: corrupt arm64 Image header: text_offset 0x%llx must be a multiple of 4 KiB below 2 MiB",
			path, (unsigned long long)img.text_offset);
	if (img.image_size < size || img.image_size > ARM64_IMAGE_MAX_SIZE)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: corrupt arm64 Image header: image_size %llu bytes, expected at least the file's %zu bytes and at most %llu MiB",
			path, (unsigned long long)img.image_size, size,
			ARM64_IMAGE_MAX_SIZE >> 20);
	*out = img;
	return 0;
}

int arm64_image_load(const struct arm64_image *img, const uint8_t *data,
		     const struct guest_memory *mem, uint64_t ram_base,
		     uint64_t *entry, uint64_t *end)
{
	uint64_t base =
		(ram_base + ARM64_KERNEL_ALIGN - 1) & ~(ARM64_KERNEL_ALIGN - 1);
	uint64_t gpa = base + img->text_offset;
	uint8_t *dst;

	if (!guest_range_is_ram(mem, gpa, img->image_size))
		return hvm_set_error(
			-E2BIG,
			"the kernel needs %llu MiB of RAM from 0x%llx; give the VM more --mem",
			(unsigned long long)((img->image_size + (1 << 20) -
					      1) >>
					     20),
			(unsigned long long)gpa);
	dst = guest_ptr(mem, gpa, img->file_size);
	if (!dst)
		return -EFAULT;
	memcpy(dst, data, img->file_size);
	*entry = gpa;
	*end = gpa + img->image_size;
	return 0;
}
