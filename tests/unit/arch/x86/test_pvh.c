// SPDX-License-Identifier: LGPL-2.1-or-later
/* The PVH ELF loader against crafted good and malformed images. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <elf.h>
#include <errno.h>
#include <cmocka.h>

#include "arch/x86/pvh.h"
#include "base/log.h"

#define RAM_SIZE (4u << 20)
static uint8_t ram[RAM_SIZE];

struct image {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[3];
	struct {
		Elf64_Nhdr nh;
		char name[4];
		uint32_t entry;
	} note;
	uint8_t text[64];
} __attribute__((packed));

static struct guest_memory make_mem(void)
{
	struct guest_memory mem = { 0 };

	memset(ram, 0xcc, sizeof(ram));
	assert_int_equal(guest_memory_add_region(&mem, 0, RAM_SIZE, ram), 0);
	return mem;
}

/* A valid kernel: one text segment at 1 MiB with 64 bytes of bss. */
static void make_image(struct image *img)
{
	memset(img, 0, sizeof(*img));
	memcpy(img->eh.e_ident, ELFMAG, SELFMAG);
	img->eh.e_ident[EI_CLASS] = ELFCLASS64;
	img->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	img->eh.e_ident[EI_VERSION] = EV_CURRENT;
	img->eh.e_type = ET_EXEC;
	img->eh.e_machine = EM_X86_64;
	img->eh.e_phoff = offsetof(struct image, ph);
	img->eh.e_phentsize = sizeof(Elf64_Phdr);
	img->eh.e_phnum = 2;
	img->eh.e_ehsize = sizeof(Elf64_Ehdr);
	img->ph[0] = (Elf64_Phdr){
		.p_type = PT_LOAD,
		.p_offset = offsetof(struct image, text),
		.p_paddr = 0x100000,
		.p_filesz = sizeof(img->text),
		.p_memsz = sizeof(img->text) + 64,
	};
	img->ph[1] = (Elf64_Phdr){
		.p_type = PT_NOTE,
		.p_offset = offsetof(struct image, note),
		.p_filesz = sizeof(img->note),
	};
	img->note.nh = (Elf64_Nhdr){ .n_namesz = 4,
				     .n_descsz = 4,
				     .n_type = XEN_ELFNOTE_PHYS32_ENTRY };
	memcpy(img->note.name, "Xen", 4);
	img->note.entry = 0x100010;
	memset(img->text, 0x90, sizeof(img->text));
}

static int load(const struct image *img, size_t size, struct pvh_image *out)
{
	struct guest_memory mem = make_mem();

	return pvh_load_elf((const uint8_t *)img, size, "test.elf", &mem,
			    0x100000, out);
}

static void test_valid_image_loads_and_zeroes_bss(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	assert_int_equal(load(&img, sizeof(img), &out), 0);
	assert_int_equal(out.entry, 0x100010);
	assert_int_equal(out.load_start, 0x100000);
	assert_int_equal(out.load_end, 0x100000 + 128);
	assert_int_equal(ram[0x100000], 0x90);
	assert_int_equal(ram[0x100000 + 64], 0); /* bss */
	assert_int_equal(ram[0x100000 + 128], 0xcc); /* untouched */
}

static void test_truncated_header(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	assert_int_equal(load(&img, 20, &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "truncated ELF header"));
}

static void test_image_ending_mid_segment(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	assert_int_equal(load(&img, sizeof(img) - 1, &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "truncated"));
	/* Nothing was copied: validation precedes loading. */
	assert_int_equal(ram[0x100000], 0xcc);
}

static void test_not_x86_or_not_64bit(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	img.eh.e_machine = EM_AARCH64;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "arm64"));
	make_image(&img);
	img.eh.e_ident[EI_CLASS] = ELFCLASS32; /* but 64-bit headers */
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	make_image(&img);
	img.eh.e_ident[EI_CLASS] = ELFCLASSNONE;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "32- or 64-bit"));
}

