/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Time from the TSC. The frequency comes from CPUID (hypervisor leaf
 * 0x40000010, else leaf 0x15/0x16); when nothing reports it, an assumed
 * 5 GHz makes deadlines longer rather than shorter than asked.
 */
#ifndef TK_TIMING_H
#define TK_TIMING_H

#include <stdbool.h>
#include <stdint.h>

/* Read CPUID once at CPL0 (BSP, early). */
void timing_init(void);
uint64_t tsc_khz(void);
/* False when tsc_khz() is the assumed fallback. */
bool tsc_khz_known(void);
uint64_t ms_to_tsc(uint64_t ms);
uint64_t tsc_to_us(uint64_t ticks);

#endif
