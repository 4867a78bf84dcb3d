/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the shared payloads (common/payload_*.c) need from x86. */
#ifndef TK_PAYLOAD_ARCH_H
#define TK_PAYLOAD_ARCH_H

#include "arch/x86/platform.h"
#include "cpu.h"
#include "lapic.h"
#include "layout.h"
#include "lib.h"
#include "smp.h"
#include "timing.h"
#include "trap.h"
#include "x86.h"

/* Runs FN(ARG) at CPL3 (kernel mode is emulated at ~1 MIPS here). */
static inline uint64_t run_user(uint64_t (*fn)(void *), void *arg)
{
	return run_at_cpl3(fn, arg);
}

/* hello's line, printed at CPL3. */
static inline void hello_print(const struct cpu *cpu)
{
	printk("hello from cpu %u apic %u", cpu->nr, cpu->apic_id);
}

/* Each sender has its own vector, so the receiver knows who sent it. */
static inline unsigned int ipi_irq(unsigned int sender)
{
	return IPI_VECTOR_BASE + sender;
}
static inline unsigned int ipi_sender(unsigned int vector)
{
	return vector - IPI_VECTOR_BASE;
}
static inline void ipi_send(unsigned int target, unsigned int vector)
{
	lapic_send_ipi(smp_cpu(target)->apic_id, (uint8_t)vector);
}

/* Halt until DONE(ARG) or TIMEOUT_MS; false on timeout. */
static inline bool wait_irq_ms(bool (*done)(void *), void *arg,
			       uint64_t timeout_ms)
{
	return wait_halted(done, arg, rdtsc() + ms_to_tsc(timeout_ms));
}

/* The scheduling-hint channel's registers: port I/O, at CPL0. */
static inline uint32_t hint_read(unsigned int reg)
{
	return inl((uint16_t)(X86_HINT_PORT + reg));
}
static inline void hint_write(unsigned int reg, uint32_t value)
{
	outl((uint16_t)(X86_HINT_PORT + reg), value);
}

#endif
