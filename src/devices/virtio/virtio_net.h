/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-net on a host tap interface: one receive and one transmit queue,
 * the 12-byte virtio-net header passed through to tap (IFF_VNET_HDR), so
 * checksum and TSO offloads work end to end where tap accepts them
 * (probed with TUNSETOFFLOAD). No control queue, no mergeable rx buffers
 * (Linux then posts 64 KiB "big packet" chains when GUEST_TSO is on).
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_NET_H
#define HVM_DEVICES_VIRTIO_VIRTIO_NET_H

#include <stdint.h>

#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

/* Attach to the existing tap TAP with address MAC. NULL on error. */
struct virtio_device *virtio_net_create(const struct virtio_host *host,
					const char *tap, const uint8_t mac[6],
					unsigned int index);

/*
 * The same device on FD, which it then owns: a datagram socket (one
 * virtio-net header + frame per datagram, as tap), for tests and fuzzing.
 * No offloads are offered.
 */
struct virtio_device *virtio_net_create_fd(const struct virtio_host *host,
					   int fd, const uint8_t mac[6],
					   unsigned int index);

/*
 * Open /dev/net/tun and attach to the existing tap TAP (IFF_VNET_HDR):
 * the descriptor, or -errno with the reason set naming TAP.
 */
int virtio_net_attach_tap(const char *tap);

/*
 * FD, from virtio_net_attach_tap(), is what the next device created on
 * TAP uses instead of attaching itself: a jail attaches every tap in the
 * host's network namespace, then leaves it (vmm/jail.c). Takes FD.
 */
int virtio_net_adopt_tap(const char *tap, int fd);

/*
 * Limit the NIC to BYTES_PER_S bytes per second each way (0: no limit;
 * devices/virtio/rate_limiter.h). Call after create, before the guest runs.
 */
int virtio_net_set_limit(struct virtio_device *vdev, uint64_t bytes_per_s);

#endif
