/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trivial PVH kernel of bench/run startup (issue 16's measurement):
 * print one line on COM1, write 0 to the debug-exit port, halt. Linked as
 * an ELF32 (trivial-pvh.ld), as unikernels and test frameworks ship PVH
 * kernels; hintvm and QEMU both exit with status 1 ((0 << 1) | 1).
 */
#include "arch/x86/platform.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18

	.code32
	.section .text
	.globl _start
_start:
	mov $X86_COM1_PORT, %dx
	mov $message, %esi
1:	lodsb
	test %al, %al
	jz 2f
	out %al, (%dx)
	jmp 1b
2:	mov $X86_DEBUG_EXIT_PORT, %dx
	xor %eax, %eax
	out %eax, (%dx)
3:	hlt
	jmp 3b

	.section .rodata
message:
	.asciz "trivial-pvh: hello\n"

	.section .note.pvh, "a"
	.p2align 2
	.long 4, 4, XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.long _start
