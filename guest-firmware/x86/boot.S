/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entry points: the PVH entry of the boot CPU (32-bit protected mode, paging
 * off, %ebx = struct hvm_start_info) and the real-mode trampoline that every
 * AP runs after its SIPI. Both switch to long mode on the static boot page
 * tables below and call into C. Guest kernel mode is emulated at ~1 MIPS on
 * the dev hosts, so everything that can be computed at build time (page
 * tables, boot GDT) is.
 */
#include "arch/x86/platform.h"
#include "layout.h"

/* Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY). The descriptor is 8 bytes
 * like Linux's: QEMU reads a pointer-sized value. */
#define XEN_ELFNOTE_PHYS32_ENTRY 18
	.pushsection .note.pvh, "a", @note
	.balign 4
	.long 4
	.long 8
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.balign 4
	.quad pvh_entry32
	.balign 4
	.popsection

/* Switch from 32-bit protected mode to long mode and jump to TARGET. */
.macro ENTER_LONG_MODE target
	movl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl $CR0_LONG_MODE, %eax
	movl %eax, %cr0
	ljmp $GDT_KERNEL_CS, $\target
.endm

/* Flat data selectors for DS/ES/SS; FS and GS null so that the GS base
 * (per-CPU pointer) is never reloaded by a privilege change. */
.macro LOAD_DATA_SEGMENTS
	movl $GDT_KERNEL_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
.endm

	.section .text.boot, "ax"
	.code32
	.globl pvh_entry32
pvh_entry32:
	cli
	cld
	movl %ebx, %edi /* first argument of kmain */
	lgdt boot_gdt_ptr
	ENTER_LONG_MODE bsp_entry64

	.code64
bsp_entry64:
	LOAD_DATA_SEGMENTS
	movl %edi, %edi
	/* The boot CPU is always CPU 0: its stack is the first one. */
	movq $(cpu_stacks + KERNEL_STACK_SIZE), %rsp
	xorl %ebp, %ebp
	call kmain
	jmp halt_forever

	.code32
ap_entry32:
	movl $GDT_KERNEL_DS, %eax
	movl %eax, %ds
	ENTER_LONG_MODE ap_entry64

	.code64
/*
 * An AP finds its CPU index by looking up its LAPIC ID in smp_apic_ids
 * (filled by the BSP before the SIPI), so all APs can start at once with
 * their own stacks.
 */
ap_entry64:
	LOAD_DATA_SEGMENTS
	movl $(X86_LAPIC_GPA + LAPIC_ID), %esi
	movl (%rsi), %eax
	shrl $24, %eax
	movl smp_cpu_count, %edx
	xorl %ecx, %ecx
1:	cmpl %edx, %ecx
	jae halt_forever /* not a CPU we know: stay out of the way */
	cmpl smp_apic_ids(, %rcx, 4), %eax
	je 2f
	incl %ecx
	jmp 1b
2:	movl %ecx, %edi /* first argument of ap_main */
	leaq 1(%rcx), %rax
	shlq $KERNEL_STACK_SHIFT, %rax
	leaq cpu_stacks(%rax), %rsp
	xorl %ebp, %ebp
	call ap_main

	.globl halt_forever
halt_forever:
	cli
	hlt
	jmp halt_forever

/*
 * Real-mode AP trampoline, copied to X86_AP_TRAMPOLINE_GPA by the BSP. It
 * runs at CS = (X86_AP_TRAMPOLINE_GPA >> 4), IP = 0, so data is addressed
 * relative to its start.
 */
	.section .rodata.trampoline, "a"
	.code16
	.globl ap_trampoline_start, ap_trampoline_end
ap_trampoline_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	lgdtl ap_trampoline_gdt_ptr - ap_trampoline_start
	movl $(CR0_PE | CR0_ET), %eax
	movl %eax, %cr0
	ljmpl $GDT_BOOT_CS32, $ap_entry32
	.balign 8
ap_trampoline_gdt_ptr:
	.word boot_gdt_end - boot_gdt - 1
	.long boot_gdt
ap_trampoline_end:
	.code64

	.section .rodata.boot, "a"
	.balign 16
boot_gdt:
	.quad 0
	.quad 0x00af9b000000ffff /* GDT_KERNEL_CS: 64-bit, DPL 0 */
	.quad 0x00cf93000000ffff /* GDT_KERNEL_DS */
	.quad 0x00cf9b000000ffff /* GDT_BOOT_CS32 */
boot_gdt_end:
	.balign 8
boot_gdt_ptr:
	.word boot_gdt_end - boot_gdt - 1
	.quad boot_gdt

/*
 * Identity map of the first 4 GiB with 2 MiB pages, user-accessible so CPL3
 * payload code can run kernel text and touch its buffers. Everything is
 * write-back: in a VM the MMIO range (LAPIC at X86_LAPIC_GPA) traps to the
 * hypervisor whatever the cache attribute.
 */
#define PTE_PRESENT 0x1
#define PTE_WRITE 0x2
#define PTE_USER 0x4
#define PTE_LARGE 0x80
#define PTE_TABLE (PTE_PRESENT | PTE_WRITE | PTE_USER)
	.section .data.pagetables, "aw"
	.balign 4096
	.globl boot_pml4
boot_pml4:
	.quad boot_pdpt + PTE_TABLE
	.fill 511, 8, 0
boot_pdpt:
	.quad boot_pd + 0x0000 + PTE_TABLE
	.quad boot_pd + 0x1000 + PTE_TABLE
	.quad boot_pd + 0x2000 + PTE_TABLE
	.quad boot_pd + 0x3000 + PTE_TABLE
	.fill 508, 8, 0
boot_pd:
	.set page, 0
	.rept 2048
	.quad (page << 21) + PTE_TABLE + PTE_LARGE
	.set page, page + 1
	.endr

	.section .note.GNU-stack, "", @progbits
