// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm ctl PATH REQUEST: one request to a running VM's control socket;
 * prints the JSON reply. Exit 0 when the VM answered ok, 1 when it refused,
 * 2 when there was nobody to ask.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"

#define REPLY_TIMEOUT_MS 5000

static void usage(FILE *out)
{
	fprintf(out, "usage: hintvm ctl SOCKET REQUEST\n\n"
		     "Send REQUEST to the control socket of a VM started with\n"
		     "`hintvm run --control SOCKET`. Requests: status, pause,\n"
		     "resume, stop. Prints the VM's one-line JSON reply.\n");
}

int cmd_ctl(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct iovec line[2];
	struct msghdr msg;
	char reply[4096];
	size_t used = 0;
	int fd;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (argc != 3) {
		usage(stderr);
		return 2;
	}
	if (strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "hintvm ctl: socket path '%s' is too long\n",
			argv[1]);
		return 2;
	}
	strcpy(addr.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		fprintf(stderr,
			"hintvm ctl: cannot connect to %s: %s (is a VM running with --control %s?)\n",
			argv[1], strerror(errno), argv[1]);
		return 2;
	}
	/*
	 * No SIGPIPE: a VM that refuses us (another user) answers and closes
	 * before the request is sent; its reply is still there to read.
	 */
	line[0] = (struct iovec){ argv[2], strlen(argv[2]) };
	line[1] = (struct iovec){ "\n", 1 };
	msg = (struct msghdr){ .msg_iov = line, .msg_iovlen = 2 };
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0 && errno != EPIPE)
		fprintf(stderr, "hintvm ctl: cannot send to %s: %s\n", argv[1],
			strerror(errno));
	while (used < sizeof(reply) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, REPLY_TIMEOUT_MS) <= 0)
			break;
		n = read(fd, reply + used, sizeof(reply) - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		if (memchr(reply, '\n', used))
			break;
	}
	close(fd);
	reply[used] = '\0';
	if (!used) {
		fprintf(stderr, "hintvm ctl: %s did not answer\n", argv[1]);
		return 2;
	}
	fputs(reply, stdout);
	return strstr(reply, "\"ok\":true") ? 0 : 1;
}
