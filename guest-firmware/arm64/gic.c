// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * GICv3 with affinity routing, as KVM's vGIC and QEMU present it (one
 * security state): the distributor enables group 1, each CPU wakes its
 * redistributor, puts SGIs 0-15 in group 1 and enables them, and talks to
 * its CPU interface through the ICC_* system registers.
 */
#include "cpu.h"
#include "machine.h"

#define GICD_CTLR 0x0
#define GICD_CTLR_ENABLE_G1 (1u << 1)
#define GICD_CTLR_ARE (1u << 4)
#define GICD_CTLR_RWP (1u << 31)
#define GICR_STRIDE 0x20000
#define GICR_WAKER 0x14
#define GICR_WAKER_SLEEP (1u << 1)
#define GICR_WAKER_ASLEEP (1u << 2)
#define GICR_TYPER 0x8
#define GICR_TYPER_LAST (1ULL << 4)
#define GICR_SGI 0x10000 /* the SGI_base frame */
#define GICR_IGROUPR0 0x80
#define GICR_ISENABLER0 0x100
#define GICR_IPRIORITYR 0x400
#define SGI_COUNT 16
#define PRIVATE_IRQS 32 /* SGIs and PPIs */
#define PRIORITY 0xa0
#define INTID_SPURIOUS 1020

static irq_handler_t handlers[PRIVATE_IRQS];

void gic_dist_init(void)
{
	mmio_write32(machine.gicd + GICD_CTLR,
		     GICD_CTLR_ARE | GICD_CTLR_ENABLE_G1);
	while (mmio_read32(machine.gicd + GICD_CTLR) & GICD_CTLR_RWP)
		cpu_relax();
}

/* The redistributor whose GICR_TYPER affinity matches MPIDR. */
static uint64_t find_redist(uint64_t mpidr)
{
	uint32_t aff =
		(uint32_t)((mpidr & 0xffffff) | ((mpidr >> 32) & 0xff) << 24);

	for (unsigned int i = 0; i < 256; i++) {
		uint64_t rd = machine.gicr + (uint64_t)i * GICR_STRIDE;
		uint64_t typer = mmio_read32(rd + GICR_TYPER) |
				 (uint64_t)mmio_read32(rd + GICR_TYPER + 4)
					 << 32;

		if ((uint32_t)(typer >> 32) == aff)
			return rd;
		if (typer & GICR_TYPER_LAST)
			break;
	}
	return 0;
}

bool gic_cpu_init(uint64_t mpidr)
{
	uint64_t rd = find_redist(mpidr), sgi;

	if (!rd)
		return false;
	sgi = rd + GICR_SGI;
	mmio_write32(rd + GICR_WAKER,
		     mmio_read32(rd + GICR_WAKER) & ~GICR_WAKER_SLEEP);
	while (mmio_read32(rd + GICR_WAKER) & GICR_WAKER_ASLEEP)
		cpu_relax();
	mmio_write32(sgi + GICR_IGROUPR0, 0xffffffff);
	for (unsigned int i = 0; i < PRIVATE_IRQS / 4; i++)
		mmio_write32(sgi + GICR_IPRIORITYR + 4 * i,
			     0x01010101u * PRIORITY);
	mmio_write32(sgi + GICR_ISENABLER0,
		     ((1u << SGI_COUNT) - 1) | 1u << INTID_VTIMER);

	write_sysreg(S3_0_C12_C12_5, read_sysreg(S3_0_C12_C12_5) | 1); /* SRE */
	isb();
	write_sysreg(S3_0_C4_C6_0, 0xff); /* ICC_PMR_EL1: all priorities */
	write_sysreg(S3_0_C12_C12_3, 0); /* ICC_BPR1_EL1 */
	write_sysreg(S3_0_C12_C12_7, 1); /* ICC_IGRPEN1_EL1 */
	isb();
	return true;
}

void gic_send_sgi(uint64_t target, unsigned int intid)
{
	uint64_t v = ((target >> 32) & 0xff) << 48 | /* Aff3 */
		     ((target >> 16) & 0xff) << 32 | /* Aff2 */
		     (uint64_t)(intid & 0xf) << 24 |
		     ((target >> 8) & 0xff) << 16 | /* Aff1 */
		     1ULL << (target & 0xf); /* target list: Aff0 < 16 */

	dsb(ishst);
	write_sysreg(S3_0_C12_C11_5, v); /* ICC_SGI1R_EL1 */
	isb();
}

void irq_set_handler(unsigned int intid, irq_handler_t handler)
{
	if (intid < PRIVATE_IRQS)
		handlers[intid] = handler;
}

void irq_handle(void);
void irq_handle(void)
{
	for (;;) {
		uint64_t iar = read_sysreg(S3_0_C12_C12_0); /* ICC_IAR1_EL1 */
		unsigned int intid = (unsigned int)(iar & 0xffffff);

		if (intid >= INTID_SPURIOUS)
			return;
		if (intid == INTID_VTIMER)
			write_sysreg(cntv_ctl_el0, 0); /* a wait_irq deadline */
		else if (intid < PRIVATE_IRQS && handlers[intid])
			handlers[intid](intid);
		else
			printk("unexpected interrupt %u", intid);
		write_sysreg(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 */
	}
}
