// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <asm/bootparam.h>

#include "arch/x86/bzimage.h"
#include "arch/x86/e820.h"
#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/guest_memory.h"

#define SETUP_HEADER_OFFSET 0x1f1 /* struct setup_header in the file */
#define BOOT_FLAG 0xaa55
#define HDRS_MAGIC 0x53726448 /* "HdrS" */
#define DEFAULT_SETUP_SECTS 4 /* setup_sects == 0 means 4 */
#define TYPE_OF_LOADER_UNDEFINED 0xff
#define SETUP_HEAP_END 0xfe00 /* end of the real-mode heap, as loaders set */
#define PAGE_SIZE 0x1000ULL

_Static_assert(sizeof(struct boot_params) == 0x1000, "zero page is one page");
_Static_assert(offsetof(struct boot_params, hdr) == SETUP_HEADER_OFFSET,
	       "setup header offset");

/* Bytes [SETUP_HEADER_OFFSET, FIELD end) must be present for VERSION 2.12. */
#define HDR_END(field)                                                \
	(SETUP_HEADER_OFFSET + offsetof(struct setup_header, field) + \
	 sizeof(((struct setup_header *)0)->field))

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

#define FIELD_OFF(field) \
	(SETUP_HEADER_OFFSET + offsetof(struct setup_header, field))

