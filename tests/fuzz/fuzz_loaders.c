// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for what hintvm reads from files a user may have been
 * handed: the PVH ELF loader, the bzImage loader, the arm64 Image loader
 * (plain C, so fuzzed here too), the format detector that names what a
 * refused kernel is, and the config-file parser. Every input goes through
 * all of them (an ELF is also a malformed bzImage and a config file of one
 * long line, and vice versa).
 *
 * Guest RAM is two regions with PROT_NONE guard pages on both sides, so a
 * write past either end faults at once; inside RAM every byte starts as a
 * canary and the harness checks afterwards that the loader changed only
 * what it says it loaded:
 *  - pvh_load_elf: nothing at all when it refuses the image (it validates
 *    before copying), else only [load_start, load_end), above 1 MiB, with
 *    the file bytes of each segment and zeroes after them;
 *  - bzimage_load: when it accepts, only the kernel, the zero page, the
 *    command line and the initrd, at the places its result names;
 *  - arm64_image_load: only the file's bytes, at the entry it returns.
 * A refusal must return a negative errno and leave a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arm64/image.h"
#include "arch/x86/bzimage.h"
#include "arch/x86/platform.h"
#include "arch/x86/pvh.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/config.h"
#include "core/guest_memory.h"
#include "fuzz.h"
#include "image/kernel_format.h"

/* config.c checks --cpus against the arch's limit; x86.c is not linked. */
unsigned int arch_max_vcpus(void)
{
	return X86_MAX_VCPUS;
}

#define PAGE 4096ull
#define CANARY 0xa5
/* Low RAM: enough for a small kernel at 1 MiB; a second region at 4 GiB. */
#define LOW_RAM_SIZE 0x180000ull
#define HIGH_RAM_GPA 0x100000000ull
#define HIGH_RAM_SIZE 0x10000ull
/* A fixed fd number, so that a config file can name itself. */
#define CONFIG_FD 900
#define CONFIG_PATH "/proc/self/fd/900"

struct guarded {
	uint8_t *base; /* first usable byte, a guard page before it */
	size_t size;
};

static struct guarded low, high;
static uint8_t canary_page[PAGE];
static uint8_t initrd[2 * PAGE];

