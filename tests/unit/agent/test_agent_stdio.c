// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The main process's stdio over vsock, host side (agent/agent_stdio.c):
 * the vsock device's ends of the connections are socketpairs here, the
 * embedder's fds are pipes. What a container engine would notice: stderr
 * apart from stdout, the end of stdin reaching the guest, a process that
 * echoes its input not deadlocking, and output the guest sent before the
 * VM ended still arriving after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/agent_stdio.h"
#include "core/config.h"
#include "core/vm.h"
#include "hintvm/hintvm.h"
#include "sandboxed_call.h"

#define WAIT_MS 10000

struct fixture {
	struct hvm_config cfg;
	struct vm vm;
	int in[2], out[2], err[2]; /* the embedder's pipes */
	int guest[AGENT_STDIO_STREAMS]; /* the device's ends */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(config_init_defaults(&f->cfg), 0);
	assert_int_equal(pipe2(f->in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(f->out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(f->err, O_CLOEXEC), 0);
	assert_int_equal(hvm_config_set_agent_stdio_fds(&f->cfg, f->in[0],
							f->out[1], f->err[1]),
			 0);
	f->vm.cfg = &f->cfg;
	/* The copiers under their filter, in the -sandboxed run. */
	sandboxed_threads_begin();
	assert_int_equal(agent_stdio_start(&f->vm), 0);
	sandboxed_threads_end();
	assert_non_null(f->vm.agent_stdio);
	/* What the vsock device does when the guest connects each port. */
	for (int i = 0; i < AGENT_STDIO_STREAMS; i++) {
		int sv[2];

		assert_int_equal(
			socketpair(AF_UNIX,
				   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				   0, sv),
			0);
		agent_stdio_on_connect[i](sv[0], f->vm.agent_stdio);
		f->guest[i] = sv[1];
	}
	*state = f;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	/* hintvm's order: the vsock device (its ends) goes first. */
	for (int i = 0; i < AGENT_STDIO_STREAMS; i++)
		close_fd(&f->guest[i]);
	agent_stdio_destroy(&f->vm);
	for (int i = 0; i < 2; i++) {
		close_fd(&f->in[i]);
		close_fd(&f->out[i]);
		close_fd(&f->err[i]);
	}
	free(f->cfg.sched);
	free(f);
	return 0;
}

/* Read exactly LEN bytes from FD (blocking or not) within WAIT_MS. */
static void read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, WAIT_MS), 1);
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EAGAIN)
			continue;
		assert_true(n > 0);
		got += (size_t)n;
	}
}

/* FD ends (read returns 0) within WAIT_MS, with nothing before it. */
static void assert_eof(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	assert_int_equal(read(fd, &c, 1), 0);
}

static void test_stdout_and_stderr_apart(void **state)
{
	struct fixture *f = *state;
	char buf[16] = { 0 };

	assert_int_equal(write(f->guest[2], "to stderr", 9), 9);
	assert_int_equal(write(f->guest[1], "to stdout", 9), 9);
	read_all(f->out[0], buf, 9);
	assert_string_equal(buf, "to stdout");
	read_all(f->err[0], buf, 9);
	assert_string_equal(buf, "to stderr");
}

static void test_end_of_stdin_reaches_the_guest(void **state)
{
	struct fixture *f = *state;
	char buf[8] = { 0 };

	assert_int_equal(write(f->in[1], "input", 5), 5);
	close_fd(&f->in[1]);
	read_all(f->guest[0], buf, 5);
	assert_string_equal(buf, "input");
	assert_eof(f->guest[0]);
}

/*
 * `cat` in the guest: it echoes stdin to stdout while the engine writes
 * 4 MiB and reads only when its write would block. One copier for both
 * directions deadlocks here once every buffer is full.
 */
