/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a VM lends its virtio devices and transports: guest RAM, the device
 * event loop, and the two KVM fast paths (ioeventfd for queue kicks, MSI
 * injection). Filled in by the VM setup code; tests fill it with fakes, so
 * no device or transport includes KVM headers.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_HOST_H
#define HVM_DEVICES_VIRTIO_VIRTIO_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "base/budget.h"
#include "core/event_loop.h"
#include "core/guest_memory.h"
#include "devices/pci/msix.h"

struct virtio_host {
	const struct guest_memory *mem;
	struct event_loop *loop;
	/*
	 * Signal eventfd FD when the guest writes LEN bytes at ADDR (MMIO),
	 * and only value DATA when DATAMATCH; with !ASSIGN, stop doing so
	 * (the same ADDR, LEN, DATAMATCH, DATA and FD as when assigned).
	 * NULL, or returning an error: the write exits to userspace and the
	 * transport kicks instead.
	 */
	int (*ioeventfd)(void *ctx, uint64_t addr, uint32_t len, bool datamatch,
			 uint64_t data, int fd, bool assign);
	void *ioeventfd_ctx;
	struct msi_sink msi; /* x86: KVM_SIGNAL_MSI */
	/*
	 * What objects the guest creates (vsock connections and buffers, 9P
	 * fids and xattr buffers) are charged to; NULL: unbounded (tests).
	 */
	struct budget *guest_objects;
	/* Bumped when a share's file-server process dies; NULL: not counted. */
	_Atomic uint64_t *share_server_deaths;
	/*
	 * What the guest made the file-server processes hold, summed: each
	 * has a budget of guest_objects' limit of its own; NULL: not counted.
	 */
	struct budget *share_objects;
};

#endif
