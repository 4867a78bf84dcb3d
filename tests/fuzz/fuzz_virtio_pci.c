// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the PCI host and the virtio-pci transport: the
 * input is a sequence of guest accesses (config ports, BAR window) of any
 * width and offset. Device work is done inline on kicks (no event loop),
 * against a device that drains its queue, so rings set up by the fuzzer
 * are popped too. Nothing may crash, hang or touch memory outside RAM.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio_pci.h"
#include "fuzz.h"

#define WINDOW 0xe0000000ull
#define RAM_SIZE 0x10000ull

static uint8_t *ram;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, RAM_SIZE);
	return ram ? 0 : -1;
}

static struct virtq_chain *chain;

static struct virtq_chain *get_chain(struct virtio_device *vdev, uint16_t q)
{
	return chain;
}

static int handle(struct virtio_device *vdev, uint16_t q, struct virtq_chain *c)
{
	/* Touch every byte the device may write, as a device would. */
	for (unsigned int i = 0; i < c->nr_in; i++)
		memset(virtq_chain_in(c)[i].iov_base, 0x5a,
		       virtq_chain_in(c)[i].iov_len);
	return (int)c->in_len;
}

static const struct virtio_queue_handler handler = { get_chain, handle };

static void queue_notify(struct virtio_device *vdev, uint16_t q)
{
	virtio_queue_drain(vdev, q, &handler);
}

static const struct virtio_device_ops ops = { .queue_notify = queue_notify };

static int sink(void *ctx, uint64_t addr, uint32_t d)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_memory mem = { 0 };
	struct virtio_device vdev;
	struct virtio_pci vp;
	struct pci_host *host = pci_host_create(WINDOW, 0x100000);
	struct virtio_host vhost = { .mem = &mem, .msi = { sink, NULL } };
	uint8_t config[24] = { 0 };
	uint64_t bar;

	memset(ram, 0, RAM_SIZE);
	guest_memory_add_region(&mem, 0, RAM_SIZE, ram);
	if (!host ||
	    virtio_device_init(&vdev, "fuzz", &ops, &mem, 4,
			       VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX) |
				       VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC),
			       2, 64, config, sizeof(config)))
		abort();
	chain = virtq_chain_alloc(64);
	if (virtio_pci_init(&vp, &vdev, host, &vhost))
		abort();
	bar = pci_device_bar_addr(&vp.pdev, VIRTIO_PCI_BAR);
	/* Records: kind, width, offset (2 bytes), value (8 bytes). */
	while (size >= 12) {
		uint8_t kind = data[0] % 6,
			len = (uint8_t)(1u << (data[1] % 4));
		uint16_t off = (uint16_t)(data[2] | data[3] << 8);
		uint8_t val[8];

		memcpy(val, data + 4, 8);
		switch (kind) {
		case 0:
			pci_host_cfg_ops.write(host, off % 8, val,
					       len > 4 ? 4 : len);
			break;
		case 1:
			pci_host_cfg_ops.read(host, off % 8, val,
					      len > 4 ? 4 : len);
			break;
		case 2:
			pci_host_mmio_ops.write(host, bar - WINDOW + off, val,
						len);
			break;
		case 3:
			pci_host_mmio_ops.read(host, bar - WINDOW + off, val,
					       len);
			break;
		case 4: /* the driver writes guest RAM (rings, buffers) */
			memcpy(ram + (off % (RAM_SIZE - 8)), val, 8);
			break;
		default: /* the device's event loop runs the kicked queues */
			for (uint16_t q = 0; q < vdev.nr_vqs; q++) {
				pthread_mutex_lock(&vdev.lock);
				if (virtio_device_live(&vdev) &&
				    vdev.vqs[q].enabled && !vdev.vqs[q].broken)
					queue_notify(&vdev, q);
				pthread_mutex_unlock(&vdev.lock);
			}
			break;
		}
		data += 12;
		size -= 12;
	}
	free(chain);
	virtio_device_destroy(&vdev);
	pci_host_destroy(host);
	return 0;
}
