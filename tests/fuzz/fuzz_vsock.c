// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the real virtio-vsock device with its hybrid
 * socket (a per-process path under /tmp) and an in-process listener on
 * host port 5, on virtio-mmio (records: device_harness.h). Host input
 * records are host programs: byte 0 % 6 picks what they do,
 *   0  connect a client to the socket and send "CONNECT <1000 + b1 % 4>\n"
 *   1  the newest client writes the rest of the record
 *   2  the newest client closes
 *   3  the in-process service end writes the rest of the record
 *   4  the service end closes
 *   5  every client reads what is waiting (else they stall the device)
 * Nothing may crash, leak, hang or touch memory outside guest RAM, and the
 * device must keep within its connection limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "device_harness.h"
#include "devices/virtio/virtio_vsock.h"
#include "fuzz.h"

#define MAX_CLIENTS 8

static char path[64];
static int clients[MAX_CLIENTS], nr_clients;
static int service = -1;
static struct virtio_device *dev;

static void on_service(int fd, void *opaque)
{
	if (service >= 0)
		close(service);
	service = fd;
}

static int vsock_init(void)
{
	snprintf(path, sizeof(path), "/tmp/hvm-fuzz-vsock-%d.sock",
		 (int)getpid());
	return 0;
}

static struct virtio_device *vsock_create(const struct virtio_host *host)
{
	unlink(path);
	dev = virtio_vsock_create(host, 3, path);
	if (!dev ||
	    virtio_vsock_add_host_listener(dev, 5, on_service, NULL) < 0)
		abort();
	return dev;
}

static void drain(int fd)
{
	char buf[4096];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static void vsock_host_input(struct virtio_device *vdev, const uint8_t *buf,
			     size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int action = len ? buf[0] % 6 : 5;
	char line[32];
	int fd, n;

	switch (action) {
	case 0:
		if (nr_clients == MAX_CLIENTS)
			break;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			if (fd >= 0)
				close(fd);
			break;
		}
		n = snprintf(line, sizeof(line), "CONNECT %u\n",
			     1000 + (len > 1 ? buf[1] % 4 : 0));
		if (send(fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			break;
		clients[nr_clients++] = fd;
		break;
	case 1:
		if (nr_clients && len > 1)
			send(clients[nr_clients - 1], buf + 1, len - 1,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case 2:
		if (nr_clients)
			close(clients[--nr_clients]);
		break;
	case 3:
		if (service >= 0 && len > 1)
			send(service, buf + 1, len - 1,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case 4:
		if (service >= 0)
			close(service);
		service = -1;
		break;
	default:
		for (int i = 0; i < nr_clients; i++)
			drain(clients[i]);
		if (service >= 0)
			drain(service);
		break;
	}
}

static void vsock_turn_done(void)
{
	check(virtio_vsock_connections(dev) <= VSOCK_MAX_CONNS);
}

static void vsock_input_done(void)
{
	while (nr_clients)
		close(clients[--nr_clients]);
	if (service >= 0)
		close(service);
	service = -1;
	/* The device removed its socket when it went. */
	check(access(path, F_OK) != 0);
}

static const struct fuzz_device vsock = {
	.init = vsock_init,
	.create = vsock_create,
	.host_input = vsock_host_input,
	.turn_done = vsock_turn_done,
	.input_done = vsock_input_done,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_device_init(&vsock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_device_run(&vsock, data, size);
}
