/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding a virtio-pci function's structures (virtio_pci_guest.h). */
#include "virtio_pci_guest.h"

#define PCI_CAP_VENDOR 0x09
#define VIRTIO_CAP_COMMON 1
#define VIRTIO_CAP_NOTIFY 2
#define VIRTIO_CAP_DEVICE 4

bool virtio_pci_find(uint16_t device_id, struct virtio_pci_func *f)
{
	*f = (struct virtio_pci_func){ 0 };
	for (unsigned int slot = 0; slot < 32; slot++) {
		uint32_t id = pci_read(slot, 0);

		if ((id & 0xffff) != VIRTIO_VENDOR || (id >> 16) != device_id)
			continue;
		f->bar = (pci_read(slot, 0x10) & ~0xfu) |
			 (uint64_t)pci_read(slot, 0x14) << 32;
		for (unsigned int cap = pci_read(slot, 0x34) & 0xff; cap;
		     cap = (pci_read(slot, cap) >> 8) & 0xff) {
			uint32_t head = pci_read(slot, cap);
			uint64_t at = f->bar + pci_read(slot, cap + 8);

			if ((head & 0xff) != PCI_CAP_VENDOR)
				continue;
			switch ((uint8_t)(head >> 24)) {
			case VIRTIO_CAP_COMMON:
				f->common = at;
				break;
			case VIRTIO_CAP_NOTIFY:
				f->notify = at;
				f->notify_mult = pci_read(slot, cap + 16);
				break;
			case VIRTIO_CAP_DEVICE:
				f->device_cfg = at;
				break;
			}
		}
		return f->common != 0;
	}
	return false;
}
