/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-pci, modern interface only (virtio 1.x 4.1; non-transitional
 * device IDs 0x1040 + type, revision 1). One 64-bit memory BAR holds every
 * structure, each on its own page:
 *
 *   0x0000 common configuration   0x3000 notifications (4 bytes per queue)
 *   0x1000 ISR status             0x4000 MSI-X table
 *   0x2000 device configuration   0x5000 MSI-X pending bits
 *
 * Queue kicks go to per-queue ioeventfds when the host offers them; a notify
 * write that still exits kicks the same eventfd. The ioeventfds follow the
 * BAR: when the guest moves it (or turns memory decode off, or sizes it),
 * they are taken from the old address and put at the new one, so a write
 * at the old address kicks nothing. Interrupts are MSI-X only.
 * The VIRTIO_PCI_CAP_PCI_CFG window reaches the same BAR registers through
 * config space (for firmware; Linux does not use it).
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_PCI_H
#define HVM_DEVICES_VIRTIO_VIRTIO_PCI_H

#include <stdint.h>

#include "devices/pci/msix.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

#define VIRTIO_PCI_BAR 0
#define VIRTIO_PCI_BAR_SIZE 0x8000
#define VIRTIO_PCI_COMMON_OFF 0x0000
#define VIRTIO_PCI_COMMON_LEN 0x38
#define VIRTIO_PCI_ISR_OFF 0x1000
#define VIRTIO_PCI_DEVCFG_OFF 0x2000
#define VIRTIO_PCI_NOTIFY_OFF 0x3000
#define VIRTIO_PCI_NOTIFY_MULT 4
#define VIRTIO_PCI_MSIX_TABLE_OFF 0x4000
#define VIRTIO_PCI_MSIX_PBA_OFF 0x5000

struct virtio_pci {
	struct virtio_device *vdev;
	struct pci_device pdev;
	struct msix msix;
	uint32_t dfselect, gfselect;
	uint16_t queue_select;
	uint16_t config_vector;
	uint16_t queue_vectors[MSIX_MAX_VECTORS];
	uint8_t isr;
	uint8_t pci_cfg_cap; /* config offset of VIRTIO_PCI_CAP_PCI_CFG */
	const struct virtio_host *vhost;
	uint64_t window_base, window_size; /* where the PCI host decodes BARs */
	/* Notify ioeventfds: where they are registered, for how many queues. */
	uint64_t notify_addr; /* 0: none */
	uint16_t notify_queues;
};

/*
 * Put VDEV on the PCI bus of HOST (BAR assigned there), wire its kicks to
 * ioeventfds and its interrupts to MSI-X. VDEV->nr_vqs must be below
 * MSIX_MAX_VECTORS. Returns 0 or -errno with hvm_error_message().
 */
int virtio_pci_init(struct virtio_pci *vp, struct virtio_device *vdev,
		    struct pci_host *host, const struct virtio_host *vhost);

/*
 * Snapshot of the transport (docs/snapshot.md): the function's config
 * space (BAR address, command, MSI-X control, the PCI_CFG window), the
 * MSI-X table and pending bits, the feature and queue selectors, the
 * vectors and the ISR. Locked (vdev->lock).
 */
struct virtio_pci_state {
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t msix_table[MSIX_MAX_VECTORS * MSIX_ENTRY_SIZE];
	uint64_t msix_pending;
	uint32_t dfselect, gfselect;
	uint16_t queue_select;
	uint16_t config_vector;
	uint8_t isr;
	uint8_t reserved[3];
	uint16_t queue_vectors[MSIX_MAX_VECTORS];
};
_Static_assert(sizeof(struct virtio_pci_state) == 1432,
	       "docs/snapshot.md's layout");
void virtio_pci_save(const struct virtio_pci *vp, struct virtio_pci_state *s);
/*
 * Refuses a config byte the guest cannot write that differs from this
 * build's, a vector beyond the table; then follows the BAR with the
 * notify ioeventfds.
 */
int virtio_pci_load(struct virtio_pci *vp, const struct virtio_pci_state *s);

/* Decode of the BAR (exposed for tests; the PCI host calls it). */
extern const struct bus_ops virtio_pci_bar_ops;

#endif
