// SPDX-License-Identifier: LGPL-2.1-or-later
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/x86/pvh.h"
#include "base/log.h"

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

/*
 * The ELF header and program headers in their 64-bit form, whichever class
 * the file is: ELF32 PVH kernels (unikernels, test frameworks; QEMU and
 * Xen boot them) then take the same checks as ELF64 ones.
 */
struct elf_view {
	unsigned int elf_class;
	uint16_t machine;
	uint64_t phoff;
	uint16_t phentsize, phnum;
};

static int read_elf_header(const uint8_t *img, size_t size, const char *name,
			   struct elf_view *v)
{
	uint16_t want_machine;
	size_t ehdr_size, phdr_size;

	if (size < EI_NIDENT)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: truncated ELF header (%zu bytes, need %zu)",
			name, size, sizeof(Elf64_Ehdr));
	if (memcmp(img, ELFMAG, SELFMAG))
		return hvm_set_error(-EINVAL, "kernel %s is not an ELF file",
				     name);
	v->elf_class = img[EI_CLASS];
	if ((v->elf_class != ELFCLASS64 && v->elf_class != ELFCLASS32) ||
	    img[EI_DATA] != ELFDATA2LSB)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: expected a 32- or 64-bit little-endian ELF, found class %u data %u",
			name, img[EI_CLASS], img[EI_DATA]);
	ehdr_size = v->elf_class == ELFCLASS64 ? sizeof(Elf64_Ehdr)
					       : sizeof(Elf32_Ehdr);
	phdr_size = v->elf_class == ELFCLASS64 ? sizeof(Elf64_Phdr)
					       : sizeof(Elf32_Phdr);
	if (size < ehdr_size)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: truncated ELF header (%zu bytes, need %zu)",
			name, size, ehdr_size);
	if (v->elf_class == ELFCLASS64) {
		Elf64_Ehdr eh;

		memcpy(&eh, img, sizeof(eh));
		v->machine = eh.e_machine;
		v->phoff = eh.e_phoff;
		v->phentsize = eh.e_phentsize;
		v->phnum = eh.e_phnum;
	} else {
		Elf32_Ehdr eh;

		memcpy(&eh, img, sizeof(eh));
		v->machine = eh.e_machine;
		v->phoff = eh.e_phoff;
		v->phentsize = eh.e_phentsize;
		v->phnum = eh.e_phnum;
	}
	/* The 32-bit PVH entry is the same either way; the container only
	 * says how the image was linked (i386, or x86-64 in ELF32). */
	want_machine = v->elf_class == ELFCLASS64 ? EM_X86_64 : EM_386;
	if (v->machine != want_machine && v->machine != EM_X86_64)
		return hvm_set_error(
			-EINVAL,
			"kernel %s is an ELF for machine %u (%s); expected x86-64 (%u)%s",
			name, v->machine,
			v->machine == EM_AARCH64 ? "arm64" : "not x86",
			EM_X86_64,
			v->elf_class == ELFCLASS32 ? " or i386 (3)" : "");
	if (v->phentsize != phdr_size || v->phnum == 0 || v->phnum > MAX_PHDRS)
		return hvm_set_error(
			-EINVAL,
			"kernel %s: program header table has %u entries of %u bytes; expected 1-%d of %zu",
			name, v->phnum, v->phentsize, MAX_PHDRS, phdr_size);
	if (!range_in_file(size, v->phoff, (uint64_t)v->phnum * phdr_size))
		return hvm_set_error(
			-EINVAL,
			"kernel %s: program headers at offset %llu lie beyond the end of the file (%zu bytes)",
			name, (unsigned long long)v->phoff, size);
	return 0;
}

static void read_phdr(const uint8_t *img, const struct elf_view *v,
		      unsigned int i, Elf64_Phdr *out)
{
	Elf32_Phdr p32;

	if (v->elf_class == ELFCLASS64) {
		memcpy(out, img + v->phoff + i * sizeof(*out), sizeof(*out));
		return;
	}
	memcpy(&p32, img + v->phoff + i * sizeof(p32), sizeof(p32));
	*out = (Elf64_Phdr){
		.p_type = p32.p_type,
		.p_flags = p32.p_flags,
		.p_offset = p32.p_offset,
		.p_vaddr = p32.p_vaddr,
		.p_paddr = p32.p_paddr,
		.p_filesz = p32.p_filesz,
		.p_memsz = p32.p_memsz,
		.p_align = p32.p_align,
	};
}

int pvh_load_elf(const uint8_t *img, size_t size, const char *name,
		 const struct guest_memory *mem, uint64_t min_load_addr,
		 struct pvh_image *out)
{
	Elf64_Phdr phdrs[MAX_PHDRS];
	uint64_t entry = 0;
	bool have_entry = false;
	struct elf_view eh = { 0 };
	int r;

	r = read_elf_header(img, size, name, &eh);
	if (r < 0)
		return r;
	for (unsigned int i = 0; i < eh.phnum; i++)
		read_phdr(img, &eh, i, &phdrs[i]);

	/* Validate everything before touching guest memory. */
	out->load_start = UINT64_MAX;
	out->load_end = 0;
	for (unsigned int i = 0; i < eh.phnum; i++) {
		const Elf64_Phdr *p = &phdrs[i];

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

	for (unsigned int i = 0; i < eh.phnum; i++) {
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
