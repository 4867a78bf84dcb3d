/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virtio-rng: the guest's /dev/hwrng, filled from getrandom(2). */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_RNG_H
#define HVM_DEVICES_VIRTIO_VIRTIO_RNG_H

#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

struct virtio_device *virtio_rng_create(const struct virtio_host *host);

#endif
