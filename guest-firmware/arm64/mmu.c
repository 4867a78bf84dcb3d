// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One identity map for every CPU, 4 KiB granule, 39-bit addresses:
 *   0-1 GiB   devices (GIC, UART): Device-nGnRnE, EL0 may access, no exec
 *   1-2 GiB   RAM in 2 MiB blocks: the first (code, read-only data) is
 *             read-only and executable at EL1 and EL0; the rest is
 *             read-write at both and never executable.
 * Normal memory is needed for atomics; EL0 access for the payloads.
 */
#include "cpu.h"

#define DESC_TABLE 0x3ULL
#define DESC_BLOCK 0x1ULL
#define ATTR_IDX(n) ((uint64_t)(n) << 2)
#define AP_RW_ALL (1ULL << 6) /* AP[2:1] = 01: RW at EL1 and EL0 */
#define AP_RO_ALL (3ULL << 6) /* AP[2:1] = 11: RO at EL1 and EL0 */
#define SH_INNER (3ULL << 8)
#define AF (1ULL << 10)
#define NG (1ULL << 11)
#define PXN (1ULL << 53)
#define UXN (1ULL << 54)

#define MAIR_DEVICE 0 /* attr index 0: Device-nGnRnE */
#define MAIR_NORMAL 1 /* attr index 1: Normal, write-back */
#define MAIR_VALUE (0x00ULL | 0xffULL << 8)

#define TCR_T0SZ(bits) (64ULL - (bits))
#define TCR_IRGN0_WBWA (1ULL << 8)
#define TCR_ORGN0_WBWA (1ULL << 10)
#define TCR_SH0_INNER (3ULL << 12)
#define TCR_TG0_4K (0ULL << 14)
#define TCR_EPD1 (1ULL << 23) /* no TTBR1 walks */
#define TCR_IPS_40 (2ULL << 32)

#define SCTLR_M (1ULL << 0)
#define SCTLR_C (1ULL << 2)
#define SCTLR_I (1ULL << 12)
#define SCTLR_RES1 0x30d00800ULL
#define CNTKCTL_EL0VCTEN (1ULL << 1)

#define GIB (1ULL << 30)
#define BLOCK_2M (1ULL << 21)

static uint64_t level1[512] __attribute__((aligned(4096)));
static uint64_t level2_ram[512] __attribute__((aligned(4096)));

void mmu_build_tables(void)
{
	level1[0] = 0 | DESC_BLOCK | ATTR_IDX(MAIR_DEVICE) | AP_RW_ALL | AF |
		    PXN | UXN;
	level1[1] = (uint64_t)(uintptr_t)level2_ram | DESC_TABLE;
	level2_ram[0] = GIB | DESC_BLOCK | ATTR_IDX(MAIR_NORMAL) | AP_RO_ALL |
			SH_INNER | AF;
	for (uint64_t i = 1; i < 512; i++)
		level2_ram[i] = (GIB + i * BLOCK_2M) | DESC_BLOCK |
				ATTR_IDX(MAIR_NORMAL) | AP_RW_ALL | SH_INNER |
				AF | PXN | UXN;
	dsb(sy);
}

void mmu_enable(void)
{
	extern char vectors[];

	write_sysreg(vbar_el1, (uintptr_t)vectors);
	write_sysreg(mair_el1, MAIR_VALUE);
	write_sysreg(tcr_el1, TCR_T0SZ(39) | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA |
				      TCR_SH0_INNER | TCR_TG0_4K | TCR_EPD1 |
				      TCR_IPS_40);
	write_sysreg(ttbr0_el1, (uintptr_t)level1);
	write_sysreg(cntkctl_el1, CNTKCTL_EL0VCTEN);
	isb();
	__asm__ volatile("tlbi vmalle1\n\tdsb nsh" ::: "memory");
	write_sysreg(sctlr_el1, SCTLR_RES1 | SCTLR_M | SCTLR_C | SCTLR_I);
	isb();
}
