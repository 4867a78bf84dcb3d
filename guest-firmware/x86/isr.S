/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Interrupt entry stubs (one per vector, fixed size, so C finds stub N at
 * isr_stubs + N * ISR_STUB_SIZE) and the CPL3 call/return pair.
 */
#include "layout.h"

#define ISR_STUB_SIZE 16

/* Vectors for which the CPU pushes an error code itself. */
#define HAS_ERROR_CODE(v) \
	((v) == 8 || (v) == 10 || (v) == 11 || (v) == 12 || (v) == 13 || \
	 (v) == 14 || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

	.text
	.code64
	.balign ISR_STUB_SIZE
	.globl isr_stubs
isr_stubs:
	.set vector, 0
	.rept 256
	.balign ISR_STUB_SIZE
	.if HAS_ERROR_CODE(vector)
	.else
	pushq $0
	.endif
	pushq $vector
	jmp isr_common
	.set vector, vector + 1
	.endr

/* Stack on entry: vector, error code, then the CPU's interrupt frame. The
 * register save order matches struct trap_frame. */
isr_common:
	pushq %rax
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %rbx
	pushq %rbp
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, %rdi
	cld
	call trap_dispatch
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbp
	popq %rbx
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rax
	addq $16, %rsp
	iretq

/*
 * uint64_t cpl3_call(uint64_t (*fn)(void *), void *arg, void *user_stack_top)
 *
 * Runs FN(ARG) at CPL3 on the given stack and returns its result. The kernel
 * context is parked in this CPU's struct cpu; interrupts taken at CPL3 land
 * on the same kernel stack (TSS.rsp0) below it.
 *
 * FN comes back through an exception: `ud2` at cpl3_exit, recognised by
 * trap_dispatch, which calls cpl3_resume. A software interrupt or syscall
 * would be the usual way, but on the dev host's nested KVM `int $0x80` at
 * CPL3 raises #UD, int3 is not emulated and after `syscall` the guest keeps
 * running at LSTAR with CPL 3. Exceptions from CPL3 are delivered properly
 * everywhere, and this costs one exception per cpl3_call.
 */
	.globl cpl3_call
cpl3_call:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	pushfq
	cli
	movq %rsp, %gs:CPU_OFFSET_KERNEL_RSP
	movq %gs:CPU_OFFSET_TSS, %rax
	movq %rsp, TSS_OFFSET_RSP0(%rax)
	pushq $(GDT_USER_DS | RPL3)
	pushq %rdx
	pushq $(RFLAGS_RESERVED1 | RFLAGS_IF)
	pushq $(GDT_USER_CS | RPL3)
	pushq $cpl3_entry
	xorl %eax, %eax
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	xorl %ebp, %ebp
	iretq

cpl3_entry:
	movq %rdi, %rax
	movq %rsi, %rdi
	call *%rax
	movq %rax, %rdi
	.globl cpl3_exit
cpl3_exit:
	ud2

/* void cpl3_resume(uint64_t result): called from the #UD handler at
 * cpl3_exit; abandons the trap frame and returns RESULT from cpl3_call. */
	.globl cpl3_resume
cpl3_resume:
	movq %rdi, %rax
	movq %gs:CPU_OFFSET_KERNEL_RSP, %rsp
	popfq
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret

	.section .note.GNU-stack, "", @progbits
