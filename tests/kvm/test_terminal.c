// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `hintvm run` on a terminal, as a user at a keyboard meets it: a line
 * typed before the guest reads its console arrives whole once the guest
 * opens its serial port the way Linux's 8250 driver does (the test
 * kernel's typeahead payload); the user's own terminal keeps translating
 * the guest's bare "\n" into one CR LF and comes back as it was, while a
 * terminal handed over fully raw (as hintvm-runtime hands a container's)
 * gets the guest's bytes unchanged. The terminal is a pseudo-terminal
 * whose slave is hintvm's controlling terminal and stdio.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "kvm_test.h"

/* 49 bytes: three times the 16-byte FIFO a driver's resets used to eat. */
#define TYPED "typed-ahead-before-the-guest-was-ready-0123456789"
#define RESULT_LINE "RESULT test=typeahead cpus=1 ok=1 got=" TYPED " len=49"
#define TIMEOUT_MS 120000

struct session {
	pid_t pid;
	int master;
	int slave; /* kept open here to read its settings */
	char out[65536];
	size_t len;
	int status;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* hintvm run with the pty's slave as its terminal; RAW: make it raw first. */
static void start(struct session *s, bool raw)
{
	const char *hintvm = getenv("HINTVM");
	const char *irqchip = getenv("KVM_TEST_IRQCHIP");
	struct termios t;
	char *name;

	if (!hintvm)
		fail_msg("HINTVM (the hintvm binary) is not set");
	memset(s, 0, sizeof(*s));
	s->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(s->master >= 0);
	assert_int_equal(grantpt(s->master), 0);
	assert_int_equal(unlockpt(s->master), 0);
	name = ptsname(s->master);
	assert_non_null(name);
	s->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(s->slave >= 0);
	if (raw) {
		assert_int_equal(tcgetattr(s->slave, &t), 0);
		cfmakeraw(&t);
		assert_int_equal(tcsetattr(s->slave, TCSANOW, &t), 0);
	}
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		setsid();
		ioctl(s->slave, TIOCSCTTY, 0);
		dup2(s->slave, 0);
		dup2(s->slave, 1);
		dup2(s->slave, 2);
		execl(hintvm, "hintvm", "run", "-c", "1", "-m", "64M",
		      "--control", "none", "-p", "test=typeahead", "--irqchip",
		      irqchip && *irqchip ? irqchip : "split", (char *)NULL);
		_exit(127);
	}
}

/*
 * Read what hintvm writes until it has exited (or TIMEOUT_MS), and expect
 * status 0: the guest read a whole line and powered off.
 */
static void finish_ok(struct session *s)
{
	uint64_t deadline = now_ms() + TIMEOUT_MS;
	bool exited = false;

	while (now_ms() < deadline) {
		struct pollfd p = { .fd = s->master, .events = POLLIN };
		ssize_t n;

		if (!exited && waitpid(s->pid, &s->status, WNOHANG) == s->pid)
			exited = true;
		if (poll(&p, 1, 100) <= 0) {
			if (exited)
				break; /* exited, and all it wrote is read */
			continue;
		}
		n = read(s->master, s->out + s->len,
			 sizeof(s->out) - 1 - s->len);
		if (n <= 0)
			break;
		s->len += (size_t)n;
	}
	s->out[s->len] = '\0';
	if (!exited) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &s->status, 0);
		fail_msg("hintvm run did not end within %d s; it wrote:\n%s",
			 TIMEOUT_MS / 1000, s->out);
	}
	print_message("%s", s->out);
	assert_true(WIFEXITED(s->status));
	assert_int_equal(WEXITSTATUS(s->status), 0);
}

static void end(struct session *s)
{
	close(s->slave);
	close(s->master);
}

static void type(struct session *s, const char *text)
{
	assert_int_equal(write(s->master, text, strlen(text)),
			 (ssize_t)strlen(text));
}

/*
 * A user's terminal, cooked, with ONLCR: the line is typed as soon as
 * hintvm has the terminal (raw input), long before the guest opens its
 * port. It arrives whole; each line the guest ends in a bare "\n" reaches
 * the terminal as one "\r\n"; the terminal is restored on exit.
 */
static void test_typeahead_on_a_user_terminal(void **state)
{
	struct termios before, now;
	struct session s;
	uint64_t deadline = now_ms() + TIMEOUT_MS;

	(void)state;
	start(&s, false);
	assert_int_equal(tcgetattr(s.slave, &before), 0);
	assert_true(before.c_lflag & ICANON);
	do {
		assert_true(now_ms() < deadline);
		usleep(1000);
		assert_int_equal(tcgetattr(s.slave, &now), 0);
	} while (now.c_lflag & ICANON);
	type(&s, TYPED "\r");
	finish_ok(&s);
	assert_non_null(strstr(s.out, RESULT_LINE "\r\n"));
	assert_null(strstr(s.out, "\r\r\n"));
	assert_int_equal(tcgetattr(s.slave, &now), 0);
	assert_int_equal(now.c_lflag, before.c_lflag);
	assert_int_equal(now.c_iflag, before.c_iflag);
	assert_int_equal(now.c_oflag, before.c_oflag);
	end(&s);
}

/*
 * A terminal handed to hintvm fully raw (hintvm-runtime's container
 * terminal), typed into before hintvm even reads it: the line arrives
 * whole, and the guest's output comes through untranslated: "\n", no CR.
 */
static void test_typeahead_on_a_raw_terminal(void **state)
{
	struct session s;

	(void)state;
	start(&s, true);
	type(&s, TYPED "\r");
	finish_ok(&s);
	assert_non_null(strstr(s.out, RESULT_LINE "\n"));
	assert_null(strchr(s.out, '\r'));
	end(&s);
}

/*
 * On a terminal that came raw, Ctrl-A is the guest's: "Ctrl-A x", which
 * quits hintvm on a user's terminal, reaches the guest's line as two bytes
 * and the VM runs on (runc passes every byte to a container too).
 */
static void test_ctrl_a_is_the_guests_on_a_raw_terminal(void **state)
{
	struct session s;

	(void)state;
	start(&s, true);
	type(&s, "\001x" TYPED "\r");
	finish_ok(&s);
	assert_non_null(strstr(s.out,
			       "RESULT test=typeahead cpus=1 ok=1 got=?x" TYPED
			       " len=51\n"));
	end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typeahead_on_a_user_terminal),
		cmocka_unit_test(test_typeahead_on_a_raw_terminal),
		cmocka_unit_test(test_ctrl_a_is_the_guests_on_a_raw_terminal),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
