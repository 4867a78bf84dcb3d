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
#include "power.h"
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

void result_add(struct result *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (r->len >= sizeof(r->fields) - 1)
		return;
	r->len += snformat(r->fields + r->len, sizeof(r->fields) - r->len,
			   " %s=", key);
	if (r->len >= sizeof(r->fields) - 1)
		return;
	va_start(ap, fmt);
	r->len +=
		format(r->fields + r->len, sizeof(r->fields) - r->len, fmt, ap);
	va_end(ap);
}

static void run_payload(struct cpu *cpu)
{
	while (!__atomic_load_n(&payload_go, __ATOMIC_ACQUIRE))
		cpu_relax();
	selected->run(cpu);
	__atomic_add_fetch(&payload_done, 1, __ATOMIC_ACQ_REL);
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

static const struct payload *find_payload(const char *name)
{
	for (unsigned int i = 0; payloads[i]; i++) {
		if (!strcmp(payloads[i]->name, name))
			return payloads[i];
	}
	return NULL;
}

static __attribute__((noreturn)) void unknown_test(const char *name)
{
	char known[128];
	size_t len = 0;

	known[0] = '\0';
	for (unsigned int i = 0; payloads[i]; i++)
		len += snformat(known + len, sizeof(known) - len, " %s",
				payloads[i]->name);
	printk("unknown test '%s'; known tests:%s", name, known);
	printk("RESULT test=%s cpus=1 ok=0 error=unknown-test", name);
	machine_exit(false);
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
		if (list->count == MAX_CPUS)
			list->count--;
		list->apic_ids[list->count++] = bsp_apic_id;
	}
	list->apic_ids[bsp_slot] = list->apic_ids[0];
	list->apic_ids[0] = bsp_apic_id;
}

void kmain(const struct hvm_start_info *start_info)
{
	static struct cpu_list list;
	struct result result = { .len = 0 };
	const char *test;
	uint32_t bsp_apic_id;
	unsigned int nr_online;
	bool ok;

	idt_init();
	bsp_apic_id = lapic_id();
	cpu_init(&cpus[0], 0, bsp_apic_id);
	lapic_enable();
	timing_init();

	if (start_info && start_info->magic == HVM_START_MAGIC) {
		cmdline_init(start_info->cmdline_paddr);
		discover_cpus(start_info->rsdp_paddr, bsp_apic_id, &list);
	} else {
		printk("no PVH start info (magic 0x%x): no command line",
		       start_info ? start_info->magic : 0);
		discover_cpus(0, bsp_apic_id, &list);
	}
	test = cmdline_get("test");
	if (!test)
		test = DEFAULT_TEST;
	selected = find_payload(test);
	if (!selected)
		unknown_test(test);

	nr_online = smp_start_aps(&list, AP_START_TIMEOUT_MS);
	printk("testkernel: test=%s cpus=%u/%u (%s)", test, nr_online,
	       list.count, list.source);
	if (list.dropped)
		printk("%u cpus beyond the %u supported were ignored",
		       list.dropped, MAX_CPUS);

	if (selected->setup && !selected->setup()) {
		printk("RESULT test=%s cpus=%u ok=0 error=bad-parameter", test,
		       nr_online);
		machine_exit(false);
	}
	__atomic_store_n(&payload_go, 1, __ATOMIC_RELEASE);
	run_payload(&cpus[0]);
	while (__atomic_load_n(&payload_done, __ATOMIC_ACQUIRE) < nr_online)
		cpu_relax();

	ok = selected->report(&result);
	if (nr_online != list.count) {
		result_add(&result, "missing", "%u", list.count - nr_online);
		ok = false;
	}
	printk("RESULT test=%s cpus=%u ok=%d%s", test, nr_online, ok,
	       result.fields);
	machine_exit(ok);
}
