/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-mmio, version 2 (modern) register layout (virtio 1.x 4.2.2), for
 * arm64 guests that find the device in the device tree. Registers below
 * 0x100 are 32 bits wide and take only aligned 32-bit accesses; the device
 * configuration follows at 0x100. Kicks go to per-queue ioeventfds with
 * datamatch on the queue index; the interrupt is a level-triggered line.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_MMIO_H
#define HVM_DEVICES_VIRTIO_VIRTIO_MMIO_H

#include <stdint.h>

#include "core/bus.h"
#include "core/irq.h"
#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

#define VIRTIO_MMIO_SIZE 0x200

struct virtio_mmio {
	struct virtio_device *vdev;
	struct irq_line irq;
	uint64_t base;
	uint32_t dfselect, gfselect;
	uint32_t queue_select;
	uint32_t interrupt_status;
};

/*
 * Wire VDEV to the window at BASE (the caller registers virtio_mmio_ops
 * there with VM) and to IRQ. Returns 0 (ioeventfds are optional).
 */
int virtio_mmio_init(struct virtio_mmio *m, struct virtio_device *vdev,
		     uint64_t base, struct irq_line irq,
		     const struct virtio_host *host);

extern const struct bus_ops virtio_mmio_ops;

#endif
