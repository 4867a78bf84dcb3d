/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test kernel layout: one loadable segment at X86_HIGH_MEM_START (the
 * physical load address; paging is an identity map) and the PVH note.
 * Preprocessed by cpp so the address comes from platform.h.
 */
#include "arch/x86/platform.h"

OUTPUT_FORMAT("elf64-x86-64")
OUTPUT_ARCH(i386:x86-64)
ENTRY(pvh_entry32)

PHDRS
{
	image PT_LOAD FLAGS(7);
	note PT_NOTE FLAGS(4);
}

SECTIONS
{
	. = X86_HIGH_MEM_START;
	__kernel_start = .;
	.text : {
		*(.text.boot)
		*(.text .text.*)
	} :image
	.rodata : {
		*(.rodata .rodata.*)
	} :image
	.data : {
		*(.data.pagetables)
		*(.data .data.*)
	} :image
	.note.pvh : {
		*(.note.pvh)
	} :image :note
	.bss : {
		*(.bss .bss.*)
		*(COMMON)
	} :image
	__kernel_end = .;

	/DISCARD/ : {
		*(.note.gnu.*)
		*(.comment)
		*(.eh_frame)
	}
}
