// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hvm-vsock: both ends of the nested e2e tier's virtio-vsock checks, static
 * so it runs in the busybox L1 and in the L2 initramfs alike.
 *
 * In the guest (AF_VSOCK):
 *   hvm-vsock echo PORT          serve PORT: echo every connection (a
 *                                child each) until killed
 *   hvm-vsock wait PORT          accept one connection on PORT, then exit
 *   hvm-vsock call CID PORT MSG  connect, send MSG, shut down writing, print
 *                                "reply=<what came back>" (or "error=...")
 * On the host (hintvm's hybrid socket, docs/virtio.md):
 *   hvm-vsock host-echo UDS PORT BYTES   stream BYTES of a pattern through
 *                                        the guest's echo, check them; prints
 *                                        "ok=1 bytes=N ms=T mb_s=X"
 *   hvm-vsock host-many UDS PORT N       N connections open at once, each
 *                                        echoes its own byte; "ok=1 conns=N"
 *   hvm-vsock host-connect UDS PORT      print the answer line ("OK <n>")
 *                                        or "closed"
 *   hvm-vsock host-serve PATH            listen on PATH (what a guest
 *                                        connection to host port P dials as
 *                                        UDS_P), answer one connection with
 *                                        "pong:" + what it sent
 *   hvm-vsock host-hold PATH             listen on PATH, accept every
 *                                        connection and never read (the
 *                                        test kernel's credit overrun)
 * Exit status 0 when the claim held, 1 otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail(const char *what)
{
	printf("ok=0 error=%s:%s\n", what, strerror(errno));
	return 1;
}

static int vsock_listen(unsigned int port)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK,
				  .svm_cid = VMADDR_CID_ANY,
				  .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0)
		return -1;
	return fd;
}

static void echo_conn(int c)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(c, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(c, buf + off, (size_t)(n - off));

			if (w <= 0)
				_exit(1);
			off += w;
		}
	}
	_exit(0);
}

static int cmd_echo(unsigned int port)
{
	int fd = vsock_listen(port);

	if (fd < 0)
		return fail("listen");
	signal(SIGCHLD, SIG_IGN); /* no zombies */
	for (;;) {
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			continue;
		if (fork() == 0) {
			close(fd);
			echo_conn(c);
		}
		close(c);
	}
}

static int cmd_wait(unsigned int port)
{
	int fd = vsock_listen(port), c;

	if (fd < 0)
		return fail("listen");
	c = accept(fd, NULL, NULL);
	return c < 0 ? fail("accept") : 0;
}

static int cmd_call(unsigned int cid, unsigned int port, const char *msg)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK,
				  .svm_cid = cid,
				  .svm_port = port };
	char reply[256];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail("connect");
	if (write(fd, msg, strlen(msg)) != (ssize_t)strlen(msg))
		return fail("write");
	shutdown(fd, SHUT_WR);
	while (got < sizeof(reply) - 1 &&
	       (n = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0)
		got += (size_t)n;
	reply[got] = 0;
	printf("reply=%s\n", reply);
	return 0;
}

static int uds_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	return fd;
}

/* "CONNECT PORT\n", then the answer line into LINE; its length or 0. */
static size_t hybrid_connect(int fd, unsigned int port, char *line, size_t size)
{
	char req[32];
	int len = snprintf(req, sizeof(req), "CONNECT %u\n", port);
	size_t n = 0;

	if (write(fd, req, (size_t)len) != len)
		return 0;
	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 30000) <= 0 || read(fd, line + n, 1) != 1)
			break;
		if (line[n++] == '\n')
			break;
	}
	line[n] = 0;
	return n && line[n - 1] == '\n' ? n : 0;
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 31 + (i >> 10));
}

