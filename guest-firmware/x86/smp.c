/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "smp.h"

#include "arch/x86/platform.h"
#include "console.h"
#include "lapic.h"
#include "lib.h"
#include "timing.h"
#include "x86.h"

uint32_t smp_apic_ids[MAX_CPUS];
uint32_t smp_cpu_count;

static struct cpu *online[MAX_CPUS];
static unsigned int nr_online;

extern const uint8_t ap_trampoline_start[], ap_trampoline_end[];

bool smp_ap_check_in(struct cpu *cpu)
{
	uint32_t expected = CPU_STARTING;

	return __atomic_compare_exchange_n(&cpu->state, &expected, CPU_ONLINE,
					   false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

static unsigned int count_starting(unsigned int total)
{
	unsigned int n = 0;

	for (unsigned int i = 1; i < total; i++)
		n += READ_ONCE(cpus[i].state) == CPU_STARTING;
	return n;
}

unsigned int smp_start_aps(const struct cpu_list *list, uint64_t timeout_ms)
{
	unsigned int total = list->count;
	uint64_t deadline;

	memcpy(smp_apic_ids, list->apic_ids, total * sizeof(smp_apic_ids[0]));
	WRITE_ONCE(smp_cpu_count, total);
	memcpy((void *)(uintptr_t)X86_AP_TRAMPOLINE_GPA, ap_trampoline_start,
	       (size_t)(ap_trampoline_end - ap_trampoline_start));
	cpus[0].state = CPU_ONLINE;
	for (unsigned int i = 1; i < total; i++)
		cpus[i].state = CPU_STARTING;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	/*
	 * INIT, SIPI, SIPI to all APs without the historical 10 ms / 200 us
	 * delays: KVM and QEMU need none, and a second SIPI to a running AP
	 * is ignored.
	 */
	for (unsigned int i = 1; i < total; i++)
		lapic_send_init(list->apic_ids[i]);
	for (unsigned int i = 1; i < total; i++)
		lapic_send_sipi(list->apic_ids[i], X86_AP_TRAMPOLINE_GPA);
	for (unsigned int i = 1; i < total; i++)
		lapic_send_sipi(list->apic_ids[i], X86_AP_TRAMPOLINE_GPA);

	deadline = rdtsc() + ms_to_tsc(timeout_ms);
	while (count_starting(total) && rdtsc() < deadline)
		cpu_relax();

	nr_online = 0;
	for (unsigned int i = 0; i < total; i++) {
		uint32_t expected = CPU_STARTING;

		if (__atomic_compare_exchange_n(
			    &cpus[i].state, &expected, CPU_ABANDONED, false,
			    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			printk("cpu %u (apic %u) did not start within %lu ms",
			       i, list->apic_ids[i], timeout_ms);
			continue;
		}
		cpus[i].nr = nr_online;
		online[nr_online++] = &cpus[i];
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return nr_online;
}

unsigned int smp_online_count(void)
{
	return nr_online;
}

struct cpu *smp_cpu(unsigned int nr)
{
	return nr < nr_online ? online[nr] : NULL;
}

/* Sense-reversing barrier: the last arrival flips the generation. */
static volatile uint32_t barrier_arrived;
static volatile uint32_t barrier_generation;

void smp_barrier(void)
{
	uint32_t generation = READ_ONCE(barrier_generation);

	if (__atomic_add_fetch(&barrier_arrived, 1, __ATOMIC_ACQ_REL) ==
	    nr_online) {
		WRITE_ONCE(barrier_arrived, 0);
		__atomic_store_n(&barrier_generation, generation + 1,
				 __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&barrier_generation, __ATOMIC_ACQUIRE) ==
	       generation)
		cpu_relax();
}
