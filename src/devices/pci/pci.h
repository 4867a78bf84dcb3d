/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal conventional PCI bus for x86 guests: one host bridge with bus 0,
 * configuration mechanism #1 (ports 0xcf8-0xcff), single-function devices,
 * memory BARs pre-assigned by hintvm inside one fixed MMIO window (there is
 * no firmware; Linux keeps BARs it finds valid). The host registers the
 * window as one bus region and decodes BARs itself, so the guest may size
 * or move BARs at run time without touching the bus table. No I/O BARs, no
 * INTx: devices interrupt through MSI-X (msix.h).
 *
 * Config space is an image plus a mask of guest-writable bits; everything
 * else (IDs, capabilities) is read-only by construction.
 */
#ifndef HVM_DEVICES_PCI_PCI_H
#define HVM_DEVICES_PCI_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"

#define PCI_CFG_SIZE 256
#define PCI_MAX_SLOTS 32
#define PCI_NUM_BARS 6

/* Config space offsets and bits (PCI Local Bus 3.0). */
#define PCI_VENDOR_ID 0x00
#define PCI_DEVICE_ID 0x02
#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY 0x2
#define PCI_COMMAND_MASTER 0x4
#define PCI_COMMAND_INTX_DISABLE 0x400
#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_REVISION_ID 0x08
#define PCI_CLASS_PROG 0x09
#define PCI_CLASS_DEVICE 0x0a
#define PCI_HEADER_TYPE 0x0e
#define PCI_BASE_ADDRESS_0 0x10
#define PCI_BASE_ADDRESS_MEM_TYPE_64 0x04
#define PCI_SUBSYSTEM_VENDOR_ID 0x2c
#define PCI_SUBSYSTEM_ID 0x2e
#define PCI_CAPABILITY_LIST 0x34
#define PCI_INTERRUPT_PIN 0x3d
#define PCI_CAP_ID_VNDR 0x09
#define PCI_CAP_ID_MSIX 0x11

/* Red Hat, Inc. vendor ID used by every virtio PCI device. */
#define PCI_VENDOR_ID_REDHAT_QUMRANET 0x1af4

struct pci_device;

struct pci_bar {
	uint64_t size; /* power of two >= 4096; 0: BAR unused */
	const struct bus_ops *ops; /* accesses decoded inside the BAR */
	void *dev;
};

struct pci_device {
	const char *name;
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE]; /* bits the guest may change */
	struct pci_bar bars[PCI_NUM_BARS]; /* 64-bit BARs use n and n + 1 */
	uint8_t next_cap; /* where the next capability goes */
	uint8_t *last_cap_next; /* link of the last capability added */
	/*
	 * Optional: the guest changed config bytes [OFF, OFF + LEN) (after
	 * the write was applied). Called with the host config lock held.
	 */
	void (*config_written)(struct pci_device *pdev, uint32_t off,
			       uint32_t len);
	/*
	 * Optional: the guest is about to read config bytes [OFF, OFF +
	 * LEN); refresh cfg[] for registers backed by device state. Called
	 * with the host config lock held.
	 */
	void (*config_read)(struct pci_device *pdev, uint32_t off,
			    uint32_t len);
	void *owner;
	int slot; /* assigned by pci_host_add_device, -1 before */
};

/* Fill the header of a type 0 function. */
void pci_device_init(struct pci_device *pdev, const char *name, uint16_t vendor,
		     uint16_t device, uint32_t class_code,
		     uint16_t subsys_vendor, uint16_t subsys_id);

/* Declare 64-bit memory BAR N (N and N + 1) of SIZE bytes. */
int pci_device_set_bar64(struct pci_device *pdev, unsigned int n, uint64_t size,
			 const struct bus_ops *ops, void *dev);

/*
 * Append a capability of LEN bytes (ID and the next link are filled in);
 * returns its config offset, or 0 when config space is full.
 */
uint8_t pci_device_add_cap(struct pci_device *pdev, uint8_t id,
			   const void *body, uint8_t len);

/* Current guest-programmed address of BAR N (64-bit). */
uint64_t pci_device_bar_addr(const struct pci_device *pdev, unsigned int n);

static inline uint16_t pci_cfg_read16(const struct pci_device *pdev,
				      uint32_t off)
{
	return (uint16_t)(pdev->cfg[off] | pdev->cfg[off + 1] << 8);
}

static inline void pci_cfg_set16(struct pci_device *pdev, uint32_t off,
				 uint16_t v)
{
	pdev->cfg[off] = (uint8_t)v;
	pdev->cfg[off + 1] = (uint8_t)(v >> 8);
}

static inline void pci_cfg_set32(struct pci_device *pdev, uint32_t off,
				 uint32_t v)
{
	for (int i = 0; i < 4; i++)
		pdev->cfg[off + i] = (uint8_t)(v >> (8 * i));
}

/* ---- the host bridge ---- */

struct pci_host;

/* BARs are carved from [MMIO_BASE, MMIO_BASE + MMIO_SIZE). */
struct pci_host *pci_host_create(uint64_t mmio_base, uint64_t mmio_size);
void pci_host_destroy(struct pci_host *host);

/*
 * Plug PDEV into the next free slot and assign its BARs in the window.
 * Returns 0, -ENOSPC (no slot or window space).
 */
int pci_host_add_device(struct pci_host *host, struct pci_device *pdev);

/*
 * Configuration mechanism #1: register pci_host_cfg_ops on the PIO bus at
 * PCI_HOST_CFG_PORT for PCI_HOST_CFG_LEN ports, pci_host_mmio_ops on the
 * MMIO bus over the window (pci_host_window()).
 */
#define PCI_HOST_CFG_PORT 0xcf8
#define PCI_HOST_CFG_LEN 8
extern const struct bus_ops pci_host_cfg_ops;
extern const struct bus_ops pci_host_mmio_ops;
void pci_host_window(const struct pci_host *host, uint64_t *base,
		     uint64_t *size);

/*
 * Port 0xcf9 sits inside the config ports and is the x86 reset control
 * register: byte accesses to it are forwarded to OPS/DEV when set.
 */
void pci_host_set_cf9_handler(struct pci_host *host, const struct bus_ops *ops,
			      void *dev);

/* Config access by (slot, offset) for tests and the ACPI/MP code. */
void pci_host_config_read(struct pci_host *host, unsigned int slot,
			  uint32_t off, uint8_t *data, uint32_t len);
void pci_host_config_write(struct pci_host *host, unsigned int slot,
			   uint32_t off, const uint8_t *data, uint32_t len);

/*
 * Snapshot (docs/snapshot.md) of the host itself: the config address
 * register and the host bridge's config space. The functions on the bus
 * are their devices' to save (virtio: virtio_pci_save()).
 */
#define PCI_HOST_STATE_VERSION 1
struct pci_host_state {
	uint32_t cfg_addr;
	uint32_t reserved;
	uint8_t bridge_cfg[PCI_CFG_SIZE];
};
void pci_host_save(struct pci_host *host, struct pci_host_state *s);
/* Refuses a byte the guest cannot write that differs from this build's. */
int pci_host_load(struct pci_host *host, const struct pci_host_state *s);

#endif
