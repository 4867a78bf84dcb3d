/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Exceptions and interrupt handlers (entered through isr.S). */
#ifndef TK_TRAP_H
#define TK_TRAP_H

#include <stdint.h>

/* Matches the push order in isr.S, lowest address first. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	uint64_t rdi, rsi, rdx, rcx, rax;
	uint64_t vector, error_code;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* Called with the vector, after which the LAPIC gets its EOI. */
typedef void (*irq_handler_fn)(unsigned int vector);

/* Handle external/IPI VECTOR (>= 32) with FN on every CPU. */
void irq_set_handler(unsigned int vector, irq_handler_fn fn);

void trap_dispatch(struct trap_frame *frame);

#endif
