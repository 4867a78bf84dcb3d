/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entry points, the exception vectors and the EL1 <-> EL0 switch.
 *
 * The Image header makes this a Linux arm64 Image, so hintvm and QEMU
 * (-kernel) load it at RAM base + text_offset and enter it at EL1 (or EL2,
 * which we leave at once) with x0 = the device tree. Secondaries come in
 * through PSCI CPU_ON at secondary_entry with x0 = their index.
 */
#include "layout.h"

#define CURRENTEL_EL2 (2 << 2)
#define HCR_EL2_RW (1 << 31)
#define SPSR_EL1H_MASKED 0x3c5

	.section .text.head, "ax"
	.globl _start
_start:
	b	primary_entry		/* code0 */
	.long	0			/* code1 */
	.quad	0x80000			/* text_offset: QEMU would move 0 up by 2 MiB */
	.quad	_image_size		/* image_size, BSS included */
	.quad	0x2			/* flags: little-endian, 4K pages */
	.quad	0, 0, 0
	.ascii	"ARM\x64"		/* magic */
	.long	0

/* At EL2 (QEMU -M virt,virtualization=on): run the kernel at EL1 instead. */
.macro leave_el2
	mrs	x9, CurrentEL
	cmp	x9, #CURRENTEL_EL2
	b.ne	1f
	mov	x9, #HCR_EL2_RW
	msr	hcr_el2, x9
	mov	x9, #3			/* EL1 may use both counters/timers */
	msr	cnthctl_el2, x9
	msr	cntvoff_el2, xzr
	mov	x9, #SPSR_EL1H_MASKED
	msr	spsr_el2, x9
	adr	x9, 1f
	msr	elr_el2, x9
	eret
1:
.endm

primary_entry:
	mov	x19, x0
	leave_el2
	ldr	x1, =kstacks + KSTACK_SIZE
	mov	sp, x1
	ldr	x1, =_start_bss
	ldr	x2, =_end_bss
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:	mov	x0, x19
	bl	kmain
	b	park

	.globl secondary_entry
secondary_entry:
	mov	x19, x0
	leave_el2
	ldr	x1, =kstacks
	mov	x2, #KSTACK_SIZE
	madd	x1, x19, x2, x1
	add	sp, x1, x2
	mov	x0, x19
	bl	ap_main
park:
	wfi
	b	park

/* PSCI through the conduit the device tree names. */
	.text
	.globl psci_hvc
psci_hvc:
	hvc	#0
	ret
	.globl psci_smc
psci_smc:
	smc	#0
	ret

/*
 * uint64_t run_at_el0(uint64_t (*fn)(void *), void *arg, uint64_t sp):
 * call FN(ARG) at EL0 on stack SP, with interrupts masked there. It comes
 * back through an SVC (its return value) or a fault (el0_fault()'s value).
 */
	.globl run_at_el0
run_at_el0:
	stp	x29, x30, [sp, #-96]!
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	mrs	x4, tpidr_el1
	mov	x3, sp
	str	x3, [x4, #CPU_SAVED_KSP]
	msr	sp_el0, x2
	msr	elr_el1, x0
	mov	x5, #0x3c0		/* EL0t, D A I F masked */
	msr	spsr_el1, x5
	mov	x0, x1
	adr	x30, el0_return
	eret
el0_return:				/* at EL0 */
	svc	#0

el0_back:				/* at EL1, x0 = the value */
	mrs	x4, tpidr_el1
	ldr	x3, [x4, #CPU_SAVED_KSP]
	mov	sp, x3
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	x29, x30, [sp], #96
	ret

el0_sync:
	mrs	x9, esr_el1
	lsr	x10, x9, #26
	cmp	x10, #0x15		/* SVC from AArch64 */
	b.eq	el0_back
	mov	x0, x9
	mrs	x1, far_el1
	mrs	x2, elr_el1
	bl	el0_fault
	b	el0_back

el1_sync:
	mrs	x0, esr_el1
	mrs	x1, elr_el1
	mrs	x2, far_el1
	bl	kernel_fault
	b	park

el1_irq:
	sub	sp, sp, #176
	stp	x0, x1, [sp, #0]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x29, [sp, #144]
	str	x30, [sp, #160]
	bl	irq_handle
	ldp	x0, x1, [sp, #0]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x10, x11, [sp, #80]
	ldp	x12, x13, [sp, #96]
	ldp	x14, x15, [sp, #112]
	ldp	x16, x17, [sp, #128]
	ldp	x18, x29, [sp, #144]
	ldr	x30, [sp, #160]
	add	sp, sp, #176
	eret

.macro ventry target
	.balign	0x80
	b	\target
.endm
.macro vbad n
	.balign	0x80
	mov	x0, #\n
	bl	bad_vector
	b	park
.endm

	.balign	0x800
	.globl vectors
vectors:
	vbad	0			/* current EL, SP0 */
	vbad	1
	vbad	2
	vbad	3
	ventry	el1_sync		/* current EL, SPx */
	ventry	el1_irq
	vbad	6
	vbad	7
	ventry	el0_sync		/* lower EL, AArch64 */
	vbad	9
	vbad	10
	vbad	11
	vbad	12			/* lower EL, AArch32 */
	vbad	13
	vbad	14
	vbad	15