static int guarded_alloc(struct guarded *g, size_t size)
{
	uint8_t *m = mmap(NULL, size + 2 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return -1;
	if (mprotect(m, PAGE, PROT_NONE) ||
	    mprotect(m + PAGE + size, PAGE, PROT_NONE))
		return -1;
	g->base = m + PAGE;
	g->size = size;
	memset(g->base, CANARY, size);
	return 0;
}

static struct guest_memory make_mem(void)
{
	struct guest_memory mem = { 0 };

	if (guest_memory_add_region(&mem, 0, LOW_RAM_SIZE, low.base) ||
	    guest_memory_add_region(&mem, HIGH_RAM_GPA, HIGH_RAM_SIZE,
				    high.base))
		abort();
	return mem;
}

/*
 * Check that bytes outside the allowed GPA ranges still hold the canary,
 * and restore the canary everywhere for the next run.
 */
struct range {
	uint64_t start, end; /* guest-physical, end exclusive */
};

static bool allowed(const struct range *ok, size_t nr, uint64_t gpa)
{
	for (size_t i = 0; i < nr; i++)
		if (gpa >= ok[i].start && gpa < ok[i].end)
			return true;
	return false;
}

static void check_and_restore(const struct guarded *g, uint64_t gpa_base,
			      const struct range *ok, size_t nr)
{
	for (size_t off = 0; off < g->size; off += PAGE) {
		uint8_t *page = g->base + off;

		if (!memcmp(page, canary_page, PAGE))
			continue;
		for (size_t i = 0; i < PAGE; i++) {
			if (page[i] == CANARY)
				continue;
			if (!allowed(ok, nr, gpa_base + off + i)) {
				fprintf(stderr,
					"loader wrote guest 0x%llx outside what it loaded\n",
					(unsigned long long)(gpa_base + off +
							     i));
				abort();
			}
		}
		memset(page, CANARY, PAGE);
	}
}

static void check_memory(const struct range *ok, size_t nr)
{
	check_and_restore(&low, 0, ok, nr);
	check_and_restore(&high, HIGH_RAM_GPA, ok, nr);
}

static void expect_refusal_message(int r)
{
	check(r < 0);
	check(hvm_error_message()[0] != '\0');
}

static void fuzz_pvh(const uint8_t *data, size_t size)
{
	struct guest_memory mem = make_mem();
	struct pvh_image img;
	int r;

	hvm_clear_error();
	r = pvh_load_elf(data, size, "fuzz.elf", &mem, X86_HIGH_MEM_START,
			 &img);
	if (r) {
		expect_refusal_message(r);
		check_memory(NULL, 0); /* validation comes before any copy */
		return;
	}
	check(img.load_start >= X86_HIGH_MEM_START);
	check(img.load_start < img.load_end);
	check(img.entry >= img.load_start && img.entry < img.load_end);
	check(img.entry <= UINT32_MAX); /* PVH enters in 32-bit mode */
	check_memory(&(struct range){ img.load_start, img.load_end }, 1);
}

static void fuzz_bzimage(const uint8_t *data, size_t size)
{
	struct guest_memory mem = make_mem();
	static const char cmdline[] = "console=ttyS0 panic=-1";
	struct linux_boot_args args = {
		.cmdline = cmdline,
		.initrd = size & 1 ? initrd : NULL,
		.initrd_size = size & 1 ? sizeof(initrd) : 0,
		.initrd_name = "fuzz.initrd",
		.ram_size = LOW_RAM_SIZE,
		.acpi_rsdp_gpa = X86_ACPI_GPA,
	};
	struct linux_boot_entry entry;
	struct bzimage_info info;
	uint8_t *kernel;
	int r;

	hvm_clear_error();
	r = bzimage_load(&mem, "fuzz.bzImage", data, size, &args, &entry);
	if (r) {
		expect_refusal_message(r);
		/* A late refusal may leave the kernel copied: host-safe. */
		check_memory(&(struct range){ 0, LOW_RAM_SIZE }, 1);
		return;
	}
	check(bzimage_parse("fuzz.bzImage", data, size, &info) == 0);
	check(entry.boot_params_gpa == X86_ZERO_PAGE_GPA);
	check(entry.rip == info.load_addr + BZIMAGE_ENTRY64_OFFSET);
	check(entry.kernel_end == info.load_addr + info.init_size);
	check(info.load_addr >= X86_HIGH_MEM_START &&
	      entry.kernel_end <= LOW_RAM_SIZE);
	/* The protected-mode kernel is the file's bytes after the setup. */
	kernel = guest_ptr(&mem, info.load_addr, info.kernel_size);
	check(kernel && info.setup_size + info.kernel_size <= size);
	check(!memcmp(kernel, data + info.setup_size, info.kernel_size));
	if (args.initrd) {
		uint8_t *rd = guest_ptr(&mem, entry.initrd_gpa, sizeof(initrd));

		check(entry.initrd_gpa >= entry.kernel_end);
		check(rd && !memcmp(rd, initrd, sizeof(initrd)));
	} else {
		check(entry.initrd_gpa == 0);
	}
	check_memory(
		(struct range[]){
			{ info.load_addr, info.load_addr + info.kernel_size },
			{ X86_ZERO_PAGE_GPA, X86_ZERO_PAGE_GPA + PAGE },
			{ X86_CMDLINE_GPA, X86_CMDLINE_GPA + sizeof(cmdline) },
			{ entry.initrd_gpa,
			  entry.initrd_gpa + args.initrd_size },
		},
		4);
}

static void fuzz_arm64_image(const uint8_t *data, size_t size)
{
	struct guest_memory mem = make_mem();
	struct arm64_image img;
	uint64_t entry, end;
	int r;

	check(kernel_format_name(kernel_format_detect(data, size)) != NULL);
	hvm_clear_error();
	r = arm64_image_parse(data, size, "fuzz.Image", &img);
	if (r) {
		expect_refusal_message(r);
		return;
	}
	check(img.file_size == size && img.image_size >= size);
	r = arm64_image_load(&img, data, &mem, 0, &entry, &end);
	if (r) {
		check(r < 0);
		check_memory(NULL, 0);
		return;
	}
	check(entry == img.text_offset && end == entry + img.image_size);
	check(!memcmp(guest_ptr(&mem, entry, size), data, size));
	check_memory(&(struct range){ entry, entry + size }, 1);
}

static void fuzz_config(const uint8_t *data, size_t size)
{
	struct hvm_config cfg;
	int r;

	if (!fuzz_config_paths_are_tame(data, size, CONFIG_PATH))
		return;
	if (ftruncate(CONFIG_FD, 0) ||
	    pwrite(CONFIG_FD, data, size, 0) != (ssize_t)size)
		abort();
	config_init_defaults(&cfg);
	hvm_clear_error();
	r = hvm_config_load_file(&cfg, CONFIG_PATH);
	if (r)
		expect_refusal_message(r);
	config_free_fields(&cfg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	log_set_level(LOG_ERROR);
	memset(canary_page, CANARY, sizeof(canary_page));
	memset(initrd, 0x1d, sizeof(initrd));
	if (guarded_alloc(&low, LOW_RAM_SIZE) ||
	    guarded_alloc(&high, HIGH_RAM_SIZE))
		return -1;
	fd = memfd_create("fuzz-config", MFD_CLOEXEC);
	if (fd < 0 || dup2(fd, CONFIG_FD) != CONFIG_FD)
		return -1;
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_pvh(data, size);
	fuzz_bzimage(data, size);
	fuzz_arm64_image(data, size);
	fuzz_config(data, size);
	return 0;
}