bool bzimage_probe(const void *buf, size_t size)
{
	const uint8_t *b = buf;

	return size >= HDR_END(header) &&
	       le16(b + FIELD_OFF(boot_flag)) == BOOT_FLAG &&
	       le32(b + FIELD_OFF(header)) == HDRS_MAGIC;
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int bzimage_parse(const char *name, const void *buf, size_t size,
		  struct bzimage_info *info)
{
	const uint8_t *b = buf;
	uint32_t setup_sects, syssize;
	uint16_t boot_flag;
	uint32_t magic;
	uint64_t pref_address;

	memset(info, 0, sizeof(*info));
	if (size < HDR_END(header))
		return hvm_set_error(-ENOEXEC,
				     "%s: %zu bytes is too small for a bzImage "
				     "(the setup header ends at byte %zu)",
				     name, size, (size_t)HDR_END(header));
	boot_flag = le16(b + FIELD_OFF(boot_flag));
	if (boot_flag != BOOT_FLAG)
		return hvm_set_error(-ENOEXEC,
				     "%s: not a bzImage: boot_flag is 0x%04x, "
				     "expected 0xaa55",
				     name, boot_flag);
	magic = le32(b + FIELD_OFF(header));
	if (magic != HDRS_MAGIC)
		return hvm_set_error(-ENOEXEC,
				     "%s: not a bzImage: setup header magic is "
				     "0x%08x, expected 0x53726448 (\"HdrS\")",
				     name, magic);
	info->version = le16(b + FIELD_OFF(version));
	if (info->version < BZIMAGE_MIN_VERSION)
		return hvm_set_error(-ENOEXEC,
				     "%s: boot protocol version %u.%02u is too "
				     "old: hintvm needs 2.12 or later for the "
				     "64-bit entry point",
				     name, info->version >> 8,
				     info->version & 0xff);

	/* The setup header's own length: 0x202 + the jump's offset byte. */
	info->header_end = 0x202 + b[0x201];
	if (info->header_end < HDR_END(init_size))
		return hvm_set_error(-ENOEXEC,
				     "%s: setup header ends at byte 0x%x, but "
				     "protocol %u.%02u needs it to reach 0x%zx",
				     name, info->header_end, info->version >> 8,
				     info->version & 0xff,
				     (size_t)HDR_END(init_size));
	if (size < HDR_END(init_size))
		return hvm_set_error(-ENOEXEC,
				     "%s: truncated: %zu bytes, the setup "
				     "header needs %zu",
				     name, size, (size_t)HDR_END(init_size));
	if (info->header_end >
	    SETUP_HEADER_OFFSET + sizeof(struct setup_header))
		info->header_end =
			SETUP_HEADER_OFFSET + sizeof(struct setup_header);

	info->xloadflags = le16(b + FIELD_OFF(xloadflags));
	if (!(info->xloadflags & XLF_KERNEL_64))
		return hvm_set_error(
			-ENOEXEC,
			"%s: xloadflags 0x%04x lacks XLF_KERNEL_64 "
			"(bit 0): not a 64-bit kernel, hintvm "
			"boots only the 64-bit entry point",
			name, info->xloadflags);

	setup_sects = b[FIELD_OFF(setup_sects)];
	if (setup_sects == 0)
		setup_sects = DEFAULT_SETUP_SECTS;
	info->setup_size = (setup_sects + 1) * 512;
	if (info->setup_size < info->header_end)
		return hvm_set_error(-ENOEXEC,
				     "%s: setup_sects %u gives %u setup bytes, "
				     "less than the setup header's end 0x%x",
				     name, setup_sects, info->setup_size,
				     info->header_end);
	syssize = le32(b + FIELD_OFF(syssize));
	info->kernel_size = (uint64_t)syssize * 16;
	if (syssize == 0)
		return hvm_set_error(-ENOEXEC,
				     "%s: syssize is 0: no protected-mode "
				     "kernel after the setup code",
				     name);
	if (size < info->setup_size ||
	    size - info->setup_size < info->kernel_size)
		return hvm_set_error(
			-ENOEXEC,
			"%s: truncated: %zu bytes, but setup_sects "
			"%u and syssize %u (x16) need %llu",
			name, size, setup_sects, syssize,
			(unsigned long long)(info->setup_size +
					     info->kernel_size));

	info->init_size = le32(b + FIELD_OFF(init_size));
	if (info->init_size < info->kernel_size)
		return hvm_set_error(-ENOEXEC,
				     "%s: init_size 0x%x is smaller than the "
				     "kernel it must hold (0x%llx bytes)",
				     name, info->init_size,
				     (unsigned long long)info->kernel_size);
	info->relocatable = b[FIELD_OFF(relocatable_kernel)] != 0;
	info->kernel_alignment = le32(b + FIELD_OFF(kernel_alignment));
	if (info->relocatable && !is_pow2(info->kernel_alignment))
		return hvm_set_error(-ENOEXEC,
				     "%s: kernel_alignment 0x%x is not a power "
				     "of two",
				     name, info->kernel_alignment);
	info->initrd_addr_max = le32(b + FIELD_OFF(initrd_addr_max));
	info->cmdline_size = le32(b + FIELD_OFF(cmdline_size));

	/*
	 * Load where the kernel wants to run: at pref_address it neither
	 * copies itself (relocatable) nor depends on us (not relocatable).
	 */
	pref_address = le64(b + FIELD_OFF(pref_address));
	if (pref_address >= X86_MMIO_HOLE_START)
		return hvm_set_error(-ENOEXEC,
				     "%s: pref_address 0x%llx is not below "
				     "0x%llx, where hintvm loads kernels",
				     name, (unsigned long long)pref_address,
				     (unsigned long long)X86_MMIO_HOLE_START);
	if (pref_address < X86_HIGH_MEM_START) {
		if (!info->relocatable)
			return hvm_set_error(-ENOEXEC,
					     "%s: pref_address 0x%llx is below "
					     "1 MiB and the kernel is not "
					     "relocatable",
					     name,
					     (unsigned long long)pref_address);
		pref_address = X86_HIGH_MEM_START;
	}
	if (info->relocatable && (pref_address & (info->kernel_alignment - 1)))
		pref_address = (pref_address + info->kernel_alignment - 1) &
			       ~(uint64_t)(info->kernel_alignment - 1);
	info->load_addr = pref_address;
	return 0;
}

/*
 * Put the initrd as high as allowed: below initrd_addr_max, below the end
 * of low RAM, page-aligned, above the kernel's init_size area.
 */
static int place_initrd(struct guest_memory *mem, const char *name,
			const struct bzimage_info *info,
			const struct linux_boot_args *args, uint64_t kernel_end,
			uint64_t *gpa)
{
	const char *initrd_name =
		args->initrd_name ? args->initrd_name : "initrd";
	uint64_t limit = (uint64_t)info->initrd_addr_max + 1;
	uint64_t low_end = x86_ram_below_hole(args->ram_size);
	uint64_t start;
	void *dst;

	if (limit > low_end)
		limit = low_end;
	if (args->initrd_size > limit || limit - args->initrd_size < kernel_end)
		return hvm_set_error(
			-E2BIG,
			"%s: %llu bytes do not fit between the "
			"kernel's end 0x%llx and 0x%llx (the lower "
			"of %s's initrd_addr_max and the end of "
			"low RAM): give the guest more memory",
			initrd_name, (unsigned long long)args->initrd_size,
			(unsigned long long)kernel_end,
			(unsigned long long)limit, name);
	start = (limit - args->initrd_size) & ~(PAGE_SIZE - 1);
	if (start < kernel_end)
		return hvm_set_error(-E2BIG,
				     "%s: %llu bytes do not fit above the "
				     "kernel's end 0x%llx once page-aligned",
				     initrd_name,
				     (unsigned long long)args->initrd_size,
				     (unsigned long long)kernel_end);
	dst = guest_ptr(mem, start, args->initrd_size);
	if (!dst)
		return hvm_set_error(-EFAULT,
				     "%s: guest range 0x%llx+%llu is not RAM",
				     initrd_name, (unsigned long long)start,
				     (unsigned long long)args->initrd_size);
	memcpy(dst, args->initrd, args->initrd_size);
	*gpa = start;
	return 0;
}

static void fill_e820(struct boot_params *bp, uint64_t ram_size)
{
	struct x86_e820_entry map[X86_E820_MAX_ENTRIES];
	int n = x86_e820_build(ram_size, map, X86_E820_MAX_ENTRIES);

	for (int i = 0; i < n; i++) {
		bp->e820_table[i].addr = map[i].addr;
		bp->e820_table[i].size = map[i].size;
		bp->e820_table[i].type = map[i].type;
	}
	bp->e820_entries = n > 0 ? (uint8_t)n : 0;
}

int bzimage_load(struct guest_memory *mem, const char *name, const void *buf,
		 size_t size, const struct linux_boot_args *args,
		 struct linux_boot_entry *entry)
{
	const char *cmdline = args->cmdline ? args->cmdline : "";
	size_t cmdline_len = strlen(cmdline);
	struct bzimage_info info;
	struct boot_params *bp;
	uint64_t kernel_end;
	void *dst;
	int ret;

	memset(entry, 0, sizeof(*entry));
	ret = bzimage_parse(name, buf, size, &info);
	if (ret)
		return ret;
	if (args->ram_size < X86_E820_MIN_RAM)
		return hvm_set_error(-EINVAL,
				     "guest RAM of %llu bytes is too small to "
				     "boot Linux",
				     (unsigned long long)args->ram_size);
	if (cmdline_len > info.cmdline_size || cmdline_len >= X86_CMDLINE_MAX)
		return hvm_set_error(-E2BIG,
				     "kernel command line of %zu bytes is too "
				     "long: %s accepts %u, hintvm %u",
				     cmdline_len, name, info.cmdline_size,
				     X86_CMDLINE_MAX - 1);

	kernel_end = info.load_addr + info.init_size;
	if (!guest_range_is_ram(mem, info.load_addr, info.init_size) ||
	    kernel_end > x86_ram_below_hole(args->ram_size))
		return hvm_set_error(-ENOMEM,
				     "%s needs RAM at 0x%llx-0x%llx (init_size "
				     "0x%x): give the guest more memory",
				     name, (unsigned long long)info.load_addr,
				     (unsigned long long)kernel_end,
				     info.init_size);
	dst = guest_ptr(mem, info.load_addr, info.kernel_size);
	if (!dst)
		return hvm_set_error(-EFAULT, "%s: load range is not RAM",
				     name);
	memcpy(dst, (const uint8_t *)buf + info.setup_size, info.kernel_size);

	bp = guest_ptr(mem, X86_ZERO_PAGE_GPA, sizeof(*bp));
	if (!bp || guest_write(mem, X86_CMDLINE_GPA, cmdline, cmdline_len + 1))
		return hvm_set_error(-EFAULT,
				     "zero page or command line outside RAM");
	memset(bp, 0, sizeof(*bp));
	/* The loader starts from the file's own setup header (boot.rst). */
	memcpy(&bp->hdr, (const uint8_t *)buf + SETUP_HEADER_OFFSET,
	       info.header_end - SETUP_HEADER_OFFSET);
	bp->hdr.type_of_loader = TYPE_OF_LOADER_UNDEFINED;
	bp->hdr.loadflags |= LOADED_HIGH | CAN_USE_HEAP;
	bp->hdr.loadflags &= (uint8_t)~KEEP_SEGMENTS;
	bp->hdr.heap_end_ptr = SETUP_HEAP_END - 0x200;
	bp->hdr.code32_start = (uint32_t)info.load_addr;
	bp->hdr.cmd_line_ptr = X86_CMDLINE_GPA;
	bp->hdr.ramdisk_image = 0;
	bp->hdr.ramdisk_size = 0;
	bp->hdr.setup_data = 0;

	if (args->initrd && args->initrd_size) {
		ret = place_initrd(mem, name, &info, args, kernel_end,
				   &entry->initrd_gpa);
		if (ret)
			return ret;
		bp->hdr.ramdisk_image = (uint32_t)entry->initrd_gpa;
		bp->hdr.ramdisk_size = (uint32_t)args->initrd_size;
	}
	fill_e820(bp, args->ram_size);
	if (info.version >= BZIMAGE_RSDP_VERSION)
		bp->acpi_rsdp_addr = args->acpi_rsdp_gpa;

	entry->rip = info.load_addr + BZIMAGE_ENTRY64_OFFSET;
	entry->boot_params_gpa = X86_ZERO_PAGE_GPA;
	entry->kernel_end = kernel_end;
	return 0;
}
