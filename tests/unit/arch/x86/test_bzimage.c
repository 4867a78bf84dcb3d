// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include <asm/bootparam.h>

#include "arch/x86/bzimage.h"
#include "arch/x86/e820.h"
#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/guest_memory.h"

#define MiB (1ULL << 20)
#define RAM_SIZE (64 * MiB)
#define SETUP_SECTS 4
#define SETUP_BYTES ((SETUP_SECTS + 1) * 512)
#define KERNEL_BYTES 0x2000
#define IMAGE_BYTES (SETUP_BYTES + KERNEL_BYTES)

struct fixture {
	struct guest_memory mem;
	uint8_t *ram;
	uint8_t image[IMAGE_BYTES];
	struct setup_header *hdr; /* inside image */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->ram = calloc(1, RAM_SIZE);
	assert_non_null(f->ram);
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, f->ram),
			 0);
	/* A well-formed 2.15 image, as Debian's 6.1 kernel has. */
	f->hdr = (struct setup_header *)(f->image + 0x1f1);
	f->hdr->setup_sects = SETUP_SECTS;
	f->hdr->boot_flag = 0xaa55;
	f->hdr->jump = 0x66eb; /* jmp +0x66: header ends at 0x268 */
	f->hdr->header = 0x53726448;
	f->hdr->version = 0x020f;
	f->hdr->syssize = KERNEL_BYTES / 16;
	f->hdr->loadflags = LOADED_HIGH;
	f->hdr->initrd_addr_max = 0x7fffffff;
	f->hdr->kernel_alignment = 0x200000;
	f->hdr->relocatable_kernel = 1;
	f->hdr->xloadflags = XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G;
	f->hdr->cmdline_size = 2047;
	f->hdr->pref_address = 0x1000000;
	f->hdr->init_size = 0x800000;
	for (size_t i = 0; i < KERNEL_BYTES; i++)
		f->image[SETUP_BYTES + i] = (uint8_t)(i * 7 + 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->ram);
	free(f);
	return 0;
}

static int load(struct fixture *f, const struct linux_boot_args *args,
		struct linux_boot_entry *entry)
{
	return bzimage_load(&f->mem, "vmlinuz-test", f->image, sizeof(f->image),
			    args, entry);
}

static struct linux_boot_args default_args(void)
{
	struct linux_boot_args a = {
		.cmdline = "console=ttyS0 quiet",
		.ram_size = RAM_SIZE,
		.acpi_rsdp_gpa = X86_ACPI_GPA,
	};
	return a;
}

static void assert_error_mentions(const char *a, const char *b)
{
	const char *msg = hvm_error_message();

	if (!strstr(msg, a) || (b && !strstr(msg, b)))
		fail_msg("error \"%s\" lacks \"%s\"/\"%s\"", msg, a,
			 b ? b : "");
}

static void test_parse_reads_the_header(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	assert_true(bzimage_probe(f->image, sizeof(f->image)));
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 0);
	assert_int_equal(info.version, 0x020f);
	assert_int_equal(info.setup_size, SETUP_BYTES);
	assert_int_equal(info.kernel_size, KERNEL_BYTES);
	assert_int_equal(info.load_addr, 0x1000000);
	assert_int_equal(info.header_end, 0x268);
	assert_true(info.relocatable);
}

static void test_setup_sects_zero_means_four(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	f->hdr->setup_sects = 0;
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 0);
	assert_int_equal(info.setup_size, 5 * 512);
}

static void test_rejects_non_bzimages(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;
	uint8_t junk[4096] = { 0x7f, 'E', 'L', 'F' };

	assert_false(bzimage_probe(junk, sizeof(junk)));
	assert_int_equal(bzimage_parse("elf", junk, sizeof(junk), &info),
			 -ENOEXEC);
	assert_error_mentions("elf", "boot_flag");
	assert_int_equal(bzimage_parse("tiny", junk, 100, &info), -ENOEXEC);
	assert_error_mentions("tiny", "too small");

	f->hdr->header = 0x12345678;
	assert_false(bzimage_probe(f->image, sizeof(f->image)));
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 -ENOEXEC);
	assert_error_mentions("0x12345678", "HdrS");
}

static void test_rejects_old_protocol(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	f->hdr->version = 0x020a;
	assert_int_equal(
		bzimage_parse("old", f->image, sizeof(f->image), &info),
		-ENOEXEC);
	assert_error_mentions("2.10", "2.12");
}

