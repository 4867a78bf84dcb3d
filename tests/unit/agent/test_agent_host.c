// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The exit-report server of `hintvm run --agent` (agent/agent_host.c),
 * driven as the vsock device drives it: each guest connection to host
 * port 1025 is one end of a socketpair handed to agent_host_on_connect().
 * What a user would notice: a guest that opens silent connections ahead
 * of its real report does not delay the status (it once cost 5 s each),
 * and one that opens many does not make hintvm hold their fds.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "abi/agent_proto.h"
#include "agent/agent_host.h"
#include "core/config.h"
#include "core/vm.h"
#include "hintvm/hintvm.h"
#include "sandboxed_call.h"

#define WAIT_MS 10000
/* Far below one silent connection's 5 s deadline. */
#define PROMPT_MS 1000

struct fixture {
	struct hvm_config cfg;
	struct vm vm;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(config_init_defaults(&f->cfg), 0);
	f->vm.cfg = &f->cfg;
	/* The report thread under its filter, in the -sandboxed run. */
	sandboxed_threads_begin();
	assert_int_equal(agent_host_start(&f->vm), 0);
	sandboxed_threads_end();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	agent_host_destroy(&f->vm);
	free(f->cfg.sched);
	free(f);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A guest connection to port 1025: hintvm's end goes to the server. */
static int guest_connect(struct fixture *f)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
			 0);
	agent_host_on_connect(sv[0], &f->vm);
	return sv[1];
}

/* Send EXIT_REPORT with exit code CODE (or, with SIGNAL, killed by it)
 * and OOM kills (HVM_GUEST_STAT_UNKNOWN: none sent), as oci-init does. */
static void send_report_oom(int fd, uint32_t code, uint32_t signal,
			    uint64_t oom_kills)
{
	uint8_t frame[128];
	struct agent_builder b;
	int len;

	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_EXIT_REPORT, 1);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	agent_put_u32(&b, AGENT_ATTR_PID, 42);
	if (signal)
		agent_put_u32(&b, AGENT_ATTR_TERM_SIGNAL, signal);
	else
		agent_put_u32(&b, AGENT_ATTR_EXIT_CODE, code);
	if (oom_kills != HVM_GUEST_STAT_UNKNOWN)
		agent_put_u64(&b, AGENT_ATTR_OOM_KILLS, oom_kills);
	len = agent_build_end(&b);
	assert_true(len > 0);
	assert_int_equal(send(fd, frame, (size_t)len, MSG_NOSIGNAL), len);
}

static void send_report(int fd, uint32_t code)
{
	send_report_oom(fd, code, 0, HVM_GUEST_STAT_UNKNOWN);
}

/* What hintvm answers on FD within MS: the OK header, or 0 (EOF). */
static ssize_t read_answer(int fd, uint8_t *buf, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, ms), 1);
	return recv(fd, buf, AGENT_HDR_SIZE, MSG_WAITALL);
}

/* FD's other end was closed at once: hintvm refused the connection. */
static bool refused(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, 0) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

static void assert_acknowledged(int fd, int ms)
{
	uint8_t buf[AGENT_HDR_SIZE];
	struct agent_hdr hdr;

	assert_int_equal(read_answer(fd, buf, ms), AGENT_HDR_SIZE);
	assert_int_equal(agent_hdr_decode(buf, &hdr), 0);
	assert_int_equal(hdr.type, AGENT_MSG_OK);
}

static void test_report_is_recorded_and_acknowledged(void **state)
{
	struct fixture *f = *state;
	int fd = guest_connect(f), status = -1;

	assert_false(agent_host_status(&f->vm, &status));
	send_report(fd, 3);
	assert_acknowledged(fd, WAIT_MS);
	assert_true(agent_host_status(&f->vm, &status));
	assert_int_equal(status, 3);
	close(fd);
}

/*
 * The OOM kills oci-init sends with the exit come out with the status
 * (hvm_exit.guest_oom_kills): the VM is gone after, so this is the only
 * way a task's OOM reaches the shim. A report without them says unknown.
 */
static void test_report_carries_oom_kills(void **state)
{
	struct fixture *f = *state;
	int fd = guest_connect(f), status = -1;

	assert_int_equal(agent_host_oom_kills(&f->vm), HVM_GUEST_STAT_UNKNOWN);
	send_report_oom(fd, 0, SIGKILL, 2);
	assert_acknowledged(fd, WAIT_MS);
	assert_true(agent_host_status(&f->vm, &status));
	assert_int_equal(status, 128 + SIGKILL);
	assert_int_equal(agent_host_oom_kills(&f->vm), 2);
	close(fd);
}

