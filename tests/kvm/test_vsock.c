// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-vsock end to end on a real /dev/kvm: the test kernel's vsock
 * payload (guest-firmware/common/vsock_guest.c, driven by
 * guest-firmware/x86/payload_vsock.c) first attacks the device with
 * hostile packets (bad length, bad CIDs, unknown ops, wrong type, a
 * spoofed source, a credit overrun against this test's listener at
 * PATH_7000, a lying fwd_cnt, a second REQUEST) and must see an RST for
 * each (nothing for the spoofed one) with the device still healthy; then
 * it serves, and this test drives it through the hybrid socket like any
 * host program: a checked echo stream, half-close, 1024 connections open
 * at once each carrying its own byte, a sink and a source stream checked
 * byte by byte, a refused port, and port 1 to end it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <cmocka.h>

#include "kvm_test.h"

#define NR_CONNS 1024
#define SOURCE_KB 2048

static char dir[64], uds[80], listen_path[96];
static int listen_fd = -1;
static bool many_done; /* the 1024-connection part ran */

struct vm_thread {
	pthread_t thread;
	struct guest_run run;
	int ret;
	const char *cmdline;
	char option[200];
};

static void *boot(void *arg)
{
	struct vm_thread *t = arg;
	const char *extra[] = { t->option, NULL };

	t->ret = guest_boot(&t->run, NULL, 1, t->cmdline, extra);
	return NULL;
}

/* The guest's peer for its hostile client: accepts, never reads. */
static void *sink_listener(void *arg)
{
	static int held[64]; /* open until the process ends */
	unsigned int n = 0;

	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);
		int small = 4096;

		if (fd < 0)
			return NULL;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		if (n < 64)
			held[n++] = fd;
		else
			close(fd);
		__asm__ volatile("" : : "r"(held) : "memory");
	}
}

static int uds_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", uds);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read one line with a 10 s limit; the length, 0 on EOF, -1 on timeout. */
static int read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 10000) <= 0)
			return -1;
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return r < 0 ? -1 : 0;
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = 0;
	return (int)n;
}

static void send_connect(int fd, unsigned int port)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "CONNECT %u\n", port);

	assert_int_equal(write(fd, line, (size_t)n), n);
}

/* CONNECT PORT and expect "OK <n>\n"; the socket. */
static int guest_connect(unsigned int port)
{
	char line[64];
	int fd = uds_connect();

	assert_true(fd >= 0);
	send_connect(fd, port);
	assert_true(read_line(fd, line, sizeof(line)) > 0);
	assert_memory_equal(line, "OK ", 3);
	return fd;
}

/* Write BUF and read back LEN echoed bytes, interleaved (the guest's
 * echo buffer is small, so both must progress). */
static void echo_round_trip(int fd, const uint8_t *buf, size_t len)
{
	uint8_t *back = malloc(len);
	size_t sent = 0, got = 0;

	while (got < len) {
		struct pollfd p = {
			.fd = fd, .events = POLLIN | (sent < len ? POLLOUT : 0)
		};

		assert_true(poll(&p, 1, 10000) > 0);
		if ((p.revents & POLLOUT) && sent < len) {
			ssize_t n =
				send(fd, buf + sent, len - sent, MSG_DONTWAIT);

			assert_true(n > 0 || errno == EAGAIN);
			if (n > 0)
				sent += (size_t)n;
		}
		if (p.revents & POLLIN) {
			ssize_t n =
				recv(fd, back + got, len - got, MSG_DONTWAIT);

			assert_true(n > 0);
			got += (size_t)n;
		}
	}
	assert_memory_equal(back, buf, len);
	free(back);
}

static void expect_eof(int fd)
{
	char c;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_true(poll(&p, 1, 10000) > 0);
	assert_int_equal(read(fd, &c, 1), 0);
}

