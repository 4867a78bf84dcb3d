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

/*
 * Snapshots (docs/snapshot.md): the device's own part of its section,
 * after the queues' and the transport's. The tap is named, not kept: a
 * restore attaches the tap its command line names (a clone its own) and
 * the guest keeps the MAC it read at probe, so the restoring device must
 * have that MAC. The bw= limiter is host bookkeeping and restarts full.
 */
struct virtio_net_state {
	uint8_t mac[6];
	uint8_t reserved[2]; /* zero */
	char tap[16]; /* IFNAMSIZ: the tap's name, NUL-terminated */
};
_Static_assert(sizeof(struct virtio_net_state) == 24,
	       "docs/snapshot.md's layout");
/* Locked, frozen and drained. */
void virtio_net_save(struct virtio_device *vdev, struct virtio_net_state *s);
/*
 * Locked, after virtio_device_load(): refuses another MAC or a malformed
 * name, logs another tap, and tells the tap the offloads the restored
 * driver accepted. -EINVAL naming the device.
 */
int virtio_net_load(struct virtio_device *vdev,
		    const struct virtio_net_state *s);
/* A transmitted frame held by the bw= limit (0 or 1); locked. */
unsigned int virtio_net_in_flight(struct virtio_device *vdev);

#endif
