// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "core/guest_memory.h"

int guest_memory_add_region(struct guest_memory *mem, uint64_t gpa,
			    uint64_t size, void *hva)
{
	uint64_t last;

	if (size == 0 || !hva || __builtin_add_overflow(gpa, size - 1, &last))
		return -EINVAL;
	if (mem->nr_regions == GUEST_MAX_REGIONS)
		return -ENOSPC;
	for (unsigned int i = 0; i < mem->nr_regions; i++) {
		const struct guest_region *r = &mem->regions[i];

		if (gpa <= r->gpa + (r->size - 1) && r->gpa <= last)
			return -EEXIST;
	}
	mem->regions[mem->nr_regions++] = (struct guest_region){
		.gpa = gpa,
		.size = size,
		.hva = hva,
	};
	mem->ram_size += size;
	return 0;
}

/*
 * KVM maps guest RAM with 2 MiB stage-2 / EPT / NPT pages only where the
 * host address and the guest address agree modulo 2 MiB, and kernels
 * before 6.7 do not align large anonymous mappings: map 2 MiB more and
 * trim, so a 2 MiB aligned guest region gets huge pages (on an arm64 L1
 * under TCG, Linux boot-to-init with 1 vCPU went from 11-19 s to 7-9 s).
 */
#define THP_ALIGN (2ULL << 20)

static void *map_thp_aligned(uint64_t size, int flags)
{
	uint8_t *p, *aligned;
	size_t head, tail;

	if (size > SIZE_MAX - THP_ALIGN) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, size + THP_ALIGN, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	aligned = (uint8_t *)(((uintptr_t)p + THP_ALIGN - 1) &
			      ~(uintptr_t)(THP_ALIGN - 1));
	head = (size_t)(aligned - p);
	tail = THP_ALIGN - head;
	if (head)
		munmap(p, head);
	if (tail)
		munmap(aligned + size, tail);
	return aligned;
}

int guest_memory_map(struct guest_memory *mem, uint64_t size, bool hugetlb)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *p;

	if (size == 0 || size > SIZE_MAX)
		return -EINVAL;
	/*
	 * Huge pages are reserved at mmap time, so a shortage fails here with
	 * ENOMEM instead of a SIGBUS when the guest first touches the page.
	 * Normal RAM is only committed as the guest touches it.
	 */
	flags |= hugetlb ? MAP_HUGETLB : MAP_NORESERVE;
	if (hugetlb) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
	} else {
		p = map_thp_aligned(size, flags);
		if (!p)
			return -errno;
	}
	/* THP is "madvise" on many hosts: ask, and do not mind a refusal. */
	if (!hugetlb)
		madvise(p, size, MADV_HUGEPAGE);
	/* Guest RAM in a core dump of the VMM is large and private. */
	madvise(p, size, MADV_DONTDUMP);
	mem->mapping = p;
	mem->mapping_size = size;
	mem->hugetlb = hugetlb;
	return 0;
}

int guest_memory_map_file(struct guest_memory *mem, uint64_t size, int fd)
{
	void *p;

	if (size == 0 || size > SIZE_MAX)
		return -EINVAL;
	/*
	 * Private: the guest's writes stay in this VM (copy on write), so N
	 * clones of one snapshot share every page none of them wrote, and
	 * pages come from the file on first touch, not at restore.
	 */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, size, MADV_DONTDUMP);
	mem->mapping = p;
	mem->mapping_size = size;
	mem->hugetlb = false;
	return 0;
}

void guest_memory_unmap(struct guest_memory *mem)
{
	if (mem->mapping)
		munmap(mem->mapping, mem->mapping_size);
	*mem = (struct guest_memory){ 0 };
}

void *guest_ptr(const struct guest_memory *mem, uint64_t gpa, uint64_t len)
{
	for (unsigned int i = 0; i < mem->nr_regions; i++) {
		const struct guest_region *r = &mem->regions[i];
		uint64_t off = gpa - r->gpa;

		/* Unsigned arithmetic: gpa below the region wraps to huge. */
		if (gpa >= r->gpa && off < r->size && len <= r->size - off)
			return r->hva + off;
	}
	return NULL;
}

bool guest_range_is_ram(const struct guest_memory *mem, uint64_t gpa,
			uint64_t len)
{
	return guest_ptr(mem, gpa, len) != NULL;
}

int guest_read(const struct guest_memory *mem, uint64_t gpa, void *dst,
	       size_t len)
{
	const void *src = guest_ptr(mem, gpa, len);

	if (!src)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int guest_write(const struct guest_memory *mem, uint64_t gpa, const void *src,
		size_t len)
{
	void *dst = guest_ptr(mem, gpa, len);

	if (!dst)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}
