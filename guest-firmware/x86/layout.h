/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Constants of the test kernel shared by its assembly and C code: limits,
 * segment selectors, interrupt vectors, control-register bits and the
 * offsets of struct cpu fields that assembly touches through %gs. Plain
 * #defines only (included by .S files).
 */
#ifndef TK_LAYOUT_H
#define TK_LAYOUT_H

#define MAX_CPUS 64
#define KERNEL_STACK_SHIFT 14 /* 16 KiB per CPU */
#define KERNEL_STACK_SIZE (1 << KERNEL_STACK_SHIFT)
#define USER_STACK_SIZE 16384

/* GDT layout, identical in the boot GDT and every per-CPU GDT so that the
 * switch from one to the other needs no segment reload. */
#define GDT_KERNEL_CS 0x08 /* 64-bit code, DPL 0 */
#define GDT_KERNEL_DS 0x10
#define GDT_BOOT_CS32 0x18 /* 32-bit code: AP trampoline only */
#define GDT_USER_DS 0x20 /* DPL 3 */
#define GDT_USER_CS 0x28 /* 64-bit code, DPL 3 */
#define GDT_TSS 0x30 /* 16-byte system descriptor */
#define GDT_ENTRIES 8
#define RPL3 3

/* Interrupt vectors. Each CPU sends its payload IPIs on its own vector
 * (IPI_VECTOR_BASE + sender number) so a receiver knows the sender. */
#define EXCEPTION_VECTORS 32
#define DEVICE_VECTOR_BASE 0x30 /* I/O APIC pins a payload routes */
#define DEVICE_VECTORS 16
#define IPI_VECTOR_BASE 0x40
#define WAKE_VECTOR 0xf0 /* ends a wait_halted: no handler, just EOI */
#define SPURIOUS_VECTOR 0xff

/* Control registers and MSRs. */
#define CR0_PE (1 << 0)
#define CR0_MP (1 << 1)
#define CR0_ET (1 << 4)
#define CR0_NE (1 << 5)
#define CR0_WP (1 << 16)
#define CR0_PG (1 << 31)
#define CR0_LONG_MODE (CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_PG)
#define CR4_PAE (1 << 5)
#define MSR_EFER 0xc0000080
#define EFER_LME (1 << 8)
#define MSR_GS_BASE 0xc0000101
#define RFLAGS_RESERVED1 (1 << 1)
#define RFLAGS_IF (1 << 9)

/* xAPIC register offsets from X86_LAPIC_GPA. */
#define LAPIC_ID 0x20

/* struct cpu fields used by assembly (checked by static asserts). */
#define CPU_OFFSET_SELF 0
#define CPU_OFFSET_KERNEL_RSP 8
#define CPU_OFFSET_TSS 16
#define TSS_OFFSET_RSP0 4

#endif
