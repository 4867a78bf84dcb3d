/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-console with a single port (no MULTIPORT): the guest's hvc0.
 * Guest output is written to a host fd from the event loop; host input is
 * offered through virtio_console_receive() (a console_sink deliver).
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_CONSOLE_H
#define HVM_DEVICES_VIRTIO_VIRTIO_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

/* OUT_FD receives guest output (-1: discard); it stays the caller's. */
struct virtio_device *virtio_console_create(const struct virtio_host *host,
					    int out_fd);

/* Call NOTIFY(CTX) whenever the guest writes output (boot tracing). */
void virtio_console_set_output_notify(struct virtio_device *vdev,
				      void (*notify)(void *), void *ctx);

/* Give host input to the guest; returns how many bytes it took. */
size_t virtio_console_receive(void *vdev, const uint8_t *buf, size_t len);

#endif
