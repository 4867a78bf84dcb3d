// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "arch/x86/boot64.h"
#include "base/log.h"
#include "core/guest_memory.h"

#define PAGE_SIZE 0x1000
#define PTE_PRESENT (1ULL << 0)
#define PTE_WRITE (1ULL << 1)
#define PTE_LARGE (1ULL << 7) /* 2 MiB page in a PD entry */
#define SIZE_2M (1ULL << 21)
#define SIZE_1G (1ULL << 30)

#define CR0_PE (1ULL << 0)
#define CR0_ET (1ULL << 4)
#define CR0_NW (1ULL << 29)
#define CR0_CD (1ULL << 30)
#define CR0_PG (1ULL << 31)
#define CR4_PAE (1ULL << 5)
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)
#define RFLAGS_RESERVED (1ULL << 1) /* always 1; IF stays 0 */

/*
 * Flat descriptors: base 0, limit 0xfffff with 4 KiB granularity.
 * Code: present, DPL 0, execute/read, accessed, L=1. Data: read/write,
 * accessed, D/B=1.
 */
#define GDT_CODE64 0x00af9b000000ffffULL
#define GDT_DATA 0x00cf93000000ffffULL
#define SEG_TYPE_CODE_XRA 0xb
#define SEG_TYPE_DATA_RWA 0x3

int boot64_write_tables(struct guest_memory *mem)
{
	uint64_t gdt[4] = { 0, 0, GDT_CODE64, GDT_DATA };
	uint64_t *pml4, *pdpt, *pd;

	pml4 = guest_ptr(mem, BOOT64_PML4_GPA, PAGE_SIZE);
	pdpt = guest_ptr(mem, BOOT64_PDPT_GPA, PAGE_SIZE);
	pd = guest_ptr(mem, BOOT64_PD_GPA, BOOT64_PD_PAGES * PAGE_SIZE);
	if (!pml4 || !pdpt || !pd ||
	    guest_write(mem, BOOT64_GDT_GPA, gdt, sizeof(gdt)))
		return hvm_set_error(-EFAULT,
				     "boot page tables at 0x%x-0x%x are not "
				     "guest RAM",
				     BOOT64_GDT_GPA, BOOT64_TABLES_END);

	memset(pml4, 0, PAGE_SIZE);
	memset(pdpt, 0, PAGE_SIZE);
	pml4[0] = BOOT64_PDPT_GPA | PTE_PRESENT | PTE_WRITE;
	for (unsigned int i = 0; i < BOOT64_PD_PAGES; i++)
		pdpt[i] = (BOOT64_PD_GPA + i * PAGE_SIZE) | PTE_PRESENT |
			  PTE_WRITE;
	for (unsigned int i = 0; i < BOOT64_PD_PAGES * 512; i++)
		pd[i] = i * SIZE_2M | PTE_PRESENT | PTE_WRITE | PTE_LARGE;
	return 0;
}

static void flat_segment(struct kvm_segment *seg, uint16_t selector,
			 uint8_t type, int long_mode)
{
	memset(seg, 0, sizeof(*seg));
	seg->base = 0;
	seg->limit = 0xffffffff;
	seg->selector = selector;
	seg->type = type;
	seg->present = 1;
	seg->dpl = 0;
	seg->s = 1;
	seg->l = long_mode;
	seg->db = !long_mode;
	seg->g = 1;
}

void boot64_set_entry_state(struct kvm_regs *regs, struct kvm_sregs *sregs,
			    uint64_t entry, uint64_t boot_params_gpa)
{
	memset(regs, 0, sizeof(*regs));
	regs->rip = entry;
	regs->rsi = boot_params_gpa;
	regs->rflags = RFLAGS_RESERVED;

	flat_segment(&sregs->cs, BOOT64_CS_SELECTOR, SEG_TYPE_CODE_XRA, 1);
	flat_segment(&sregs->ds, BOOT64_DS_SELECTOR, SEG_TYPE_DATA_RWA, 0);
	sregs->es = sregs->ds;
	sregs->ss = sregs->ds;
	sregs->fs = sregs->ds;
	sregs->gs = sregs->ds;
	sregs->gdt.base = BOOT64_GDT_GPA;
	sregs->gdt.limit = 4 * 8 - 1;
	sregs->idt.base = 0;
	sregs->idt.limit = 0;

	/* Caches on (a firmware would have cleared CD/NW long ago). */
	sregs->cr0 =
		(sregs->cr0 & ~(CR0_CD | CR0_NW)) | CR0_PE | CR0_ET | CR0_PG;
	sregs->cr3 = BOOT64_PML4_GPA;
	sregs->cr4 |= CR4_PAE;
	sregs->efer |= EFER_LME | EFER_LMA;
}
