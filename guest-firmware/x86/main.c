/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Boot flow: the BSP sets itself up, reads the command line and the CPU
 * list, starts the APs, then every CPU runs the chosen payload; the BSP
 * prints the one RESULT line and ends the machine.
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "cpu.h"
#include "cpu_tables.h"
#include "lapic.h"
#include "lib.h"
#include "payload.h"
#include "pvh.h"
#include "smp.h"
#include "timing.h"
#include "x86.h"

_Static_assert(IPI_VECTOR_BASE + MAX_CPUS <= SPURIOUS_VECTOR,
	       "one IPI vector per CPU below the spurious vector");

#define DEFAULT_TEST "hello"
#define AP_START_TIMEOUT_MS 2000

static const struct payload *selected;
static volatile uint32_t payload_go;
static volatile uint32_t payload_done;

void kmain(const struct hvm_start_info *start_info);
void ap_main(unsigned int index);

static bool payload_started(void *arg)
{
	return __atomic_load_n(&payload_go, __ATOMIC_ACQUIRE);
}

static bool payload_finished(void *arg)
{
	return __atomic_load_n(&payload_done, __ATOMIC_ACQUIRE) ==
	       smp_online_count();
}

static void run_payload(struct cpu *cpu)
{
	wait_halted(payload_started, NULL, 0);
	selected->run(cpu);
	if (__atomic_add_fetch(&payload_done, 1, __ATOMIC_ACQ_REL) ==
		    smp_online_count() &&
	    cpu->nr != 0)
		smp_wake(&cpus[0]);
}

void ap_main(unsigned int index)
{
	struct cpu *cpu = &cpus[index];

	cpu_init(cpu, index, smp_apic_ids[index]);
	lapic_enable();
	if (!smp_ap_check_in(cpu))
		return; /* too late: the BSP already gave up on us */
	run_payload(cpu);
}

/* The BSP is listed first (its stack and struct cpu are slot 0). */
static void discover_cpus(uint64_t rsdp_gpa, uint32_t bsp_apic_id,
			  struct cpu_list *list)
{
	unsigned int bsp_slot = 0;

	if (acpi_find_cpus(rsdp_gpa, list) && mptable_find_cpus(list)) {
		list->count = 0;
		list->source = "none";
	}
	while (bsp_slot < list->count &&
	       list->apic_ids[bsp_slot] != bsp_apic_id)
		bsp_slot++;
	if (bsp_slot == list->count) {
		if (list->count == MAX_CPUS) {
			list->count--;
			list->dropped++;
		}
		list->apic_ids[list->count++] = bsp_apic_id;
	}
	list->apic_ids[bsp_slot] = list->apic_ids[0];
	list->apic_ids[0] = bsp_apic_id;
}

struct boot_work {
	const struct hvm_start_info *start_info;
	uint32_t bsp_apic_id;
	struct cpu_list *list;
};

/*
 * The BSP's boot work that is plain memory access (IDT gates, command line,
 * the firmware table scans of up to 128 KiB) runs at CPL3: kernel mode is
 * emulated at ~1 MIPS on the dev host, where the RSDP scan alone took
 * ~50 ms at CPL0.
 */
static uint64_t boot_at_cpl3(void *arg)
{
	const struct boot_work *w = arg;
	const struct hvm_start_info *si = w->start_info;

	idt_init();
	if (si && si->magic == HVM_START_MAGIC) {
		cmdline_init(
			si->cmdline_paddr &&
					si->cmdline_paddr < X86_MMIO_HOLE_START
				? (const char *)(uintptr_t)si->cmdline_paddr
				: NULL);
		discover_cpus(si->rsdp_paddr, w->bsp_apic_id, w->list);
	} else {
		printk("no PVH start info (magic 0x%x): no command line",
		       si ? si->magic : 0);
		discover_cpus(0, w->bsp_apic_id, w->list);
	}
	return 0;
}

void kmain(const struct hvm_start_info *start_info)
{
	static struct cpu_list list;
	struct result result = { .len = 0 };
	struct boot_work work = { start_info, 0, &list };
	const char *test;
	unsigned int nr_online;
	bool ok;

	idt_init_early();
	work.bsp_apic_id = lapic_id();
	cpu_init(&cpus[0], 0, work.bsp_apic_id);
	lapic_enable();
	timing_init();
	run_at_cpl3(boot_at_cpl3, &work);

	test = cmdline_get("test");
	if (!test)
		test = DEFAULT_TEST;
	selected = payload_find(test);

	nr_online = smp_start_aps(&list, AP_START_TIMEOUT_MS);
	printk("testkernel: test=%s cpus=%u/%u (%s)", test, nr_online,
	       list.count, list.source);
	if (list.dropped)
		printk("%u cpus beyond the %u supported were ignored",
		       list.dropped, MAX_CPUS);

	payload_setup(selected, nr_online);
	__atomic_store_n(&payload_go, 1, __ATOMIC_RELEASE);
	if (nr_online > 1)
		smp_wake_all();
	run_payload(&cpus[0]);
	wait_halted(payload_finished, NULL, 0);

	ok = payload_report(selected, &result, nr_online, list.count);
	/* The claims are about every CPU the machine has. */
	if (list.dropped) {
		result_add(&result, "ignored", "%u", list.dropped);
		ok = false;
	}
	result_exit(selected, nr_online, ok, &result);
}
