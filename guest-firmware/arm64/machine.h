/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the test kernel learns from the device tree: where the UART and
 * the GICv3 are, the CPUs' MPIDRs, the PSCI conduit and the command line.
 * The same Image runs on hintvm (ns16550a) and on QEMU virt (PL011).
 */
#ifndef TK_MACHINE_H
#define TK_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"

enum uart_kind { UART_NONE, UART_NS16550A, UART_PL011 };

#define MAX_VIRTIO_MMIO 32

struct machine {
	enum uart_kind uart;
	uint64_t uart_base;
	uint64_t gicd, gicr;
	unsigned int nr_cpus; /* listed in /cpus, at most MAX_CPUS */
	unsigned int dropped; /* listed beyond MAX_CPUS */
	uint64_t mpidr[MAX_CPUS];
	bool psci_smc;
	uint64_t hint; /* hintvm's scheduling-hint page, or 0 */
	const char *bootargs; /* points into the tree, or "" */
	/* "virtio,mmio" windows in tree order (whatever device, if any). */
	uint64_t virtio_mmio[MAX_VIRTIO_MMIO];
	unsigned int nr_virtio_mmio;
};

extern struct machine machine;

/* Fill `machine` from the tree at DTB; false when it is not a tree. */
bool fdt_scan(const void *dtb);

#endif
