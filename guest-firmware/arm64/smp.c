// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Secondary bring-up through PSCI CPU_ON, a sense-reversing barrier, and
 * PSCI for the end of the machine.
 */
#include "cpu.h"
#include "machine.h"

#define PSCI_SUCCESS 0

struct cpu cpus[MAX_CPUS];
uint8_t kstacks[MAX_CPUS][KSTACK_SIZE] __attribute__((aligned(16)));
static uint8_t ustacks[MAX_CPUS][USTACK_SIZE] __attribute__((aligned(16)));
static volatile uint32_t online = 1;
static volatile uint32_t barrier_count, barrier_sense;

uint64_t smccc_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	return machine.psci_smc ? psci_smc(fn, a1, a2, a3)
				: psci_hvc(fn, a1, a2, a3);
}

void machine_exit(bool ok)
{
	/* SYSTEM_OFF is hintvm's poweroff (status 0); a failure resets. */
	smccc_call(ok ? PSCI_SYSTEM_OFF : PSCI_SYSTEM_RESET, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}

void cpu_setup(unsigned int nr);
void cpu_setup(unsigned int nr)
{
	struct cpu *cpu = &cpus[nr];

	cpu->nr = nr;
	cpu->mpidr = read_sysreg(mpidr_el1) & 0xff00ffffffULL;
	cpu->user_sp = (uintptr_t)&ustacks[nr][USTACK_SIZE];
	write_sysreg(tpidr_el1, (uintptr_t)cpu);
}

unsigned int smp_online_count(void)
{
	return __atomic_load_n(&online, __ATOMIC_ACQUIRE);
}

/* Called by ap_main once the CPU can take part. */
void smp_check_in(void);
void smp_check_in(void)
{
	__atomic_add_fetch(&online, 1, __ATOMIC_ACQ_REL);
}

unsigned int smp_start_secondaries(uint64_t timeout_ms)
{
	extern char secondary_entry[];

	for (unsigned int i = 1; i < machine.nr_cpus; i++) {
		uint64_t deadline = now_ticks() + ms_to_ticks(timeout_ms);
		uint64_t r = smccc_call(PSCI_CPU_ON, machine.mpidr[i],
					(uintptr_t)secondary_entry, i);

		if (r != PSCI_SUCCESS) {
			printk("PSCI CPU_ON for cpu %u (mpidr 0x%lx) failed: %ld",
			       i, machine.mpidr[i], (int64_t)r);
			break;
		}
		/* One at a time: CPU numbers follow the tree's order. */
		while (smp_online_count() <= i && now_ticks() < deadline)
			cpu_relax();
		if (smp_online_count() <= i) {
			printk("cpu %u did not come up in %lu ms", i,
			       timeout_ms);
			break;
		}
	}
	return smp_online_count();
}

void smp_barrier(void)
{
	uint32_t sense = !__atomic_load_n(&barrier_sense, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&barrier_count, 1, __ATOMIC_ACQ_REL) ==
	    smp_online_count()) {
		__atomic_store_n(&barrier_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&barrier_sense, sense, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&barrier_sense, __ATOMIC_ACQUIRE) !=
		       sense)
			cpu_relax();
	}
}

/*
 * WFI with IRQs masked still wakes on a pending interrupt, and unmasking
 * right after takes it: no wake-up is lost between the check and the WFI.
 * The virtual timer, armed at DEADLINE, bounds the wait.
 */
bool wait_irq(bool (*done)(void *), void *arg, uint64_t deadline)
{
	bool ok;

	write_sysreg(cntv_cval_el0, deadline);
	write_sysreg(cntv_ctl_el0, 1);
	isb();
	for (;;) {
		irq_disable();
		ok = done(arg);
		if (ok || now_ticks() >= deadline)
			break;
		__asm__ volatile("wfi" ::: "memory");
		irq_enable();
		isb();
	}
	write_sysreg(cntv_ctl_el0, 0);
	return ok;
}
