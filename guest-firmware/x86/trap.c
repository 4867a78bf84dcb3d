/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "trap.h"

#include "console.h"
#include "cpu.h"
#include "lapic.h"
#include "layout.h"
#include "x86.h"

static irq_handler_fn irq_handlers[256];

void irq_set_handler(unsigned int vector, irq_handler_fn fn)
{
	if (vector >= EXCEPTION_VECTORS && vector < ARRAY_SIZE(irq_handlers))
		irq_handlers[vector] = fn;
}

static const char *const exception_names[EXCEPTION_VECTORS] = {
	[0] = "#DE",  [1] = "#DB",  [2] = "NMI",  [3] = "#BP",	[4] = "#OF",
	[5] = "#BR",  [6] = "#UD",  [7] = "#NM",  [8] = "#DF",	[10] = "#TS",
	[11] = "#NP", [12] = "#SS", [13] = "#GP", [14] = "#PF", [16] = "#MF",
	[17] = "#AC", [18] = "#MC", [19] = "#XM", [20] = "#VE", [21] = "#CP",
};

static void report_exception(const struct trap_frame *f)
{
	const char *name = exception_names[f->vector];

	printk("EXCEPTION %s vector=%lu error=0x%lx rip=0x%lx cs=0x%lx "
	       "cr2=0x%lx cpu=%u",
	       name ? name : "?", f->vector, f->error_code, f->rip, f->cs,
	       read_cr2(), this_cpu()->index);
	machine_exit(false);
}

/* isr.S: the end of a run_at_cpl3 call */
extern const uint8_t cpl3_exit[];
__attribute__((noreturn)) void cpl3_resume(uint64_t result);

#define VECTOR_UD 6

void trap_dispatch(struct trap_frame *frame)
{
	unsigned int vector = (unsigned int)frame->vector;

	if (vector == VECTOR_UD && (frame->cs & 3) == RPL3 &&
	    frame->rip == (uint64_t)cpl3_exit)
		cpl3_resume(frame->rdi);
	if (vector < EXCEPTION_VECTORS)
		report_exception(frame);
	if (vector == SPURIOUS_VECTOR)
		return; /* no EOI for spurious interrupts */
	if (vector < ARRAY_SIZE(irq_handlers) && irq_handlers[vector])
		irq_handlers[vector](vector);
	lapic_eoi();
}