static void test_rejects_32bit_only_kernel(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	f->hdr->xloadflags = 0;
	assert_int_equal(
		bzimage_parse("k32", f->image, sizeof(f->image), &info),
		-ENOEXEC);
	assert_error_mentions("k32", "XLF_KERNEL_64");
}

static void test_rejects_truncated_images(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	/* One byte short of setup + syssize * 16. */
	assert_int_equal(
		bzimage_parse("cut", f->image, sizeof(f->image) - 1, &info),
		-ENOEXEC);
	assert_error_mentions("cut", "truncated");
	/* Cut inside the setup code. */
	assert_int_equal(bzimage_parse("cut", f->image, 0x300, &info),
			 -ENOEXEC);
	assert_error_mentions("truncated", "syssize");
	/* A setup header too short for protocol 2.12. */
	f->hdr->jump = 0x40eb;
	assert_int_equal(
		bzimage_parse("short", f->image, sizeof(f->image), &info),
		-ENOEXEC);
	assert_error_mentions("short", "setup header ends");
}

static void test_rejects_bad_alignment_and_init_size(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	f->hdr->kernel_alignment = 0x300000;
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 -ENOEXEC);
	assert_error_mentions("kernel_alignment", "0x300000");
	f->hdr->kernel_alignment = 0x200000;
	f->hdr->init_size = KERNEL_BYTES - 16;
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 -ENOEXEC);
	assert_error_mentions("init_size", NULL);
}

static void test_low_pref_address(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	/* Relocatable: moved up to 1 MiB, then aligned. */
	f->hdr->pref_address = 0;
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 0);
	assert_int_equal(info.load_addr, 0x200000);
	f->hdr->relocatable_kernel = 0;
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 -ENOEXEC);
	assert_error_mentions("pref_address", "not relocatable");
}

static void test_high_pref_address_cannot_wrap(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info info;

	/* Rounding this up to kernel_alignment would wrap around to 0. */
	f->hdr->pref_address = 0xffffffffffff0000ULL;
	assert_int_equal(bzimage_parse("k", f->image, sizeof(f->image), &info),
			 -ENOEXEC);
	assert_error_mentions("pref_address", "0xffffffffffff0000");
}

static void test_load_builds_the_zero_page(void **state)
{
	struct fixture *f = *state;
	struct linux_boot_args args = default_args();
	struct linux_boot_entry entry;
	struct boot_params *bp;

	assert_int_equal(load(f, &args, &entry), 0);
	assert_int_equal(entry.rip, 0x1000000 + 0x200);
	assert_int_equal(entry.boot_params_gpa, X86_ZERO_PAGE_GPA);
	assert_int_equal(entry.kernel_end, 0x1000000 + 0x800000);
	assert_memory_equal(f->ram + 0x1000000, f->image + SETUP_BYTES,
			    KERNEL_BYTES);

	bp = (struct boot_params *)(f->ram + X86_ZERO_PAGE_GPA);
	assert_int_equal(bp->hdr.boot_flag, 0xaa55);
	assert_int_equal(bp->hdr.header, 0x53726448);
	assert_int_equal(bp->hdr.version, 0x020f);
	assert_int_equal(bp->hdr.type_of_loader, 0xff);
	assert_int_equal(bp->hdr.loadflags & (LOADED_HIGH | CAN_USE_HEAP),
			 LOADED_HIGH | CAN_USE_HEAP);
	assert_int_equal(bp->hdr.loadflags & KEEP_SEGMENTS, 0);
	assert_int_equal(bp->hdr.cmd_line_ptr, X86_CMDLINE_GPA);
	assert_string_equal((char *)f->ram + X86_CMDLINE_GPA,
			    "console=ttyS0 quiet");
	assert_int_equal(bp->hdr.ramdisk_image, 0);
	assert_int_equal(bp->hdr.ramdisk_size, 0);
	assert_int_equal(bp->acpi_rsdp_addr, X86_ACPI_GPA);

	assert_int_equal(bp->e820_entries, 3);
	assert_int_equal(bp->e820_table[0].addr, 0);
	assert_int_equal(bp->e820_table[0].type, X86_E820_RAM);
	assert_int_equal(bp->e820_table[2].addr + bp->e820_table[2].size,
			 RAM_SIZE);
}

