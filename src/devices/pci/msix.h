/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MSI-X for a PCI function: the capability in config space, the vector
 * table and the pending-bit array in a memory BAR, and delivery through a
 * message sink (KVM_SIGNAL_MSI with the in-kernel irqchip). A masked vector
 * becomes pending and is delivered when it is unmasked, as the PCI spec
 * requires; that is what lets a driver mask, reprogram and unmask safely.
 *
 * State is protected by the owning device's lock: the owner calls every
 * function here with it held.
 */
#ifndef HVM_DEVICES_PCI_MSIX_H
#define HVM_DEVICES_PCI_MSIX_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/pci/pci.h"

#define MSIX_ENTRY_SIZE 16
#define MSIX_MAX_VECTORS 64

/* Where an MSI goes: KVM_SIGNAL_MSI in a VM, a recorder in tests. */
struct msi_sink {
	int (*send)(void *ctx, uint64_t addr, uint32_t data);
	void *ctx;
};

struct msix {
	struct pci_device *pdev;
	uint8_t cap; /* config offset of the capability */
	uint16_t nr;
	uint8_t table[MSIX_MAX_VECTORS * MSIX_ENTRY_SIZE];
	uint64_t pending;
	bool enabled, function_masked;
	struct msi_sink sink;
};

/*
 * Add the capability to PDEV: NR vectors (<= MSIX_MAX_VECTORS), the table
 * at TABLE_OFF and the PBA at PBA_OFF inside BAR. Every vector starts
 * masked. Returns 0 or -EINVAL / -ENOSPC.
 */
int msix_init(struct msix *m, struct pci_device *pdev, uint16_t nr, uint8_t bar,
	      uint32_t table_off, uint32_t pba_off, struct msi_sink sink);

/* Table bytes: OFF relative to the table start, LEN 4 or 8, aligned. */
void msix_table_read(struct msix *m, uint64_t off, uint8_t *data, uint32_t len);
void msix_table_write(struct msix *m, uint64_t off, const uint8_t *data,
		      uint32_t len);
void msix_pba_read(struct msix *m, uint64_t off, uint8_t *data, uint32_t len);

/* Config bytes [OFF, OFF + LEN) changed: follow enable / function mask. */
void msix_config_written(struct msix *m, uint32_t off, uint32_t len);

/*
 * Signal VECTOR: sent now, or left pending while masked. Returns 0, or
 * -EINVAL for a vector beyond the table (dropped), or the sink's error.
 */
int msix_notify(struct msix *m, uint16_t vector);

#endif
