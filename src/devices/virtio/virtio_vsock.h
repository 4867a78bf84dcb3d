/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-vsock (device ID 19) served in userspace, host side on Unix
 * sockets with Firecracker's "hybrid vsock" protocol (docs/virtio.md):
 *
 * - host to guest: hintvm listens on UDS_PATH (mode 0600, removed when the
 *   device goes); a host program connects, writes "CONNECT <port>\n", and
 *   once the guest's listener on <port> accepts it reads "OK <host_port>\n"
 *   and then has a byte stream to it. Refused or unanswered: closed.
 * - guest to host: a guest connection to host port P is joined to the Unix
 *   socket "UDS_PATH_P" when something listens there (or to an in-process
 *   listener registered below), else the guest gets an RST.
 *
 * Stream sockets only, credit-based flow control both ways (virtio 1.2,
 * 5.10.6.3). All socket work happens on the VM's device event loop thread
 * with non-blocking fds (through an epoll set the loop watches), so no
 * connection waits for another and no vCPU ever waits for a host socket.
 * Per connection hintvm buffers at most VSOCK_BUF_ALLOC bytes of guest
 * data the host has not read yet (that is the credit it grants the guest);
 * host data is read straight into guest buffers, only as far as the
 * guest's credit allows, so a slow reader on either side holds its peer
 * back instead of growing a buffer.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_VSOCK_H
#define HVM_DEVICES_VIRTIO_VIRTIO_VSOCK_H

#include <stdint.h>

#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

/* Guest data buffered per connection at most (the credit granted). */
#define VSOCK_BUF_ALLOC (64u * 1024)
/* Connections at once, counting host ones still in their handshake. */
#define VSOCK_MAX_CONNS 4096
/* A host client has this long to send its CONNECT line, a guest to answer. */
#define VSOCK_HANDSHAKE_TIMEOUT_MS 5000
#define VSOCK_CONNECT_TIMEOUT_MS 5000
/* In-process host ports (virtio_vsock_add_host_listener) at most. */
#define VSOCK_MAX_HOST_LISTENERS 16

/*
 * Create the device for a guest with GUEST_CID. UDS_PATH: the hybrid
 * socket to listen on (a stale socket nobody listens on is replaced; any
 * other existing file is an error), or NULL for none (tests, fuzzing).
 * Raises RLIMIT_NOFILE's soft limit towards the hard one so that
 * VSOCK_MAX_CONNS connections fit. NULL on failure, with the reason in
 * hvm_error_message().
 */
struct virtio_device *virtio_vsock_create(const struct virtio_host *host,
					  uint64_t guest_cid,
					  const char *uds_path);

/*
 * In-process host port service, for hintvm's own use (e.g. the guest
 * agent's exit-status report): when the guest connects to host port PORT,
 * the device makes a Unix stream socketpair, streams one end exactly like
 * a "UDS_PATH_P" connection and calls ON_CONNECT(fd, OPAQUE) with the other
 * end, which the callback then owns (non-blocking, close-on-exec; closing
 * it resets the guest's connection, EOF on it means the guest shut down
 * or reset its side). ON_CONNECT runs on the device's event loop thread
 * with no device lock held; it must not block (read the fd from an event
 * loop or hand it to a thread). A registered port takes precedence over
 * "UDS_PATH_P". Any thread, before or after the VM starts. Returns 0,
 * -EEXIST when PORT is taken, -ENOSPC beyond VSOCK_MAX_HOST_LISTENERS.
 */
int virtio_vsock_add_host_listener(struct virtio_device *vdev, uint32_t port,
				   void (*on_connect)(int fd, void *opaque),
				   void *opaque);

/*
 * A host client of the hybrid socket without its path: the returned fd
 * (blocking, close-on-exec) is a Unix stream socket on which the caller
 * speaks the hybrid protocol ("CONNECT <port>\n", then "OK <port>\n") as
 * after connecting to UDS_PATH. For a thread that may no longer open the
 * path (the VM's --user). Any thread, once the device exists. Returns the
 * fd, or -errno (-EAGAIN when VSOCK_MAX_ADOPT wait for the event loop).
 */
int virtio_vsock_connect(struct virtio_device *vdev);

/* Stop serving PORT (connections already made stay). 0 or -ENOENT. */
int virtio_vsock_remove_host_listener(struct virtio_device *vdev,
				      uint32_t port);

/*
 * Drop every established connection (host ends see EOF; host clients
 * still waiting for the guest's answer keep waiting, as they do across a
 * driver's reset) and announce
 * VIRTIO_VSOCK_EVENT_TRANSPORT_RESET on the event queue, so the guest
 * driver resets its sockets too: what a restored or migrated VM's device
 * must do. The event waits for an event buffer if none is posted.
 */
void virtio_vsock_transport_reset(struct virtio_device *vdev);

/* Connections open now (handshakes included); for tests and stats. */
unsigned int virtio_vsock_connections(struct virtio_device *vdev);

/*
 * Snapshot (docs/snapshot.md): the guest's CID when it was taken. A
 * restored device has no host end of any connection, so the guest's are
 * stale: the load queues a TRANSPORT_RESET event (sent once the queues
 * are kicked), and the driver, as Linux's does, drops its connections
 * and reads the guest CID again: the restoring VM's (a clone's own).
 */
struct virtio_vsock_state {
	uint64_t guest_cid;
	/* The next host port to hand out: none the guest saw is reused. */
	uint32_t next_host_port;
	uint32_t reserved;
};
_Static_assert(sizeof(struct virtio_vsock_state) == 16,
	       "docs/snapshot.md's layout");
void virtio_vsock_save(struct virtio_device *vdev,
		       struct virtio_vsock_state *s);
/* Locked. -EINVAL for a CID not a guest's, a port not an ephemeral one. */
int virtio_vsock_load(struct virtio_device *vdev,
		      const struct virtio_vsock_state *s);

#endif
