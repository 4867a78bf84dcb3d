/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-CPU state. Each CPU's GS base points at its struct cpu, so this_cpu()
 * is one load; payload code at CPL3 may call it too (all pages are user
 * accessible and nothing at CPL3 reloads GS).
 */
#ifndef TK_CPU_H
#define TK_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"

/* 64-bit TSS followed by its I/O permission bitmap. */
#define IO_BITMAP_PORTS 0x1000 /* ports 0..0xfff: COM1, debug exit, ACPI PM */
struct __attribute__((packed)) tss_io {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t io_bitmap_offset;
	/* All zero: CPL3 may use every port listed (the dev host ignores
	 * IOPL), plus the 0xff terminator byte the CPU requires. */
	uint8_t io_bitmap[IO_BITMAP_PORTS / 8 + 1];
};

enum cpu_state {
	CPU_ABSENT = 0,
	CPU_STARTING, /* SIPI sent */
	CPU_ONLINE, /* checked in; runs the payload */
	CPU_ABANDONED, /* did not check in before the deadline */
};

struct cpu {
	struct cpu *self; /* CPU_OFFSET_SELF */
	uint64_t kernel_rsp; /* CPU_OFFSET_KERNEL_RSP: parked by cpl3_call */
	struct tss_io *tss; /* CPU_OFFSET_TSS */
	unsigned int index; /* slot in smp_apic_ids[] and the stack arrays */
	unsigned int nr; /* 0..online-1 among online CPUs: payloads use this */
	uint32_t apic_id;
	volatile uint32_t state; /* enum cpu_state */
	uint64_t gdt[GDT_ENTRIES];
	struct tss_io tss_storage __attribute__((aligned(16)));
};

extern struct cpu cpus[MAX_CPUS];

static inline struct cpu *this_cpu(void)
{
	struct cpu *cpu;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(cpu));
	return cpu;
}

/* GDT, TSS, IDT and GS base of the calling CPU. */
void cpu_init(struct cpu *cpu, unsigned int index, uint32_t apic_id);
/* The shared IDT: the BSP fills the gates run_at_cpl3 needs, then the rest
 * (idt_init may run at CPL3: it only writes memory). */
void idt_init_early(void);
void idt_init(void);
void idt_set_gate(unsigned int vector, void (*entry)(void), unsigned int dpl);

/* Run FN(ARG) at CPL3 on this CPU's user stack; returns FN's result.
 * Interrupts are enabled while FN runs. */
uint64_t run_at_cpl3(uint64_t (*fn)(void *), void *arg);

/*
 * Spin at CPL3 until DONE(ARG) or until the TSC passes DEADLINE (0: none);
 * returns false on timeout. For payloads that want a busy wait: at CPL3
 * `pause` never exits, whereas a kernel-mode spin on the dev host emulates
 * every iteration. Interrupts are enabled while waiting. (The framework's
 * own waits halt instead, see wait_halted in smp.h.)
 */
bool wait_until(bool (*done)(void *arg), void *arg, uint64_t deadline);

#endif
