// SPDX-License-Identifier: LGPL-2.1-or-later
/* The arm64 Image loader against crafted headers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arm64/image.h"
#include "arch/arm64/platform.h"
#include "base/log.h"
#include "core/guest_memory.h"

#define FILE_SIZE 8192
#define RAM_SIZE (8u << 20)

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A plausible modern Image: text_offset 0, 64 KiB with BSS, 4K pages. */
static uint8_t *make_image(void)
{
	uint8_t *img = calloc(1, FILE_SIZE);

	assert_non_null(img);
	put64(img + 8, 0);
	put64(img + 16, 64 << 10);
	put64(img + 24, 1 << 1 | 1 << 3);
	memcpy(img + 56, "ARM\x64", 4);
	img[FILE_SIZE - 1] = 0x5a; /* last byte, to check the copy */
	return img;
}

static void test_valid_image(void **state)
{
	uint8_t *img = make_image();
	struct arm64_image info;

	assert_int_equal(arm64_image_parse(img, FILE_SIZE, "Image", &info), 0);
	assert_int_equal(info.text_offset, 0);
	assert_int_equal(info.image_size, 64 << 10);
	assert_int_equal(info.file_size, FILE_SIZE);
	free(img);
}

static void test_load_at_2mib_boundary(void **state)
{
	uint8_t *img = make_image();
	uint8_t *ram = calloc(1, RAM_SIZE);
	struct guest_memory mem = { 0 };
	struct arm64_image info;
	uint64_t entry, end;

	assert_non_null(ram);
	assert_int_equal(guest_memory_add_region(&mem, ARM64_RAM_GPA + 0x1000,
						 RAM_SIZE - 0x1000, ram),
			 0);
	put64(img + 8, 0x80000);
	assert_int_equal(arm64_image_parse(img, FILE_SIZE, "Image", &info), 0);
	/* RAM starting off a 2 MiB boundary: the kernel goes to the next. */
	assert_int_equal(arm64_image_load(&info, img, &mem,
					  ARM64_RAM_GPA + 0x1000, &entry, &end),
			 0);
	assert_int_equal(entry, ARM64_RAM_GPA + 0x200000 + 0x80000);
	assert_int_equal(end, entry + (64 << 10));
	assert_memory_equal(guest_ptr(&mem, entry, 64), img, 64);
	assert_int_equal(*(uint8_t *)guest_ptr(&mem, entry + FILE_SIZE - 1, 1),
			 0x5a);
	free(img);
	free(ram);
}

static void test_ram_too_small(void **state)
{
	uint8_t *img = make_image();
	uint8_t *ram = calloc(1, 1 << 20);
	struct guest_memory mem = { 0 };
	struct arm64_image info;
	uint64_t entry, end;

	assert_non_null(ram);
	assert_int_equal(
		guest_memory_add_region(&mem, ARM64_RAM_GPA, 1 << 20, ram), 0);
	put64(img + 16, 2 << 20); /* more than the 1 MiB of RAM */
	assert_int_equal(arm64_image_parse(img, FILE_SIZE, "Image", &info), 0);
	assert_int_equal(
		arm64_image_load(&info, img, &mem, ARM64_RAM_GPA, &entry, &end),
		-E2BIG);
	assert_non_null(strstr(hvm_error_message(), "--mem"));
	free(img);
	free(ram);
}

static void expect_refusal(const uint8_t *img, size_t size, const char *what)
{
	struct arm64_image info;

	assert_int_equal(arm64_image_parse(img, size, "K", &info), -EINVAL);
	if (!strstr(hvm_error_message(), what))
		fail_msg("message '%s' does not mention '%s'",
			 hvm_error_message(), what);
}

static void test_bad_magic(void **state)
{
	uint8_t *img = make_image();

	img[56] = 'X';
	expect_refusal(img, FILE_SIZE, "an unrecognised file");
	expect_refusal(img, 10, "an unrecognised file"); /* short file */
	free(img);
}

static void test_foreign_kernels_named(void **state)
{
	uint8_t *img = calloc(1, FILE_SIZE);

	assert_non_null(img);
	memcpy(img + 0x202, "HdrS", 4);
	expect_refusal(img, FILE_SIZE, "an x86 bzImage");
	memset(img, 0, FILE_SIZE);
	memcpy(img,
	       "\x7f"
	       "ELF",
	       4);
	img[18] = 62; /* EM_X86_64 */
	expect_refusal(img, FILE_SIZE, "an x86-64 ELF");
	img[18] = 183; /* EM_AARCH64 */
	expect_refusal(img, FILE_SIZE, "arm64 ELF file (vmlinux)");
	memset(img, 0, FILE_SIZE);
	img[0] = 0x1f;
	img[1] = 0x8b;
	expect_refusal(img, FILE_SIZE, "gzip-compressed");
	memset(img, 0, FILE_SIZE);
	memcpy(img, "MZ\0\0zimg", 8);
	expect_refusal(img, FILE_SIZE, "EFI zboot");
	free(img);
}

static void test_corrupt_header_fields(void **state)
{
	uint8_t *img = make_image();

	put64(img + 24, 1); /* big-endian */
	expect_refusal(img, FILE_SIZE, "big-endian");
	put64(img + 24, 0);
	put64(img + 8, 0x200000); /* text_offset not below 2 MiB */
	expect_refusal(img, FILE_SIZE, "text_offset 0x200000");
	put64(img + 8, 0x80001); /* not 4 KiB aligned */
	expect_refusal(img, FILE_SIZE, "text_offset 0x80001");
	put64(img + 8, 0);
	put64(img + 16, FILE_SIZE - 1); /* smaller than the file */
	expect_refusal(img, FILE_SIZE, "image_size 8191");
	put64(img + 16, 1ULL << 40); /* absurd */
	expect_refusal(img, FILE_SIZE, "image_size");
	free(img);
}

static void test_legacy_image_size_zero(void **state)
{
	uint8_t *img = make_image();
	struct arm64_image info;

	put64(img + 8, 0x1234); /* ignored: pre-3.17 kernels */
	put64(img + 16, 0);
	assert_int_equal(arm64_image_parse(img, FILE_SIZE, "Image", &info), 0);
	assert_int_equal(info.text_offset, ARM64_IMAGE_LEGACY_TEXT_OFFSET);
	assert_int_equal(info.image_size, FILE_SIZE);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_image),
		cmocka_unit_test(test_load_at_2mib_boundary),
		cmocka_unit_test(test_ram_too_small),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_foreign_kernels_named),
		cmocka_unit_test(test_corrupt_header_fields),
		cmocka_unit_test(test_legacy_image_size_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
