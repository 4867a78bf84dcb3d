/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-CPU state, the EL0 switch, PSCI, timing, the GIC and the MMU. */
#ifndef TK_CPU_H
#define TK_CPU_H

#include "layout.h"
#include "arm64.h"

struct cpu {
	uint64_t saved_ksp; /* run_at_el0 (boot.S): must stay first */
	unsigned int nr; /* index: 0 is the boot CPU */
	uint64_t mpidr;
	uint64_t user_sp; /* top of this CPU's EL0 stack */
	/* The last EL0 fault (fault payload). */
	uint64_t fault_esr, fault_far;
	uint32_t faults;
};

_Static_assert(__builtin_offsetof(struct cpu, saved_ksp) == CPU_SAVED_KSP,
	       "boot.S knows where saved_ksp is");

extern struct cpu cpus[MAX_CPUS];

static inline struct cpu *this_cpu(void)
{
	return (struct cpu *)read_sysreg(tpidr_el1);
}

/* Value EL0 code returns when it faults (el0_fault in main.c). */
#define EL0_FAULTED ((uint64_t)-1)

uint64_t run_at_el0(uint64_t (*fn)(void *), void *arg, uint64_t sp);
static inline uint64_t run_user(uint64_t (*fn)(void *), void *arg)
{
	return run_at_el0(fn, arg, this_cpu()->user_sp);
}

/* psci.c */
uint64_t psci_hvc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
uint64_t psci_smc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
uint64_t smccc_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);

/* Time from the virtual counter (readable at EL0 too, see mmu.c). */
static inline uint64_t now_ticks(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}
static inline uint64_t ms_to_ticks(uint64_t ms)
{
	return read_sysreg(cntfrq_el0) / 1000 * ms;
}

/* mmu.c */
void mmu_build_tables(void);
void mmu_enable(void);

/* gic.c: GICv3, SGIs 0-15 as IPIs, the virtual timer for timeouts. */
#define INTID_VTIMER 27
void gic_dist_init(void);
bool gic_cpu_init(uint64_t mpidr);
void gic_send_sgi(uint64_t target_mpidr, unsigned int intid);
typedef void (*irq_handler_t)(unsigned int intid);
void irq_set_handler(unsigned int intid, irq_handler_t handler);

static inline void irq_enable(void)
{
	__asm__ volatile("msr daifclr, #2" ::: "memory");
}
static inline void irq_disable(void)
{
	__asm__ volatile("msr daifset, #2" ::: "memory");
}

/* smp.c */
unsigned int smp_start_secondaries(uint64_t timeout_ms);
unsigned int smp_online_count(void);
void smp_barrier(void);
/* Wait with interrupts on (WFI) until DONE(ARG) or DEADLINE (ticks). */
bool wait_irq(bool (*done)(void *), void *arg, uint64_t deadline);

#endif