static void test_segment_outside_ram(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	img.ph[0].p_paddr = RAM_SIZE - 64; /* bss runs past the end */
	img.note.entry = (uint32_t)img.ph[0].p_paddr;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "does not fit"));

	make_image(&img);
	img.ph[0].p_paddr = UINT64_MAX - 16; /* wraps */
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);

	make_image(&img);
	img.ph[0].p_paddr = 0x1000; /* below the load floor */
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
}

static void test_absurd_sizes(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	img.ph[0].p_memsz = UINT64_MAX;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	make_image(&img);
	img.ph[0].p_filesz = img.ph[0].p_memsz + 1;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	make_image(&img);
	img.ph[0].p_offset = UINT64_MAX - 8;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	make_image(&img);
	img.eh.e_phnum = 1000;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	make_image(&img);
	img.eh.e_phoff = sizeof(img) - 8;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
}

static void test_overlapping_segments(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	img.eh.e_phnum = 3;
	img.ph[2] = img.ph[0];
	img.ph[2].p_paddr += 32;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "overlap"));
}

static void test_missing_or_bad_note(void **state)
{
	struct image img;
	struct pvh_image out;

	make_image(&img);
	img.note.nh.n_type = 1;
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "PVH entry note"));

	make_image(&img);
	img.note.nh.n_descsz = 0xfffffff0; /* runs past the segment */
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);

	make_image(&img);
	img.note.entry = 0x200000; /* not inside the image */
	assert_int_equal(load(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "outside"));
}

/* The same kernel in an ELF32 container (i386 or x86-64 machine). */
struct image32 {
	Elf32_Ehdr eh;
	Elf32_Phdr ph[3];
	struct {
		Elf32_Nhdr nh;
		char name[4];
		uint32_t entry;
	} note;
	uint8_t text[64];
} __attribute__((packed));

static void make_image32(struct image32 *img)
{
	memset(img, 0, sizeof(*img));
	memcpy(img->eh.e_ident, ELFMAG, SELFMAG);
	img->eh.e_ident[EI_CLASS] = ELFCLASS32;
	img->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	img->eh.e_ident[EI_VERSION] = EV_CURRENT;
	img->eh.e_type = ET_EXEC;
	img->eh.e_machine = EM_386;
	img->eh.e_phoff = offsetof(struct image32, ph);
	img->eh.e_phentsize = sizeof(Elf32_Phdr);
	img->eh.e_phnum = 2;
	img->eh.e_ehsize = sizeof(Elf32_Ehdr);
	img->ph[0] = (Elf32_Phdr){
		.p_type = PT_LOAD,
		.p_offset = offsetof(struct image32, text),
		.p_paddr = 0x100000,
		.p_filesz = sizeof(img->text),
		.p_memsz = sizeof(img->text) + 64,
	};
	img->ph[1] = (Elf32_Phdr){
		.p_type = PT_NOTE,
		.p_offset = offsetof(struct image32, note),
		.p_filesz = sizeof(img->note),
	};
	img->note.nh = (Elf32_Nhdr){ .n_namesz = 4,
				     .n_descsz = 4,
				     .n_type = XEN_ELFNOTE_PHYS32_ENTRY };
	memcpy(img->note.name, "Xen", 4);
	img->note.entry = 0x100010;
	memset(img->text, 0x90, sizeof(img->text));
}

static int load32(const struct image32 *img, size_t size, struct pvh_image *out)
{
	struct guest_memory mem = make_mem();

	return pvh_load_elf((const uint8_t *)img, size, "test32.elf", &mem,
			    0x100000, out);
}

static void test_elf32_loads_like_elf64(void **state)
{
	struct image32 img;
	struct pvh_image out;

	make_image32(&img);
	assert_int_equal(load32(&img, sizeof(img), &out), 0);
	assert_int_equal(out.entry, 0x100010);
	assert_int_equal(out.load_start, 0x100000);
	assert_int_equal(out.load_end, 0x100000 + 128);
	assert_int_equal(ram[0x100000], 0x90);
	assert_int_equal(ram[0x100000 + 64], 0); /* bss */
	assert_int_equal(ram[0x100000 + 128], 0xcc);
	/* x86-64 code in an ELF32 container (objcopy -O elf32-x86-64). */
	make_image32(&img);
	img.eh.e_machine = EM_X86_64;
	assert_int_equal(load32(&img, sizeof(img), &out), 0);
}

