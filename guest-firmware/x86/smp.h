/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SMP bring-up (INIT/SIPI/SIPI to every listed AP at once) and the
 * primitives payloads use across CPUs.
 */
#ifndef TK_SMP_H
#define TK_SMP_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"
#include "cpu_tables.h"

/* Read by boot.S: APs find their index by LAPIC ID. */
extern uint32_t smp_apic_ids[MAX_CPUS];
extern uint32_t smp_cpu_count;

/*
 * Start every CPU in LIST except the caller (the BSP, which must be
 * LIST->apic_ids[0]) and wait for them to check in. CPUs that miss the
 * deadline are reported and left out. Returns the online count.
 */
unsigned int smp_start_aps(const struct cpu_list *list, uint64_t timeout_ms);

/* Called by an AP from ap_main: returns false if it came too late. */
bool smp_ap_check_in(struct cpu *cpu);

unsigned int smp_online_count(void);
/* The online CPU with number NR (0 = BSP). */
struct cpu *smp_cpu(unsigned int nr);

/*
 * Sleep (sti; hlt) until DONE(ARG) holds or the TSC passes DEADLINE (0:
 * none); false on timeout. Whoever makes DONE true must wake the sleeper
 * afterwards (smp_wake, smp_wake_all) or it is an interrupt that does. With
 * a deadline a periodic LAPIC timer bounds each sleep. Waiting CPUs leave
 * the host CPU to the ones they wait for: on the 2-core dev host spinning
 * vCPUs made AP start-up take 10-30 ms instead of a few. Kernel mode,
 * interrupts off on return.
 */
bool wait_halted(bool (*done)(void *arg), void *arg, uint64_t deadline);
void smp_wake(const struct cpu *cpu);
void smp_wake_all(void);

/* All online CPUs wait here for each other (halted; interrupts are taken
 * while waiting). */
void smp_barrier(void);

#endif
