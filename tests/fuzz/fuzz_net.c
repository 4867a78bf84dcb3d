// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the real virtio-net device model with a datagram
 * socketpair in place of the tap: what the guest transmits arrives at the
 * harness's end (and is drained every turn), and host input records send
 * packets (of 0-8 bytes: too short for a header, or a header prefix) the
 * device receives through its watch on the "tap". Records:
 * device_harness.h.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "device_harness.h"
#include "devices/virtio/virtio_net.h"
#include "fuzz.h"

static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static int peer = -1;

static struct virtio_device *net_create(const struct virtio_host *host)
{
	int fds[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       fds) < 0)
		abort();
	peer = fds[1];
	return virtio_net_create_fd(host, fds[0], mac, 0);
}

static void net_host_input(struct virtio_device *vdev, const uint8_t *buf,
			   size_t len)
{
	/* A full socket only drops the packet, as a busy tap would. */
	if (send(peer, buf, len, MSG_DONTWAIT) < 0)
		return;
}

static void drain_peer(void)
{
	uint8_t buf[2048];

	while (recv(peer, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static void net_input_done(void)
{
	close(peer);
	peer = -1;
}

static const struct fuzz_device net = {
	.create = net_create,
	.host_input = net_host_input,
	.turn_done = drain_peer,
	.input_done = net_input_done,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_device_init(&net);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_device_run(&net, data, size);
}
