/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lapic.h"

#include "arch/x86/platform.h"
#include "layout.h"
#include "x86.h"

#define LAPIC_EOI 0xb0
#define LAPIC_SVR 0xf0
#define LAPIC_SVR_ENABLE 0x100
#define LAPIC_LVT_LINT0 0x350
#define LVT_MASKED 0x10000
#define LAPIC_ICR_LOW 0x300
#define LAPIC_ICR_HIGH 0x310
#define ICR_DELIVERY_FIXED 0x000
#define ICR_DELIVERY_INIT 0x500
#define ICR_DELIVERY_STARTUP 0x600
#define ICR_LEVEL_ASSERT 0x4000
#define ICR_SEND_PENDING 0x1000
#define ICR_ALL_BUT_SELF 0xc0000
#define LAPIC_LVT_TIMER 0x320
#define LVT_TIMER_PERIODIC 0x20000
#define LAPIC_TIMER_INITIAL 0x380
#define LAPIC_TIMER_DIVIDE 0x3e0
#define TIMER_DIVIDE_BY_1 0xb

static inline uint32_t lapic_read(uint32_t reg)
{
	return *(volatile uint32_t *)(uintptr_t)(X86_LAPIC_GPA + reg);
}

static inline void lapic_write(uint32_t reg, uint32_t value)
{
	*(volatile uint32_t *)(uintptr_t)(X86_LAPIC_GPA + reg) = value;
}

uint32_t lapic_id(void)
{
	return lapic_read(LAPIC_ID) >> 24;
}

void lapic_enable(void)
{
	lapic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | SPURIOUS_VECTOR);
	/*
	 * The 8259 PIC reaches the BSP through LINT0 (ExtINT). Under QEMU -M
	 * pc, SeaBIOS leaves it on vector 8 with the PIT tick enabled, which
	 * arrived as a bogus #DF as soon as interrupts were on. Nothing here
	 * uses it: cut it off.
	 */
	lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
}

void lapic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

/*
 * Wait for the previous IPI to leave before reusing the ICR. Under KVM the
 * delivery status always reads idle (one read), real xAPICs need it.
 */
static void lapic_send(uint32_t apic_id, uint32_t command)
{
	while (lapic_read(LAPIC_ICR_LOW) & ICR_SEND_PENDING)
		cpu_relax();
	lapic_write(LAPIC_ICR_HIGH, apic_id << 24);
	lapic_write(LAPIC_ICR_LOW, command);
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
	lapic_send(apic_id, ICR_DELIVERY_FIXED | ICR_LEVEL_ASSERT | vector);
}

void lapic_send_ipi_all_but_self(uint8_t vector)
{
	lapic_send(0, ICR_DELIVERY_FIXED | ICR_LEVEL_ASSERT | ICR_ALL_BUT_SELF |
			      vector);
}

void lapic_send_init(uint32_t apic_id)
{
	lapic_send(apic_id, ICR_DELIVERY_INIT | ICR_LEVEL_ASSERT);
}

void lapic_send_sipi(uint32_t apic_id, uint32_t start_gpa)
{
	lapic_send(apic_id,
		   ICR_DELIVERY_STARTUP | ICR_LEVEL_ASSERT | (start_gpa >> 12));
}

void lapic_timer_periodic(uint8_t vector, uint32_t count)
{
	lapic_write(LAPIC_TIMER_DIVIDE, TIMER_DIVIDE_BY_1);
	lapic_write(LAPIC_LVT_TIMER, LVT_TIMER_PERIODIC | vector);
	lapic_write(LAPIC_TIMER_INITIAL, count);
}

void lapic_timer_stop(void)
{
	lapic_write(LAPIC_TIMER_INITIAL, 0);
}