static void test_elf32_gets_the_same_checks(void **state)
{
	struct image32 img;
	struct pvh_image out;

	make_image32(&img);
	assert_int_equal(load32(&img, 40, &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "truncated ELF header"));

	make_image32(&img);
	img.eh.e_machine = EM_ARM;
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "i386"));

	/* 64-bit program headers in a 32-bit file. */
	make_image32(&img);
	img.eh.e_phentsize = sizeof(Elf64_Phdr);
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "program header table"));

	make_image32(&img);
	assert_int_equal(load32(&img, sizeof(img) - 1, &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "truncated"));
	assert_int_equal(ram[0x100000], 0xcc);

	make_image32(&img);
	img.ph[0].p_paddr = 0x80000; /* below the load floor */
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);

	make_image32(&img);
	img.ph[0].p_filesz = img.ph[0].p_memsz + 1;
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);

	make_image32(&img);
	img.ph[2] = img.ph[0];
	img.eh.e_phnum = 3;
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "overlap"));

	make_image32(&img);
	img.note.nh.n_type = 1;
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "PVH entry note"));

	make_image32(&img);
	img.note.entry = 0x200000;
	assert_int_equal(load32(&img, sizeof(img), &out), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "outside"));
}

/* A segment in RAM above 4 GiB with the 8-byte form of the entry note. */
static void test_entry_above_4g(void **state)
{
	static uint8_t high_ram[0x1000];
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph[2];
		struct {
			Elf64_Nhdr nh;
			char name[4];
			uint64_t entry;
		} note;
		uint8_t text[64];
	} __attribute__((packed)) img;
	struct guest_memory mem = make_mem();
	struct image base;
	struct pvh_image out;

	assert_int_equal(guest_memory_add_region(&mem, 0x100000000ull,
						 sizeof(high_ram), high_ram),
			 0);
	make_image(&base);
	memset(&img, 0, sizeof(img));
	img.eh = base.eh;
	img.eh.e_phoff = offsetof(__typeof__(img), ph);
	img.ph[0] = base.ph[0];
	img.ph[0].p_offset = offsetof(__typeof__(img), text);
	img.ph[0].p_paddr = 0x100000000ull;
	img.ph[1] = base.ph[1];
	img.ph[1].p_offset = offsetof(__typeof__(img), note);
	img.ph[1].p_filesz = sizeof(img.note);
	img.note.nh = (Elf64_Nhdr){ .n_namesz = 4,
				    .n_descsz = 8,
				    .n_type = XEN_ELFNOTE_PHYS32_ENTRY };
	memcpy(img.note.name, "Xen", 4);
	img.note.entry = 0x100000010ull;
	memset(high_ram, 0xcc, sizeof(high_ram));

	assert_int_equal(pvh_load_elf((const uint8_t *)&img, sizeof(img),
				      "high.elf", &mem, 0x100000, &out),
			 -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "above 4 GiB"));
	assert_int_equal(high_ram[0x10], 0xcc); /* refused before copying */

	/* The same segments with the entry in the low one load. */
	img.ph[0].p_paddr = 0x100000;
	img.note.entry = 0x100010;
	assert_int_equal(pvh_load_elf((const uint8_t *)&img, sizeof(img),
				      "low.elf", &mem, 0x100000, &out),
			 0);
	assert_int_equal(out.entry, 0x100010);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_image_loads_and_zeroes_bss),
		cmocka_unit_test(test_truncated_header),
		cmocka_unit_test(test_image_ending_mid_segment),
		cmocka_unit_test(test_not_x86_or_not_64bit),
		cmocka_unit_test(test_segment_outside_ram),
		cmocka_unit_test(test_absurd_sizes),
		cmocka_unit_test(test_overlapping_segments),
		cmocka_unit_test(test_missing_or_bad_note),
		cmocka_unit_test(test_entry_above_4g),
		cmocka_unit_test(test_elf32_loads_like_elf64),
		cmocka_unit_test(test_elf32_gets_the_same_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
