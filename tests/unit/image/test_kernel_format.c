// SPDX-License-Identifier: LGPL-2.1-or-later
/* What a refused --kernel is called: both loaders name it from this. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "image/kernel_format.h"

static enum kernel_format detect(const void *head, size_t len, size_t off,
				 size_t size)
{
	static uint8_t buf[1024];

	memset(buf, 0, sizeof(buf));
	memcpy(buf + off, head, len);
	return kernel_format_detect(buf, size);
}

static void test_formats(void **state)
{
	assert_int_equal(detect("ARM\x64", 4, 56, 64),
			 KERNEL_FORMAT_ARM64_IMAGE);
	assert_int_equal(detect("HdrS", 4, 0x202, 1024),
			 KERNEL_FORMAT_X86_BZIMAGE);
	assert_int_equal(detect("\x7f"
				"ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e",
				19, 0, 64),
			 KERNEL_FORMAT_ELF_X86_64);
	assert_int_equal(detect("\x7f"
				"ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\xb7",
				19, 0, 64),
			 KERNEL_FORMAT_ELF_AARCH64);
	assert_int_equal(detect("\x7f"
				"ELF",
				4, 0, 64),
			 KERNEL_FORMAT_ELF_OTHER);
	assert_int_equal(detect("MZ\0\0zimg", 8, 0, 64),
			 KERNEL_FORMAT_EFI_ZBOOT);
	assert_int_equal(detect("\x1f\x8b", 2, 0, 64), KERNEL_FORMAT_GZIP);
	assert_int_equal(detect("\xfd"
				"7zXZ",
				5, 0, 64),
			 KERNEL_FORMAT_XZ);
	assert_int_equal(detect("\x28\xb5\x2f\xfd", 4, 0, 64),
			 KERNEL_FORMAT_ZSTD);
	assert_int_equal(detect("hello", 5, 0, 64), KERNEL_FORMAT_UNKNOWN);
}

static void test_short_files(void **state)
{
	/* A magic beyond the end of the file does not count. */
	assert_int_equal(detect("ARM\x64", 4, 56, 59), KERNEL_FORMAT_UNKNOWN);
	assert_int_equal(detect("HdrS", 4, 0x202, 0x205),
			 KERNEL_FORMAT_UNKNOWN);
	assert_int_equal(kernel_format_detect((const uint8_t *)"", 0),
			 KERNEL_FORMAT_UNKNOWN);
}

static void test_names(void **state)
{
	assert_string_equal(kernel_format_name(KERNEL_FORMAT_ARM64_IMAGE),
			    "an arm64 Image");
	assert_string_equal(kernel_format_name(KERNEL_FORMAT_X86_BZIMAGE),
			    "an x86 bzImage");
	assert_string_equal(kernel_format_name(KERNEL_FORMAT_UNKNOWN),
			    "an unrecognised file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_short_files),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
