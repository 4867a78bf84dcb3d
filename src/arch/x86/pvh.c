// SPDX-License-Identifier: LGPL-2.1-or-later
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/x86/pvh.h"
#include "core/log.h"

#define MAX_PHDRS 64

int pvh_is_elf(const uint8_t *img, size_t size)
{
	return size >= SELFMAG && !memcmp(img, ELFMAG, SELFMAG);
}

static bool range_in_file(size_t file_size, uint64_t off, uint64_t len)
{
	return off <= file_size && len <= file_size - off;
}

/* Walk the notes in [OFF, OFF + LEN) of the file for the PVH entry. */
static int find_pvh_note(const uint8_t *img, uint64_t off, uint64_t len,
			 uint64_t *entry)
{
	uint64_t pos = 0;

	while (len - pos >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name_len, desc_len, desc_off;
		const uint8_t *name;

		memcpy(&nh, img + off + pos, sizeof(nh));
		name_len = ((uint64_t)nh.n_namesz + 3) & ~3ULL;
		desc_len = ((uint64_t)nh.n_descsz + 3) & ~3ULL;
		pos += sizeof(nh);
		if (name_len > len - pos || desc_len > len - pos - name_len)
			return -EINVAL;
		name = img + off + pos;
		desc_off = off + pos + name_len;
		if (nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_namesz == 4 &&
		    !memcmp(name, "Xen", 4)) {
			uint32_t e32;
			uint64_t e64;

			if (nh.n_descsz == 4) {
				memcpy(&e32, img + desc_off, 4);
				*entry = e32;
				return 1;
			}
			if (nh.n_descsz == 8) {
				memcpy(&e64, img + desc_off, 8);
				*entry = e64;
				return 1;
			}
			return -EINVAL;
		}
		pos += name_len + desc_len;
	}
	return 0;
}

int pvh_load_elf(const uint8_t *img, size_t size, const char *name,
		 const struct guest_memory *mem, uint64_t min_load_addr,
		 struct pvh_image *out)
{
	Elf64_Phdr phdrs[MAX_PHDRS];
	uint64_t entry = 0;
	bool have_entry = false;
	Elf64_Ehdr eh;

	if (size < sizeof(eh))
		return hvm_set_error(
			-EINVAL,
			"kernel %s: truncated ELF header (%zu bytes, need %zu)",
			name, size, sizeof(eh));
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return hvm_set_error(-EINVAL, "kernel %s is not an ELF file",
				     name);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: expected a 64-bit little-endian ELF, found class %u data %u",
			name, eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA]);
	if (eh.e_machine != EM_X86_64)
		return hvm_set_error(
			-EINVAL,
			"kernel %s is an ELF for machine %u (%s); expected x86-64 (%u)",
			name, eh.e_machine,
			eh.e_machine == EM_AARCH64 ? "arm64" : "not x86-64",
			EM_X86_64);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    eh.e_phnum > MAX_PHDRS)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: program header table has %u entries of %u bytes; expected 1-%d of %zu",
			name, eh.e_phnum, eh.e_phentsize, MAX_PHDRS,
			sizeof(Elf64_Phdr));
	if (!range_in_file(size, eh.e_phoff,
			   (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
		return hvm_set_error(
			-EINVAL,
			"kernel %s: program headers at offset %llu lie beyond the end of the file (%zu bytes)",
			name, (unsigned long long)eh.e_phoff, size);
	memcpy(phdrs, img + eh.e_phoff, eh.e_phnum * sizeof(Elf64_Phdr));

	/* Validate everything before touching guest memory. */
	out->load_start = UINT64_MAX;
	out->load_end = 0;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &phdrs[i];
		int r;

		if (p->p_type == PT_NOTE) {
			if (!range_in_file(size, p->p_offset, p->p_filesz))
				return hvm_set_error(
					-EINVAL,
					"kernel %s: note segment %u lies beyond the end of the file",
					name, i);
			r = find_pvh_note(img, p->p_offset, p->p_filesz,
					  &entry);
			if (r < 0)
				return hvm_set_error(
					-EINVAL,
					"kernel %s: malformed note in segment %u",
					name, i);
			have_entry |= r > 0;
			continue;
		}
		if (p->p_type != PT_LOAD || p->p_memsz == 0)
			continue;
		if (!range_in_file(size, p->p_offset, p->p_filesz))
			return hvm_set_error(
				-EINVAL,
				"kernel %s is truncated: segment %u needs bytes %llu-%llu but the file has %zu",
				name, i, (unsigned long long)p->p_offset,
				(unsigned long long)(p->p_offset + p->p_filesz),
				size);
		if (p->p_filesz > p->p_memsz)
			return hvm_set_error(
				-EINVAL,
				"kernel %s: segment %u has more file bytes (%llu) than memory bytes (%llu)",
				name, i, (unsigned long long)p->p_filesz,
				(unsigned long long)p->p_memsz);
		if (p->p_paddr < min_load_addr ||
		    !guest_range_is_ram(mem, p->p_paddr, p->p_memsz))
			return hvm_set_error(
				-EINVAL,
				"kernel %s: segment %u at 0x%llx-0x%llx does not fit in guest RAM above 0x%llx (try more --mem)",
				name, i, (unsigned long long)p->p_paddr,
				(unsigned long long)(p->p_paddr + p->p_memsz),
				(unsigned long long)min_load_addr);
		for (unsigned int j = 0; j < i; j++) {
			const Elf64_Phdr *q = &phdrs[j];

			if (q->p_type != PT_LOAD || q->p_memsz == 0)
				continue;
			if (p->p_paddr < q->p_paddr + q->p_memsz &&
			    q->p_paddr < p->p_paddr + p->p_memsz)
				return hvm_set_error(
					-EINVAL,
					"kernel %s: segments %u and %u overlap",
					name, j, i);
		}
		if (p->p_paddr < out->load_start)
			out->load_start = p->p_paddr;
		if (p->p_paddr + p->p_memsz > out->load_end)
			out->load_end = p->p_paddr + p->p_memsz;
	}
	if (!have_entry)
		return hvm_set_error(
			-EINVAL,
			"kernel %s is an ELF without a PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY); build Linux with CONFIG_PVH=y or pass a bzImage",
			name);
	if (out->load_end == 0)
		return hvm_set_error(-EINVAL,
				     "kernel %s has no loadable segment", name);
	if (entry < out->load_start || entry >= out->load_end)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: PVH entry 0x%llx is outside its loaded segments",
			name, (unsigned long long)entry);
	/* PVH starts in 32-bit protected mode: EIP cannot reach higher. */
	if (entry > UINT32_MAX)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: PVH entry 0x%llx is above 4 GiB; the 32-bit entry point must lie below 0x100000000",
			name, (unsigned long long)entry);

	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &phdrs[i];
		uint8_t *dst;

		if (p->p_type != PT_LOAD || p->p_memsz == 0)
			continue;
		dst = guest_ptr(mem, p->p_paddr, p->p_memsz);
		memcpy(dst, img + p->p_offset, p->p_filesz);
		memset(dst + p->p_filesz, 0, p->p_memsz - p->p_filesz);
	}
	out->entry = entry;
	return 0;
}
