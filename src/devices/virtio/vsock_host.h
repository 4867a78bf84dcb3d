/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-vsock's host end (vsock_host.c), as the guest end drives it: the
 * hybrid socket, host fds and their epoll set. Locked unless said.
 */
#ifndef HVM_DEVICES_VIRTIO_VSOCK_HOST_H
#define HVM_DEVICES_VIRTIO_VSOCK_HOST_H

#include "devices/virtio/vsock_device.h"

/* Open the epoll set (and UDS_PATH's socket); READY runs on its events. */
int vsock_host_init(struct virtio_vsock *vs, struct event_loop *loop,
		    const char *uds_path, void (*ready)(struct event_watch *));
void vsock_host_fini(struct virtio_vsock *vs);
/* Bring C's epoll interest in line with its state. */
void vsock_update_events(struct virtio_vsock *vs, struct vsock_conn *c);
/* Make the event loop run the device's epoll turn soon. */
void vsock_wake(struct virtio_vsock *vs);
/* sendmsg without blocking or SIGPIPE: bytes taken, 0 for "full", -1. */
ssize_t vsock_send_iov(int fd, struct iovec *iov, unsigned int nr);
/* The host end for a guest connection to PORT, or -1: refused. */
int vsock_open_host_end(struct virtio_vsock *vs, uint32_t port);
/* The guest accepted a host client: send it "OK <host_port>". */
void vsock_host_connected(struct virtio_vsock *vs, struct vsock_conn *c);

/* Handle one batch of host events; how many there were. */
int vsock_host_poll(struct virtio_vsock *vs);
/* Hand in-process listeners their connections; unlocked. */
void vsock_host_run_deferred(struct virtio_vsock *vs);

#endif
