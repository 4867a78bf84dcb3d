/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The in-kernel GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3): distributor and one
 * redistributor per vCPU at the addresses in platform.h. Created before the
 * vCPUs, initialised (KVM_DEV_ARM_VGIC_CTRL_INIT) once they all exist.
 */
#ifndef HVM_ARM64_GIC_H
#define HVM_ARM64_GIC_H

#include <stdint.h>

#include "arch/arm64/platform.h"

struct gic {
	int fd;
};

/* What KVM_IRQ_LINE / KVM_IRQFD call SPI number SPI (irq_line.gsi). */
static inline uint32_t gic_spi_gsi(uint32_t spi)
{
	return (1u << 24) /* KVM_ARM_IRQ_TYPE_SPI */ |
	       (ARM64_GIC_SPI_BASE + spi);
}

int gic_create(struct gic *gic, int vm_fd, unsigned int nr_vcpus);
int gic_finalize(struct gic *gic);
void gic_destroy(struct gic *gic);

#endif
