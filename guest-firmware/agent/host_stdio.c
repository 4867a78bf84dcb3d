// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "host_stdio.h"
#include "abi/agent_proto.h"

/* An engine that stopped reading does not hold the VM forever. */
#define STDIO_DRAIN_MS 10000

int agent_connect_host(const char *hybrid_path, unsigned int port)
{
	int fd, err;

	if (hybrid_path) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
				     "%s_%u", hybrid_path,
				     port) >= sizeof(sun.sun_path))
			return -ENAMETOOLONG;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    !connect(fd, (struct sockaddr *)&sun, sizeof(sun)))
			return fd;
	} else {
		struct sockaddr_vm svm = { .svm_family = AF_VSOCK,
					   .svm_cid = VMADDR_CID_HOST,
					   .svm_port = port };

		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    !connect(fd, (struct sockaddr *)&svm, sizeof(svm)))
			return fd;
	}
	err = errno;
	if (fd >= 0)
		close(fd);
	return -err;
}

void agent_stdio_connect(const char *hybrid_path, int fds[3])
{
	static const unsigned int port[3] = { AGENT_STDIN_PORT,
					      AGENT_STDOUT_PORT,
					      AGENT_STDERR_PORT };

	for (int i = 0; i < 3; i++) {
		fds[i] = agent_connect_host(hybrid_path, port[i]);
		if (fds[i] >= 0)
			continue;
		for (int j = 0; j <= i; j++) {
			if (fds[j] >= 0)
				close(fds[j]);
			fds[j] = -1;
		}
		return;
	}
}

/*
 * Our sending side ends first (the process is gone: orphans that kept
 * its stdout lose it too), then the host's close says all is out.
 */
void agent_stdio_finish(int fds[3])
{
	struct pollfd p[2] = { { .fd = fds[1], .events = POLLIN },
			       { .fd = fds[2], .events = POLLIN } };
	int waited = 0;

	if (fds[0] < 0)
		return;
	close(fds[0]);
	shutdown(fds[1], SHUT_WR);
	shutdown(fds[2], SHUT_WR);
	while ((p[0].fd >= 0 || p[1].fd >= 0) && waited < STDIO_DRAIN_MS) {
		char c;

		if (poll(p, 2, 100) <= 0) {
			waited += 100;
			continue;
		}
		for (int i = 0; i < 2; i++)
			if (p[i].revents && read(p[i].fd, &c, 1) <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
			}
	}
	for (int i = 0; i < 2; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	fds[0] = fds[1] = fds[2] = -1;
}
