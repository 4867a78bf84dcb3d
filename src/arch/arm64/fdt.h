/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flattened device tree an arm64 guest boots with, built from a plain
 * description of the machine (no KVM here, so tests parse what it builds).
 */
#ifndef HVM_ARM64_FDT_H
#define HVM_ARM64_FDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arm64_fdt_mmio_dev {
	uint64_t gpa;
	uint64_t size;
	uint32_t spi; /* SPI number: INTID - 32 */
};

struct arm64_fdt_params {
	unsigned int nr_cpus;
	const uint64_t *mpidr; /* nr_cpus values: MPIDR_EL1 affinity fields */
	uint64_t ram_gpa, ram_size;
	uint64_t gicd_gpa, gicd_size;
	uint64_t gicr_gpa, gicr_size;
	struct arm64_fdt_mmio_dev uart; /* ns16550a */
	const char *bootargs; /* NULL: none */
	uint64_t initrd_gpa, initrd_size; /* size 0: no initrd */
	const struct arm64_fdt_mmio_dev *virtio; /* virtio-mmio devices */
	unsigned int nr_virtio;
	uint64_t hint_gpa; /* scheduling-hint page; 0: none */
	uint64_t pvpanic_gpa; /* pvpanic register; 0: none */
	bool pmu; /* an arm,armv8-pmuv3 node */
};

/* The node path of the UART, as /chosen/stdout-path names it. */
#define ARM64_FDT_UART_PATH_FMT "/uart@%llx"

/*
 * Write the tree into BUF (BUF_SIZE bytes) and pack it. Returns its size
 * or -ENOSPC / -EINVAL with an error message.
 */
int arm64_fdt_build(const struct arm64_fdt_params *p, void *buf,
		    size_t buf_size);

#endif
