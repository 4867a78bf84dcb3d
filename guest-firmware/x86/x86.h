/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thin wrappers around x86 instructions the kernel needs. */
#ifndef TK_X86_H
#define TK_X86_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t value)
{
	__asm__ volatile("outb %0, %1" : : "a"(value), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t value)
{
	__asm__ volatile("outw %0, %1" : : "a"(value), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t value)
{
	__asm__ volatile("outl %0, %1" : : "a"(value), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t value;

	__asm__ volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
	return value;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t value;

	__asm__ volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
	return value;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t value)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((uint32_t)value),
			   "d"((uint32_t)(value >> 32))
			 : "memory");
}

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/* Only meaningful at CPL0: on the dev host CPL3 cpuid returns host values. */
static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

static inline void irq_disable(void)
{
	__asm__ volatile("cli" ::: "memory");
}

static inline void irq_enable(void)
{
	__asm__ volatile("sti" ::: "memory");
}

/* sti; hlt: the sti shadow makes "check, then sleep" race-free. */
static inline void irq_enable_and_halt(void)
{
	__asm__ volatile("sti; hlt" ::: "memory");
}

static inline uint64_t read_cr2(void)
{
	uint64_t value;

	__asm__ volatile("mov %%cr2, %0" : "=r"(value));
	return value;
}

struct __attribute__((packed)) descriptor_table_ptr {
	uint16_t limit;
	uint64_t base;
};

static inline void lgdt(const struct descriptor_table_ptr *ptr)
{
	__asm__ volatile("lgdt %0" : : "m"(*ptr) : "memory");
}

static inline void lidt(const struct descriptor_table_ptr *ptr)
{
	__asm__ volatile("lidt %0" : : "m"(*ptr) : "memory");
}

static inline void ltr(uint16_t selector)
{
	__asm__ volatile("ltr %0" : : "r"(selector) : "memory");
}

#endif
