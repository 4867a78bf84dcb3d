/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "smp.h"

#include "arch/x86/platform.h"
#include "console.h"
#include "lapic.h"
#include "lib.h"
#include "timing.h"
#include "x86.h"

/* Deadline checks while halted: ~10 ms at KVM's and QEMU's 1 GHz APIC bus. */
#define WAIT_TIMER_COUNT 10000000

uint32_t smp_apic_ids[MAX_CPUS];
uint32_t smp_cpu_count;

static struct cpu *online[MAX_CPUS];
static unsigned int nr_online;

extern const uint8_t ap_trampoline_start[], ap_trampoline_end[];

bool wait_halted(bool (*done)(void *arg), void *arg, uint64_t deadline)
{
	bool ok = true;

	irq_disable();
	if (deadline)
		lapic_timer_periodic(WAKE_VECTOR, WAIT_TIMER_COUNT);
	while (!done(arg)) {
		if (deadline && rdtsc() > deadline) {
			ok = false;
			break;
		}
		irq_enable_and_halt();
		irq_disable();
	}
	if (deadline)
		lapic_timer_stop();
	return ok;
}

void smp_wake(const struct cpu *cpu)
{
	lapic_send_ipi(cpu->apic_id, WAKE_VECTOR);
}

void smp_wake_all(void)
{
	lapic_send_ipi_all_but_self(WAKE_VECTOR);
}

bool smp_ap_check_in(struct cpu *cpu)
{
	uint32_t expected = CPU_STARTING;

	if (!__atomic_compare_exchange_n(&cpu->state, &expected, CPU_ONLINE,
					 false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return false;
	smp_wake(&cpus[0]);
	return true;
}

static bool none_starting(void *arg)
{
	unsigned int total = *(const unsigned int *)arg;

	for (unsigned int i = 1; i < total; i++) {
		if (READ_ONCE(cpus[i].state) == CPU_STARTING)
			return false;
	}
	return true;
}

unsigned int smp_start_aps(const struct cpu_list *list, uint64_t timeout_ms)
{
	unsigned int total = list->count;

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

	wait_halted(none_starting, &total, rdtsc() + ms_to_tsc(timeout_ms));

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

static bool generation_passed(void *arg)
{
	uint32_t generation = *(const uint32_t *)arg;

	return __atomic_load_n(&barrier_generation, __ATOMIC_ACQUIRE) !=
	       generation;
}

void smp_barrier(void)
{
	uint32_t generation = READ_ONCE(barrier_generation);

	if (__atomic_add_fetch(&barrier_arrived, 1, __ATOMIC_ACQ_REL) ==
	    nr_online) {
		WRITE_ONCE(barrier_arrived, 0);
		__atomic_store_n(&barrier_generation, generation + 1,
				 __ATOMIC_RELEASE);
		if (nr_online > 1)
			smp_wake_all();
		return;
	}
	wait_halted(generation_passed, &generation, 0);
}