static void test_protocol_2_12_gets_no_rsdp_field(void **state)
{
	struct fixture *f = *state;
	struct linux_boot_args args = default_args();
	struct linux_boot_entry entry;
	struct boot_params *bp;

	f->hdr->version = 0x020c;
	assert_int_equal(load(f, &args, &entry), 0);
	bp = (struct boot_params *)(f->ram + X86_ZERO_PAGE_GPA);
	assert_int_equal(bp->acpi_rsdp_addr, 0);
}

static void test_initrd_goes_high_and_aligned(void **state)
{
	struct fixture *f = *state;
	struct linux_boot_args args = default_args();
	struct linux_boot_entry entry;
	static uint8_t initrd[12345];
	struct boot_params *bp;

	memset(initrd, 0x5a, sizeof(initrd));
	args.initrd = initrd;
	args.initrd_size = sizeof(initrd);
	assert_int_equal(load(f, &args, &entry), 0);
	bp = (struct boot_params *)(f->ram + X86_ZERO_PAGE_GPA);
	assert_int_equal(bp->hdr.ramdisk_image, entry.initrd_gpa);
	assert_int_equal(bp->hdr.ramdisk_size, sizeof(initrd));
	assert_int_equal(entry.initrd_gpa % 4096, 0);
	assert_true(entry.initrd_gpa >= entry.kernel_end);
	assert_true(entry.initrd_gpa + sizeof(initrd) <= RAM_SIZE);
	assert_true(entry.initrd_gpa + sizeof(initrd) > RAM_SIZE - 2 * 4096);
	assert_memory_equal(f->ram + entry.initrd_gpa, initrd, sizeof(initrd));

	/* initrd_addr_max is an inclusive address limit. */
	f->hdr->initrd_addr_max = 0x1ffffff;
	assert_int_equal(load(f, &args, &entry), 0);
	assert_true(entry.initrd_gpa + sizeof(initrd) <= 0x2000000);
	assert_true(entry.initrd_gpa >= 0x2000000 - 4 * 4096);
}

static void test_initrd_that_does_not_fit(void **state)
{
	struct fixture *f = *state;
	struct linux_boot_args args = default_args();
	struct linux_boot_entry entry;

	/* Only RAM_SIZE - kernel_end = 40 MiB is free above the kernel. */
	args.initrd = f->ram; /* content irrelevant: never copied */
	args.initrd_size = 41 * MiB;
	args.initrd_name = "big.cpio";
	assert_int_equal(load(f, &args, &entry), -E2BIG);
	assert_error_mentions("big.cpio", "more memory");
}

static void test_command_line_limits(void **state)
{
	struct fixture *f = *state;
	struct linux_boot_args args = default_args();
	struct linux_boot_entry entry;
	char line[64];

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	args.cmdline = line;
	f->hdr->cmdline_size = sizeof(line) - 1;
	assert_int_equal(load(f, &args, &entry), 0);
	f->hdr->cmdline_size = sizeof(line) - 2;
	assert_int_equal(load(f, &args, &entry), -E2BIG);
	assert_error_mentions("63 bytes", "accepts 62");
	args.cmdline = NULL;
	assert_int_equal(load(f, &args, &entry), 0);
	assert_string_equal((char *)f->ram + X86_CMDLINE_GPA, "");
}

static void test_guest_too_small_for_init_size(void **state)
{
	struct fixture *f = *state;
	struct linux_boot_args args = default_args();
	struct linux_boot_entry entry;

	f->hdr->init_size = 60 * MiB; /* 16 MiB + 60 MiB > 64 MiB */
	assert_int_equal(load(f, &args, &entry), -ENOMEM);
	assert_error_mentions("vmlinuz-test", "init_size");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_parse_reads_the_header),
		T(test_setup_sects_zero_means_four),
		T(test_rejects_non_bzimages),
		T(test_rejects_old_protocol),
		T(test_rejects_32bit_only_kernel),
		T(test_rejects_truncated_images),
		T(test_rejects_bad_alignment_and_init_size),
		T(test_low_pref_address),
		T(test_high_pref_address_cannot_wrap),
		T(test_load_builds_the_zero_page),
		T(test_protocol_2_12_gets_no_rsdp_field),
		T(test_initrd_goes_high_and_aligned),
		T(test_initrd_that_does_not_fit),
		T(test_command_line_limits),
		T(test_guest_too_small_for_init_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
