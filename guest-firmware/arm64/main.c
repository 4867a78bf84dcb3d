// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Boot flow: the boot CPU turns on the MMU, reads the device tree, starts
 * the secondaries with PSCI CPU_ON, then every CPU runs the chosen payload;
 * the boot CPU prints the one RESULT line and ends the machine with PSCI
 * (SYSTEM_OFF when ok, SYSTEM_RESET when not).
 */
#include "cmdline.h"
#include "cpu.h"
#include "machine.h"
#include "payload.h"
#include "platform_defaults.h"

#define DEFAULT_TEST "hello"
#define CPU_START_TIMEOUT_MS 2000
#define EC_SHIFT 26

static const struct payload *selected;
static volatile uint32_t payload_go, payload_done;

void kmain(const void *dtb);
void ap_main(unsigned int nr);
void cpu_setup(unsigned int nr);
void smp_check_in(void);
uint64_t el0_fault(uint64_t esr, uint64_t far, uint64_t elr);
void kernel_fault(uint64_t esr, uint64_t elr, uint64_t far);
void bad_vector(uint64_t n);

uint64_t el0_fault(uint64_t esr, uint64_t far, uint64_t elr)
{
	struct cpu *cpu = this_cpu();

	cpu->fault_esr = esr;
	cpu->fault_far = far;
	cpu->faults++;
	return EL0_FAULTED;
}

void kernel_fault(uint64_t esr, uint64_t elr, uint64_t far)
{
	printk("kernel fault: esr=0x%lx (class 0x%lx) elr=0x%lx far=0x%lx", esr,
	       esr >> EC_SHIFT, elr, far);
	result_fail(selected ? selected->name : "boot", smp_online_count(),
		    "kernel-fault");
}

void bad_vector(uint64_t n)
{
	printk("unexpected exception vector %lu", n);
	kernel_fault(read_sysreg(esr_el1), read_sysreg(elr_el1),
		     read_sysreg(far_el1));
}

static void run_payload(struct cpu *cpu)
{
	while (!__atomic_load_n(&payload_go, __ATOMIC_ACQUIRE))
		cpu_relax();
	selected->run(cpu);
	__atomic_add_fetch(&payload_done, 1, __ATOMIC_ACQ_REL);
}

void ap_main(unsigned int nr)
{
	mmu_enable();
	cpu_setup(nr);
	if (!gic_cpu_init(cpus[nr].mpidr)) {
		printk("cpu %u: no redistributor for mpidr 0x%lx", nr,
		       cpus[nr].mpidr);
		return;
	}
	smp_check_in();
	run_payload(&cpus[nr]);
}

void kmain(const void *dtb)
{
	struct result result = { .len = 0 };
	const char *test;
	unsigned int nr_online;
	bool tree, ok;

	mmu_build_tables();
	mmu_enable();
	cpu_setup(0);
	tree = fdt_scan(dtb);
	if (machine.uart == UART_NONE) {
		machine.uart = UART_NS16550A; /* hintvm's, at least */
		machine.uart_base = ARM64_UART_GPA_DEFAULT;
	}
	if (!tree)
		printk("no device tree at %p: no command line, one CPU", dtb);
	if (!machine.nr_cpus) {
		machine.nr_cpus = 1;
		machine.mpidr[0] = cpus[0].mpidr;
	}
	if (machine.mpidr[0] != cpus[0].mpidr)
		printk("boot cpu mpidr 0x%lx is not the tree's first (0x%lx)",
		       cpus[0].mpidr, machine.mpidr[0]);
	cmdline_init(machine.bootargs);
	test = cmdline_get("test");
	if (!test)
		test = DEFAULT_TEST;
	selected = payload_find(test);

	if (!machine.gicd) {
		printk("the device tree has no arm,gic-v3 node; this kernel needs a GICv3 (QEMU: -M virt,gic-version=3)");
		result_fail(test, 1, "no-gicv3");
	}
	gic_dist_init();
	if (!gic_cpu_init(cpus[0].mpidr))
		result_fail(test, 1, "no-redistributor");
	nr_online = smp_start_secondaries(CPU_START_TIMEOUT_MS);
	printk("testkernel: test=%s cpus=%u/%u el=%lu", test, nr_online,
	       machine.nr_cpus, read_sysreg(CurrentEL) >> 2);
	if (machine.dropped)
		printk("%u cpus beyond the %u supported were ignored",
		       machine.dropped, MAX_CPUS);

	payload_setup(selected, nr_online);
	__atomic_store_n(&payload_go, 1, __ATOMIC_RELEASE);
	run_payload(&cpus[0]);
	while (__atomic_load_n(&payload_done, __ATOMIC_ACQUIRE) < nr_online)
		cpu_relax();

	ok = payload_report(selected, &result, nr_online, machine.nr_cpus);
	result_exit(selected, nr_online, ok, &result);
}