static void drive(void)
{
	static uint8_t data[256 * 1024];
	static int fds[NR_CONNS];
	struct rlimit rl;
	char line[64];
	int fd;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + (i >> 8));
	/* Echo, then half-close: the rest comes back, then EOF. */
	fd = guest_connect(1234);
	echo_round_trip(fd, data, sizeof(data));
	echo_round_trip(fd, data, 3);
	shutdown(fd, SHUT_WR);
	expect_eof(fd);
	close(fd);

	/* 1024 at once (opened 64 handshakes at a time). */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur >= 2 * NR_CONNS + 256) {
		for (unsigned int i = 0; i < NR_CONNS; i += 64) {
			for (unsigned int k = i; k < i + 64; k++) {
				fds[k] = uds_connect();
				assert_true(fds[k] >= 0);
				send_connect(fds[k], 1234);
			}
			for (unsigned int k = i; k < i + 64; k++) {
				assert_true(read_line(fds[k], line,
						      sizeof(line)) > 0);
				assert_memory_equal(line, "OK ", 3);
			}
		}
		for (unsigned int i = 0; i < NR_CONNS; i++) {
			uint8_t b = (uint8_t)(i * 7);

			assert_int_equal(write(fds[i], &b, 1), 1);
		}
		for (unsigned int i = 0; i < NR_CONNS; i++) {
			struct pollfd p = { .fd = fds[i], .events = POLLIN };
			uint8_t b;

			assert_true(poll(&p, 1, 10000) > 0);
			assert_int_equal(read(fds[i], &b, 1), 1);
			assert_int_equal(b, (uint8_t)(i * 7));
		}
		for (unsigned int i = 0; i < NR_CONNS; i++)
			close(fds[i]);
		many_done = true;
	} else {
		printf("# RLIMIT_NOFILE %llu: skipping the 1024-connection part\n",
		       (unsigned long long)rl.rlim_cur);
	}

	/* Sink: 1 MiB in, then our EOF; the guest closes after it. */
	fd = guest_connect(1235);
	for (int i = 0; i < 4; i++)
		assert_int_equal(write(fd, data, sizeof(data)),
				 (ssize_t)sizeof(data));
	shutdown(fd, SHUT_WR);
	expect_eof(fd);
	close(fd);

	/* Source: SOURCE_KB KiB of the guest's pattern, then EOF. */
	fd = guest_connect(1236);
	{
		size_t total = 0;
		uint8_t buf[65536];
		ssize_t n;
		bool pattern_ok = true;

		for (;;) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			assert_true(poll(&p, 1, 10000) > 0);
			n = read(fd, buf, sizeof(buf));
			assert_true(n >= 0);
			if (n == 0)
				break;
			for (ssize_t k = 0; k < n; k++)
				pattern_ok &= buf[k] ==
					      (uint8_t)((total + k) * 7 + 1);
			total += (size_t)n;
		}
		assert_true(pattern_ok);
		assert_int_equal(total, SOURCE_KB * 1024);
	}
	close(fd);

	/* Nobody listens on guest port 4444: closed without OK. */
	fd = uds_connect();
	send_connect(fd, 4444);
	assert_int_equal(read_line(fd, line, sizeof(line)), 0);
	close(fd);

	/* Port 1 ends the payload. */
	fd = uds_connect();
	send_connect(fd, 1);
	read_line(fd, line, sizeof(line));
	close(fd);
}

static void test_vsock_payload(void **state)
{
	struct vm_thread t = { .cmdline = "test=vsock vsock.ms=120000 "
					  "vsock.source_kb=2048" };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pthread_t listener;
	struct stat st;
	char ok[8];

	snprintf(dir, sizeof(dir), "/tmp/hvm-kvm-vsock-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(uds, sizeof(uds), "%s/v.sock", dir);
	snprintf(listen_path, sizeof(listen_path), "%s_7000", uds);
	snprintf(t.option, sizeof(t.option), "vsock=cid=3,uds=%s", uds);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", listen_path);
	assert_int_equal(bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)),
			 0);
	assert_int_equal(listen(listen_fd, 16), 0);
	assert_int_equal(pthread_create(&listener, NULL, sink_listener, NULL),
			 0);
	assert_int_equal(pthread_create(&t.thread, NULL, boot, &t), 0);
	for (int i = 0; i < 1000 && stat(uds, &st) < 0; i++)
		usleep(10000);
	assert_int_equal(stat(uds, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	drive();
	pthread_join(t.thread, NULL);
	assert_int_equal(t.ret, 0);
	snprintf(ok, sizeof(ok), "%s",
		 result_field(&t.run, "ok") ? result_field(&t.run, "ok") : "-");
	if (strcmp(ok, "1"))
		printf("--- guest output ---\n%s\n", t.run.output);
	assert_int_equal(t.run.exit.reason, HVM_EXIT_POWEROFF);
	assert_string_equal(result_field(&t.run, "hostile"), "14/14");
	assert_string_equal(result_field(&t.run, "quit"), "1");
	assert_string_equal(result_field(&t.run, "device_ok"), "1");
	if (many_done)
		assert_true(strtoul(result_field(&t.run, "conns_max"), NULL,
				    10) >= NR_CONNS);
	assert_int_equal(strtoull(result_field(&t.run, "sunk"), NULL, 10),
			 1024 * 1024);
	assert_string_equal(ok, "1");
	/* The socket went with the VM. */
	assert_int_equal(stat(uds, &st), -1);
	guest_run_free(&t.run);
	shutdown(listen_fd, SHUT_RDWR);
	close(listen_fd);
	pthread_join(listener, NULL);
	unlink(listen_path);
	rmdir(dir);
}

static void test_no_device_without_option(void **state)
{
	struct guest_run run;

	assert_int_equal(
		guest_boot(&run, NULL, 1, "test=vsock vsock.ms=10", NULL), 0);
	assert_string_equal(result_field(&run, "ok"), "0");
	assert_non_null(strstr(run.output, "no virtio-vsock"));
	guest_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vsock_payload),
		cmocka_unit_test(test_no_device_without_option),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