static void test_report_without_oom_kills(void **state)
{
	struct fixture *f = *state;
	int fd = guest_connect(f), status = -1;

	send_report(fd, 5);
	assert_acknowledged(fd, WAIT_MS);
	assert_true(agent_host_status(&f->vm, &status));
	assert_int_equal(status, 5);
	assert_int_equal(agent_host_oom_kills(&f->vm), HVM_GUEST_STAT_UNKNOWN);
	close(fd);
}

/*
 * Every other slot taken by a silent connection, one with half a header:
 * the real report behind them is served at once, not after their 5 s
 * deadlines one after another.
 */
static void test_silent_connections_do_not_delay_the_report(void **state)
{
	struct fixture *f = *state;
	int silent[AGENT_REPORT_MAX_PENDING - 1], fd, status = -1;
	int64_t start;

	for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING - 1; i++)
		silent[i] = guest_connect(f);
	assert_int_equal(send(silent[0], "\x10\0\0", 3, MSG_NOSIGNAL), 3);
	start = now_ms();
	fd = guest_connect(f);
	send_report(fd, 7);
	assert_acknowledged(fd, WAIT_MS);
	assert_true(now_ms() - start < PROMPT_MS);
	assert_true(agent_host_status(&f->vm, &status));
	assert_int_equal(status, 7);
	assert_int_equal(atomic_load(&f->vm.agent_reports_refused), 0);
	close(fd);
	for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING - 1; i++)
		close(silent[i]);
}

/*
 * One connection over the bound is closed at once and counted; when a
 * pending one goes away its slot serves the next report.
 */
static void test_connections_over_the_bound_are_closed(void **state)
{
	struct fixture *f = *state;
	int silent[AGENT_REPORT_MAX_PENDING], fd, status = -1;
	int64_t start;

	for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING; i++)
		silent[i] = guest_connect(f);
	fd = guest_connect(f);
	assert_true(refused(fd)); /* at once: no wait for a deadline */
	close(fd);
	assert_int_equal(atomic_load(&f->vm.agent_reports_refused), 1);
	assert_false(agent_host_status(&f->vm, &status));

	/* A guest that gives a connection up frees its slot. */
	close(silent[0]);
	start = now_ms();
	while (refused(fd = guest_connect(f))) {
		/* The server has not seen the close yet. */
		close(fd);
		assert_true(now_ms() - start < PROMPT_MS);
		usleep(10 * 1000);
	}
	send_report(fd, 9);
	assert_acknowledged(fd, WAIT_MS);
	assert_true(agent_host_status(&f->vm, &status));
	assert_int_equal(status, 9);
	close(fd);
	for (unsigned int i = 1; i < AGENT_REPORT_MAX_PENDING; i++)
		close(silent[i]);
}

/* A connection that never completes its frame is closed at its deadline. */
static void test_silent_connection_ends_at_its_deadline(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[AGENT_HDR_SIZE];
	int fd = guest_connect(f);
	int64_t start = now_ms(), took;

	assert_int_equal(send(fd, "\x10\0", 2, MSG_NOSIGNAL), 2);
	assert_int_equal(read_answer(fd, buf, WAIT_MS), 0);
	took = now_ms() - start;
	assert_true(took >= 4000 && took < 8000); /* REPORT_TIMEOUT_MS: 5 s */
	close(fd);
}

/* A frame larger than any report closes its connection unanswered. */
static void test_oversized_report_is_refused(void **state)
{
	struct fixture *f = *state;
	uint8_t hdr[AGENT_HDR_SIZE], buf[AGENT_HDR_SIZE];
	int fd = guest_connect(f), status = -1;

	agent_hdr_encode(hdr,
			 &(struct agent_hdr){ .len = 64 * 1024,
					      .type = AGENT_MSG_EXIT_REPORT,
					      .id = 1 });
	assert_int_equal(send(fd, hdr, sizeof(hdr), MSG_NOSIGNAL),
			 (ssize_t)sizeof(hdr));
	assert_int_equal(read_answer(fd, buf, WAIT_MS), 0);
	assert_false(agent_host_status(&f->vm, &status));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_report_is_recorded_and_acknowledged, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_report_carries_oom_kills,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_without_oom_kills,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_silent_connections_do_not_delay_the_report, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_connections_over_the_bound_are_closed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_silent_connection_ends_at_its_deadline, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_oversized_report_is_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
