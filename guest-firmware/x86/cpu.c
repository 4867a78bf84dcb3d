/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Descriptor tables, per-CPU data and the CPL3 call. */
#include "cpu.h"

#include "lib.h"
#include "x86.h"

_Static_assert(__builtin_offsetof(struct cpu, self) == CPU_OFFSET_SELF,
	       "layout.h CPU_OFFSET_SELF");
_Static_assert(__builtin_offsetof(struct cpu, kernel_rsp) ==
		       CPU_OFFSET_KERNEL_RSP,
	       "layout.h CPU_OFFSET_KERNEL_RSP");
_Static_assert(__builtin_offsetof(struct cpu, tss) == CPU_OFFSET_TSS,
	       "layout.h CPU_OFFSET_TSS");
_Static_assert(__builtin_offsetof(struct tss_io, rsp) == TSS_OFFSET_RSP0,
	       "layout.h TSS_OFFSET_RSP0");
_Static_assert(__builtin_offsetof(struct tss_io, io_bitmap) == 104,
	       "64-bit TSS is 104 bytes");

/* isr.S */
extern const uint8_t isr_stubs[];
#define ISR_STUB_SIZE 16
uint64_t cpl3_call(uint64_t (*fn)(void *), void *arg, void *user_stack_top);

struct cpu cpus[MAX_CPUS];

/* Kernel stacks are used by boot.S before any C runs; user stacks only by
 * cpl3_call. */
uint8_t cpu_stacks[MAX_CPUS][KERNEL_STACK_SIZE] __attribute__((aligned(4096)));
static uint8_t user_stacks[MAX_CPUS][USER_STACK_SIZE]
	__attribute__((aligned(4096)));

struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_high;
	uint32_t reserved;
};

#define IDT_INTERRUPT_GATE 0x8e /* present, DPL 0, 64-bit interrupt gate */

static struct idt_gate idt[256] __attribute__((aligned(16)));

void idt_set_gate(unsigned int vector, void (*entry)(void), unsigned int dpl)
{
	uint64_t addr = (uint64_t)entry;

	idt[vector] = (struct idt_gate){
		.offset_low = (uint16_t)addr,
		.selector = GDT_KERNEL_CS,
		.ist = 0,
		.type_attr = (uint8_t)(IDT_INTERRUPT_GATE | (dpl << 5)),
		.offset_mid = (uint16_t)(addr >> 16),
		.offset_high = (uint32_t)(addr >> 32),
	};
}

#define GDT_CODE64_DPL0 0x00af9b000000ffffULL
#define GDT_DATA_DPL0 0x00cf93000000ffffULL
#define GDT_CODE32_DPL0 0x00cf9b000000ffffULL
#define GDT_DATA_DPL3 0x00cff3000000ffffULL
#define GDT_CODE64_DPL3 0x00affb000000ffffULL
#define GDT_TSS_AVAILABLE 0x89ULL /* present, 64-bit TSS (available) */

void cpu_init(struct cpu *cpu, unsigned int index, uint32_t apic_id)
{
	struct tss_io *tss = &cpu->tss_storage;
	uint64_t base = (uint64_t)tss;
	uint64_t limit = sizeof(*tss) - 1;
	struct descriptor_table_ptr gdtr = { sizeof(cpu->gdt) - 1,
					     (uint64_t)cpu->gdt };
	struct descriptor_table_ptr idtr = { sizeof(idt) - 1, (uint64_t)idt };

	cpu->self = cpu;
	cpu->tss = tss;
	cpu->index = index;
	cpu->apic_id = apic_id;

	tss->io_bitmap_offset = __builtin_offsetof(struct tss_io, io_bitmap);
	tss->io_bitmap[sizeof(tss->io_bitmap) - 1] = 0xff;

	cpu->gdt[0] = 0;
	cpu->gdt[GDT_KERNEL_CS / 8] = GDT_CODE64_DPL0;
	cpu->gdt[GDT_KERNEL_DS / 8] = GDT_DATA_DPL0;
	cpu->gdt[GDT_BOOT_CS32 / 8] = GDT_CODE32_DPL0;
	cpu->gdt[GDT_USER_DS / 8] = GDT_DATA_DPL3;
	cpu->gdt[GDT_USER_CS / 8] = GDT_CODE64_DPL3;
	cpu->gdt[GDT_TSS / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
				(GDT_TSS_AVAILABLE << 40) |
				((limit >> 16 & 0xf) << 48) |
				((base >> 24 & 0xff) << 56);
	cpu->gdt[GDT_TSS / 8 + 1] = base >> 32;

	/* Same selectors as the boot GDT: no segment reload needed. */
	lgdt(&gdtr);
	ltr(GDT_TSS);
	lidt(&idtr);
	wrmsr(MSR_GS_BASE, (uint64_t)cpu);
}

static void (*isr_stub(unsigned int vector))(void)
{
	return (void (*)(void))(isr_stubs + vector * ISR_STUB_SIZE);
}

/* What must work before idt_init: the end of run_at_cpl3 (#UD) and the
 * exceptions a broken boot most likely raises. */
void idt_init_early(void)
{
	static const uint8_t early[] = { 6, 8, 13, 14 };

	for (unsigned int i = 0; i < sizeof(early); i++)
		idt_set_gate(early[i], isr_stub(early[i]), 0);
}

/* Only the vectors in use get a gate; anything else raises #NP, which the
 * exception handler reports. */
void idt_init(void)
{
	for (unsigned int v = 0; v < EXCEPTION_VECTORS; v++)
		idt_set_gate(v, isr_stub(v), 0);
	for (unsigned int v = DEVICE_VECTOR_BASE;
	     v < DEVICE_VECTOR_BASE + DEVICE_VECTORS; v++)
		idt_set_gate(v, isr_stub(v), 0);
	for (unsigned int v = IPI_VECTOR_BASE; v < IPI_VECTOR_BASE + MAX_CPUS;
	     v++)
		idt_set_gate(v, isr_stub(v), 0);
	idt_set_gate(WAKE_VECTOR, isr_stub(WAKE_VECTOR), 0);
	idt_set_gate(SPURIOUS_VECTOR, isr_stub(SPURIOUS_VECTOR), 0);
}

uint64_t run_at_cpl3(uint64_t (*fn)(void *), void *arg)
{
	struct cpu *cpu = this_cpu();

	return cpl3_call(fn, arg, user_stacks[cpu->index] + USER_STACK_SIZE);
}

struct wait_args {
	bool (*done)(void *arg);
	void *arg;
	uint64_t deadline;
};

static uint64_t wait_at_cpl3(void *p)
{
	const struct wait_args *w = p;

	while (!w->done(w->arg)) {
		if (w->deadline && rdtsc() > w->deadline)
			return false;
		cpu_relax();
	}
	return true;
}

bool wait_until(bool (*done)(void *arg), void *arg, uint64_t deadline)
{
	struct wait_args w = { done, arg, deadline };

	return run_at_cpl3(wait_at_cpl3, &w);
}
