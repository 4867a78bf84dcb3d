// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Boot flow: the boot CPU turns on the MMU, reads the device tree, starts
 * the secondaries with PSCI CPU_ON, then every CPU runs the chosen payload;
 * the boot CPU prints the one RESULT line and ends the machine with PSCI
 * (SYSTEM_OFF when ok, SYSTEM_RESET when not).
 */
#include "console.h"
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

/* The value of KEY=... in the command line, copied to OUT. */
static bool cmdline_get(const char *key, char *out, size_t size)
{
	const char *p = machine.bootargs;
	size_t klen = strlen(key);

	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			size_t n = 0;

			p += klen + 1;
			while (p[n] && p[n] != ' ' && n + 1 < size) {
				out[n] = p[n];
				n++;
			}
			out[n] = '\0';
			return true;
		}
		while (*p && *p != ' ')
			p++;
	}
	return false;
}

bool cmdline_u64(const char *key, uint64_t def, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	char buf[24];
	uint64_t v = 0;

	if (!cmdline_get(key, buf, sizeof(buf))) {
		*out = def;
		return true;
	}
	if (!buf[0])
		goto bad;
	for (const char *c = buf; *c; c++) {
		if (*c < '0' || *c > '9' ||
		    v > (max - (uint64_t)(*c - '0')) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	if (v < min || v > max)
		goto bad;
	*out = v;
	return true;
bad:
	printk("%s=%s is not a number from %lu to %lu", key, buf, min, max);
	return false;
}

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
	printk("RESULT test=%s cpus=%u ok=0 error=kernel-fault",
	       selected ? selected->name : "boot", smp_online_count());
	machine_exit(false);
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

static const struct payload *find_payload(const char *name)
{
	for (unsigned int i = 0; payloads[i]; i++) {
		if (!strcmp(payloads[i]->name, name))
			return payloads[i];
	}
	return NULL;
}

static void __attribute__((noreturn)) unknown_test(const char *name)
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

void kmain(const void *dtb)
{
	struct result result = { .len = 0 };
	char test[32];
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
	if (!cmdline_get("test", test, sizeof(test)))
		snformat(test, sizeof(test), "%s", DEFAULT_TEST);
	selected = find_payload(test);
	if (!selected)
		unknown_test(test);

	if (!machine.gicd) {
		printk("the device tree has no arm,gic-v3 node; this kernel needs a GICv3 (QEMU: -M virt,gic-version=3)");
		printk("RESULT test=%s cpus=1 ok=0 error=no-gicv3", test);
		machine_exit(false);
	}
	gic_dist_init();
	if (!gic_cpu_init(cpus[0].mpidr)) {
		printk("RESULT test=%s cpus=1 ok=0 error=no-redistributor",
		       test);
		machine_exit(false);
	}
	nr_online = smp_start_secondaries(CPU_START_TIMEOUT_MS);
	printk("testkernel: test=%s cpus=%u/%u el=%lu", test, nr_online,
	       machine.nr_cpus, read_sysreg(CurrentEL) >> 2);
	if (machine.dropped)
		printk("%u cpus beyond the %u supported were ignored",
		       machine.dropped, MAX_CPUS);

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
	if (nr_online != machine.nr_cpus) {
		result_add(&result, "missing", "%u",
			   machine.nr_cpus - nr_online);
		ok = false;
	}
	printk("RESULT test=%s cpus=%u ok=%d%s", test, nr_online, ok,
	       result.fields);
	machine_exit(ok);
}
