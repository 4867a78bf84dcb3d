/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entering a kernel in 64-bit mode, as the Linux 64-bit boot protocol
 * asks (boot.rst, "64-bit Boot Protocol"): paging on with an identity map
 * covering the kernel, the zero page and the command line; a GDT with flat
 * __BOOT_CS (0x10, 64-bit code) and __BOOT_DS (0x18, data); CS = __BOOT_CS,
 * DS/ES/SS = __BOOT_DS; interrupts off; RSI = the zero page.
 *
 * The tables live in low guest RAM (below) and map the first 4 GiB with
 * 2 MiB pages, so the kernel's load address, init_size area, initrd and
 * tables are all covered whatever their placement below 4 GiB.
 */
#ifndef HVM_ARCH_X86_BOOT64_H
#define HVM_ARCH_X86_BOOT64_H

#include <stdint.h>

#include <linux/kvm.h>

struct guest_memory;

#define BOOT64_GDT_GPA 0x4000 /* 4 descriptors */
#define BOOT64_PML4_GPA 0x9000
#define BOOT64_PDPT_GPA 0xa000
#define BOOT64_PD_GPA 0xb000 /* 4 pages: 0xb000-0xefff */
#define BOOT64_PD_PAGES 4
#define BOOT64_TABLES_END 0xf000

#define BOOT64_CS_SELECTOR 0x10 /* __BOOT_CS */
#define BOOT64_DS_SELECTOR 0x18 /* __BOOT_DS */

/* Write the GDT and the identity page tables into guest memory. */
int boot64_write_tables(struct guest_memory *mem);

/*
 * Turn the vCPU state read with KVM_GET_REGS/KVM_GET_SREGS into the
 * 64-bit entry state: RIP = ENTRY, RSI = BOOT_PARAMS_GPA. Only the fields
 * the protocol defines are touched. Call boot64_write_tables() first.
 */
void boot64_set_entry_state(struct kvm_regs *regs, struct kvm_sregs *sregs,
			    uint64_t entry, uint64_t boot_params_gpa);

#endif
