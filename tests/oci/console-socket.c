// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * console-socket: the engine's end of `--console-socket` for the oci
 * tier's tests, as containerd's shim and conmon hold it (runc's recvtty,
 * reduced): listen on SOCKET, take the one pseudo-terminal master a
 * runtime sends (SCM_RIGHTS), then copy stdin to it and it to OUT, byte
 * for byte, until the terminal's last other user closes it (the container
 * ended). OUT gets exactly what the container's terminal wrote, so a test
 * can look at its line ends.
 *
 *   console-socket SOCKET OUT
 *
 * SOCKET exists once the tool listens. Exit status: 0 when the terminal
 * was closed, 1 on an error (said on stderr). Static: the L1 root has only
 * the libraries its packages brought.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Say what failed, with errno's reason; returns the exit status 1. */
static int complain(const char *what)
{
	fprintf(stderr, "console-socket: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Accept one connection on PATH and return the fd it carries, or -1. */
static int receive_master(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char data;
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cmsg;
	int sock, conn, fd = -1;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		complain(path);
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(sock, 1)) {
		complain(path);
		return -1;
	}
	conn = accept4(sock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0) {
		complain("accept");
		return -1;
	}
	memset(&control, 0, sizeof(control));
	if (recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) <= 0) {
		complain("recvmsg");
		return -1;
	}
	cmsg = CMSG_FIRSTHDR(&msg);
	if (cmsg && cmsg->cmsg_level == SOL_SOCKET &&
	    cmsg->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	else
		fprintf(stderr, "console-socket: no fd in the message\n");
	close(conn);
	close(sock);
	unlink(path);
	return fd;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pollfd fds[2];
	char buf[4096];
	int master, out;

	if (argc != 3) {
		fprintf(stderr, "usage: console-socket SOCKET OUT\n");
		return 2;
	}
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return complain(argv[2]);
	master = receive_master(argv[1]);
	if (master < 0)
		return 1;
	fds[0] = (struct pollfd){ .fd = master, .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	for (;;) {
		ssize_t n;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return complain("poll");
		}
		if (fds[0].revents) {
			n = read(master, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return 0; /* EIO: every slave fd is closed */
			if (write_all(out, buf, (size_t)n))
				return complain(argv[2]);
		}
		if (fds[1].revents) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0)
				fds[1].fd =
					-1; /* stdin ended: keep copying out */
			else if (write_all(master, buf, (size_t)n))
				return complain("writing to the terminal");
		}
	}
}