static void test_echo_does_not_deadlock(void **state)
{
	struct fixture *f = *state;
	const size_t total = 4u << 20;
	size_t sent = 0, echoed = 0, received = 0, held = 0;
	static char chunk[65536], echo[65536], back[65536];

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)(i * 7);
	while (received < total) {
		struct pollfd p[4] = {
			{ .fd = sent < total ? f->in[1] : -1,
			  .events = POLLOUT },
			{ .fd = held ? -1 : f->guest[0], .events = POLLIN },
			{ .fd = held ? f->guest[1] : -1, .events = POLLOUT },
			{ .fd = f->out[0], .events = POLLIN },
		};
		ssize_t n;

		assert_true(poll(p, 4, WAIT_MS) > 0);
		if (p[0].revents & POLLOUT) {
			size_t want = total - sent < 4096 ? total - sent : 4096;

			n = write(f->in[1], chunk + sent % sizeof(chunk), want);
			assert_true(n > 0);
			sent += (size_t)n;
			if (sent == total)
				close_fd(&f->in[1]);
		}
		if (p[1].revents & POLLIN) {
			n = read(f->guest[0], echo, sizeof(echo));
			if (n > 0)
				held = (size_t)n;
		}
		if (p[2].revents & POLLOUT) {
			n = write(f->guest[1], echo, held);
			if (n > 0) {
				memmove(echo, echo + n, held - (size_t)n);
				held -= (size_t)n;
				echoed += (size_t)n;
			}
		}
		if (p[3].revents & POLLIN) {
			n = read(f->out[0], back, sizeof(back));
			assert_true(n > 0);
			for (ssize_t i = 0; i < n; i++)
				assert_int_equal(back[i],
						 chunk[(received + (size_t)i) %
						       sizeof(chunk)]);
			received += (size_t)n;
		}
	}
	assert_int_equal(received, total);
	assert_eof(f->guest[0]); /* and stdin ended after the last byte */
}

static void *destroy_thread(void *arg)
{
	agent_stdio_destroy(arg);
	return NULL;
}

/*
 * The VM ends with output still in flight: the vsock device, destroyed
 * first, closed its ends with data unread, and the embedder's reader is
 * behind. Teardown delivers it all, then the copiers stop.
 */
static void test_teardown_delivers_what_was_sent(void **state)
{
	struct fixture *f = *state;
	static char data[100000], got[1 << 20];
	struct pollfd p = { .fd = f->out[1], .events = POLLOUT };
	pthread_t destroyer;
	size_t filler = 0;

	/* The embedder's pipe full: the copier waits for room. */
	while (poll(&p, 1, 0) == 1) {
		assert_int_equal(write(f->out[1], "ffff", 4), 4);
		filler += 4;
	}
	memset(data, 'x', sizeof(data));
	data[sizeof(data) - 1] = '!';
	assert_int_equal(write(f->guest[1], data, sizeof(data)),
			 (ssize_t)sizeof(data));
	close_fd(&f->guest[1]);
	/* The stop is pending before there is room (either order passes). */
	assert_int_equal(
		pthread_create(&destroyer, NULL, destroy_thread, &f->vm), 0);
	usleep(200 * 1000);
	read_all(f->out[0], got, filler + sizeof(data));
	pthread_join(destroyer, NULL);
	close_fd(&f->out[1]);
	assert_int_equal(read(f->out[0], got, 1), 0);
	assert_memory_equal(got + filler, data, sizeof(data));
}

static void test_second_connection_is_refused(void **state)
{
	struct fixture *f = *state;
	int sv[2];
	char c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
			 0);
	agent_stdio_on_connect[1](sv[0], f->vm.agent_stdio);
	assert_eof(sv[1]);
	close(sv[1]);
	/* The first stdout connection still works. */
	assert_int_equal(write(f->guest[1], "still", 5), 5);
	read_all(f->out[0], &c, 1);
	assert_int_equal(c, 's');
}

static void test_all_three_or_none(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_non_null(cfg);
	assert_int_equal(hvm_config_set_agent_stdio_fds(cfg, 0, -1, 2),
			 -EINVAL);
	assert_non_null(strstr(hvm_last_error(), "all three"));
	assert_int_equal(hvm_config_set_agent_stdio_fds(cfg, -1, -1, -1), 0);
	assert_int_equal(hvm_config_set_agent_stdio_fds(cfg, 0, 1, 2), 0);
	hvm_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stdout_and_stderr_apart,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_end_of_stdin_reaches_the_guest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_echo_does_not_deadlock,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_teardown_delivers_what_was_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_second_connection_is_refused, setup, teardown),
		cmocka_unit_test(test_all_three_or_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
