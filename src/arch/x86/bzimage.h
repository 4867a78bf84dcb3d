/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Linux bzImage loading through the 64-bit boot protocol
 * (Documentation/arch/x86/boot.rst). Pure functions over a file buffer and
 * guest memory: no KVM, so every check is unit-testable.
 *
 * hintvm needs boot protocol 2.12 or later: 2.12 is the first version
 * with xloadflags, whose XLF_KERNEL_64 bit promises the 64-bit entry point
 * at load address + 0x200 that hintvm jumps to (it never runs the
 * real-mode setup code). pref_address and init_size (2.10) come with it.
 * acpi_rsdp_addr is filled in for 2.14 and later; older kernels find the
 * RSDP by scanning 0xe0000-0xfffff, where the tables are anyway.
 */
#ifndef HVM_ARCH_X86_BZIMAGE_H
#define HVM_ARCH_X86_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guest_memory;

#define BZIMAGE_MIN_VERSION 0x020c /* 2.12: XLF_KERNEL_64 */
#define BZIMAGE_RSDP_VERSION 0x020e /* 2.14: boot_params.acpi_rsdp_addr */
#define BZIMAGE_ENTRY64_OFFSET 0x200 /* startup_64 in the loaded kernel */

/* The zero page (struct boot_params), below the command line's page. */
#define X86_ZERO_PAGE_GPA 0x3000

/* What the setup header says, validated. */
struct bzimage_info {
	uint16_t version; /* 0x020f means 2.15 */
	uint32_t setup_size; /* boot sector + real-mode setup, in bytes */
	uint32_t header_end; /* file offset where the setup header ends */
	uint64_t kernel_size; /* protected-mode kernel bytes after setup */
	uint64_t load_addr; /* where hintvm puts the protected-mode kernel */
	uint32_t init_size; /* memory it needs from load_addr on */
	uint32_t kernel_alignment;
	bool relocatable;
	uint16_t xloadflags;
	uint32_t initrd_addr_max; /* highest byte address an initrd may use */
	uint32_t cmdline_size; /* longest command line, without the NUL */
};

/* What hintvm hands the kernel. */
struct linux_boot_args {
	const char *cmdline; /* NULL means "" */
	const void *initrd; /* NULL when there is none */
	uint64_t initrd_size;
	const char *initrd_name; /* for messages */
	uint64_t ram_size; /* all guest RAM, as x86_e820_build() takes it */
	uint64_t acpi_rsdp_gpa; /* 0: no ACPI tables */
};

/* Where the boot vCPU starts. */
struct linux_boot_entry {
	uint64_t rip; /* 64-bit entry point */
	uint64_t boot_params_gpa; /* goes into RSI */
	uint64_t kernel_end; /* first byte after load_addr + init_size */
	uint64_t initrd_gpa; /* 0 when there is no initrd */
};

/* True when BUF looks like a bzImage (boot flag and "HdrS" magic). */
bool bzimage_probe(const void *buf, size_t size);

/*
 * Validate the setup header of the bzImage NAME (SIZE bytes at BUF) and
 * fill INFO. Every refusal names the file, the field, the value found and
 * what was expected (hvm_set_error) and returns -ENOEXEC.
 */
int bzimage_parse(const char *name, const void *buf, size_t size,
		  struct bzimage_info *info);

/*
 * Parse, then copy the kernel into guest memory, place the initrd and the
 * command line and build the zero page. RAM must hold the kernel's
 * init_size from its load address and, above that, the initrd under both
 * initrd_addr_max and the MMIO hole. Returns 0 or -errno (with a message).
 */
int bzimage_load(struct guest_memory *mem, const char *name, const void *buf,
		 size_t size, const struct linux_boot_args *args,
		 struct linux_boot_entry *entry);

#endif
