/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Local APIC in xAPIC (MMIO) mode: every access is an exit, so use few. */
#ifndef TK_LAPIC_H
#define TK_LAPIC_H

#include <stdint.h>

uint32_t lapic_id(void);
/* Software-enable the LAPIC with SPURIOUS_VECTOR; mask LINT0 (legacy PIC). */
void lapic_enable(void);
void lapic_eoi(void);

void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
/* One IPI to every CPU but the caller (destination shorthand). */
void lapic_send_ipi_all_but_self(uint8_t vector);
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, uint32_t start_gpa);

/* Periodic timer interrupt on VECTOR every COUNT bus clocks (divide by 1);
 * lapic_timer_stop() disarms it. */
void lapic_timer_periodic(uint8_t vector, uint32_t count);
void lapic_timer_stop(void);

#endif