static int cmd_host_echo(const char *uds, unsigned int port, size_t bytes)
{
	static unsigned char out[65536], in[65536];
	size_t sent = 0, got = 0;
	char line[64];
	double t0;
	int fd = uds_connect(uds);

	if (fd < 0)
		return fail("uds");
	if (!hybrid_connect(fd, port, line, sizeof(line)) ||
	    strncmp(line, "OK ", 3)) {
		printf("ok=0 error=refused\n");
		return 1;
	}
	t0 = now_ms();
	while (got < bytes) {
		struct pollfd p = { .fd = fd,
				    .events = POLLIN |
					      (sent < bytes ? POLLOUT : 0) };

		if (poll(&p, 1, 30000) <= 0)
			return fail("stalled");
		if ((p.revents & POLLOUT) && sent < bytes) {
			size_t n = bytes - sent < sizeof(out) ? bytes - sent
							      : sizeof(out);
			ssize_t w;

			for (size_t i = 0; i < n; i++)
				out[i] = pattern(sent + i);
			w = send(fd, out, n, MSG_DONTWAIT);
			if (w < 0 && errno != EAGAIN)
				return fail("send");
			if (w > 0)
				sent += (size_t)w;
		}
		if (p.revents & (POLLIN | POLLHUP)) {
			ssize_t r = recv(fd, in, sizeof(in), MSG_DONTWAIT);

			if (r <= 0)
				return fail("echo ended early");
			for (ssize_t i = 0; i < r; i++)
				if (in[i] != pattern(got + (size_t)i)) {
					printf("ok=0 error=mismatch at %zu\n",
					       got + (size_t)i);
					return 1;
				}
			got += (size_t)r;
		}
	}
	{
		double ms = now_ms() - t0;

		shutdown(fd, SHUT_WR);
		printf("ok=%d bytes=%zu ms=%.1f mb_s=%.2f\n",
		       read(fd, in, 1) == 0, got, ms,
		       ms > 0 ? got / 1e3 / ms : 0);
	}
	return 0;
}

static int cmd_host_many(const char *uds, unsigned int port, int nr)
{
	int *fds = calloc((size_t)nr, sizeof(int));
	char line[64];

	for (int i = 0; i < nr; i++) {
		fds[i] = uds_connect(uds);
		if (fds[i] < 0 ||
		    !hybrid_connect(fds[i], port, line, sizeof(line)) ||
		    strncmp(line, "OK ", 3)) {
			printf("ok=0 error=connection %d refused\n", i);
			return 1;
		}
	}
	for (int i = 0; i < nr; i++) {
		unsigned char b = (unsigned char)i;

		if (write(fds[i], &b, 1) != 1)
			return fail("write");
	}
	for (int i = 0; i < nr; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };
		unsigned char b;

		if (poll(&p, 1, 30000) <= 0 || read(fds[i], &b, 1) != 1 ||
		    b != (unsigned char)i) {
			printf("ok=0 error=connection %d: no echo\n", i);
			return 1;
		}
	}
	for (int i = 0; i < nr; i++)
		close(fds[i]);
	printf("ok=1 conns=%d\n", nr);
	return 0;
}

static int cmd_host_connect(const char *uds, unsigned int port)
{
	char line[64];
	int fd = uds_connect(uds);

	if (fd < 0)
		return fail("uds");
	if (!hybrid_connect(fd, port, line, sizeof(line))) {
		printf("closed\n");
		return 0;
	}
	printf("%s", line);
	return 0;
}

static int cmd_host_serve(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[200];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), c;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 4) < 0)
		return fail("listen");
	c = accept(fd, NULL, NULL);
	if (c < 0)
		return fail("accept");
	while (got < sizeof(buf) - 1 &&
	       (n = read(c, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	dprintf(c, "pong:%s", buf);
	close(c);
	unlink(path);
	printf("ok=1 served=%s\n", buf);
	return 0;
}

static int cmd_host_hold(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 16) < 0)
		return fail("listen");
	for (;;) {
		int small = 4096, c = accept(fd, NULL, NULL);

		/* Kept open, never read, until the process is killed. */
		if (c >= 0)
			setsockopt(c, SOL_SOCKET, SO_RCVBUF, &small,
				   sizeof(small));
	}
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "echo") && argc == 3)
		return cmd_echo((unsigned int)atoi(argv[2]));
	if (!strcmp(cmd, "wait") && argc == 3)
		return cmd_wait((unsigned int)atoi(argv[2]));
	if (!strcmp(cmd, "call") && argc == 5)
		return cmd_call((unsigned int)atoi(argv[2]),
				(unsigned int)atoi(argv[3]), argv[4]);
	if (!strcmp(cmd, "host-echo") && argc == 5)
		return cmd_host_echo(argv[2], (unsigned int)atoi(argv[3]),
				     (size_t)atoll(argv[4]));
	if (!strcmp(cmd, "host-many") && argc == 5)
		return cmd_host_many(argv[2], (unsigned int)atoi(argv[3]),
				     atoi(argv[4]));
	if (!strcmp(cmd, "host-connect") && argc == 4)
		return cmd_host_connect(argv[2], (unsigned int)atoi(argv[3]));
	if (!strcmp(cmd, "host-serve") && argc == 3)
		return cmd_host_serve(argv[2]);
	if (!strcmp(cmd, "host-hold") && argc == 3)
		return cmd_host_hold(argv[2]);
	fprintf(stderr,
		"usage: hvm-vsock echo PORT | wait PORT | call CID PORT MSG |\n"
		"       host-echo UDS PORT BYTES | host-many UDS PORT N |\n"
		"       host-connect UDS PORT | host-serve PATH | host-hold PATH\n");
	return 2;
}
