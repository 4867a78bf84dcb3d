/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the shared payloads (common/payload_*.c) need from arm64. */
#ifndef TK_PAYLOAD_ARCH_H
#define TK_PAYLOAD_ARCH_H

#include "arm64.h"
#include "cpu.h"
#include "lib.h"
#include "machine.h"

/* hello's line, printed at EL0 (run_user is in cpu.h). */
static inline void hello_print(const struct cpu *cpu)
{
	printk("hello from cpu %u mpidr 0x%lx at EL0", cpu->nr, cpu->mpidr);
}

/* The SGI number is the sender's index, so the receiver knows who sent it. */
static inline unsigned int ipi_irq(unsigned int sender)
{
	return sender;
}
static inline unsigned int ipi_sender(unsigned int intid)
{
	return intid;
}
static inline void ipi_send(unsigned int target, unsigned int intid)
{
	gic_send_sgi(cpus[target].mpidr, intid);
}

/* WFI until DONE(ARG) or TIMEOUT_MS (virtual timer); false on timeout. */
static inline bool wait_irq_ms(bool (*done)(void *), void *arg,
			       uint64_t timeout_ms)
{
	return wait_irq(done, arg, now_ticks() + ms_to_ticks(timeout_ms));
}

/*
 * The scheduling-hint channel's registers: the page the device tree names,
 * device-mapped, in kernel mode. Without one (another VMM), reads give 0.
 */
static inline uint32_t hint_read(unsigned int reg)
{
	return machine.hint ? mmio_read32(machine.hint + reg) : 0;
}
static inline void hint_write(unsigned int reg, uint32_t value)
{
	if (machine.hint)
		mmio_write32(machine.hint + reg, value);
}

#endif
