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

/* All online CPUs wait here for each other (kernel mode, spins). */
void smp_barrier(void);

#endif
