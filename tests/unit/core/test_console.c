// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The console's input side (core/console.c) as a user at a terminal sees
 * it: keys typed while the guest takes no input wait and arrive later,
 * whole and in order; the terminal's input goes raw while its output
 * settings stay as they were (a user's terminal keeps ONLCR, a fully raw
 * one stays raw) and come back on stop; Ctrl-A x quits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/console.h"

/* A console device that takes nothing until opened, then CHUNK at a time. */
struct fake_device {
	pthread_mutex_t lock;
	bool open;
	size_t chunk;
	uint8_t got[8192];
	size_t len;
	atomic_int quits;
};

static size_t fake_deliver(void *ctx, const uint8_t *buf, size_t len)
{
	struct fake_device *d = ctx;
	size_t n = 0;

	pthread_mutex_lock(&d->lock);
	if (d->open) {
		n = len < d->chunk ? len : d->chunk;
		if (n > sizeof(d->got) - d->len)
			n = sizeof(d->got) - d->len;
		memcpy(d->got + d->len, buf, n);
		d->len += n;
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

static void fake_quit(void *ctx)
{
	atomic_fetch_add(&((struct fake_device *)ctx)->quits, 1);
}

static struct console_sink fake_sink(struct fake_device *d)
{
	return (struct console_sink){ .deliver = fake_deliver,
				      .ctx = d,
				      .quit = fake_quit,
				      .quit_ctx = d };
}

static size_t received(struct fake_device *d)
{
	size_t n;

	pthread_mutex_lock(&d->lock);
	n = d->len;
	pthread_mutex_unlock(&d->lock);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Poll COND(D) for up to 10 s. */
static bool wait_for(bool (*cond)(struct fake_device *, size_t),
		     struct fake_device *d, size_t arg)
{
	for (int i = 0; i < 10000; i++) {
		if (cond(d, arg))
			return true;
		sleep_ms(1);
	}
	return false;
}

static bool has_bytes(struct fake_device *d, size_t n)
{
	return received(d) >= n;
}

static bool has_quit(struct fake_device *d, size_t n)
{
	return (size_t)atomic_load(&d->quits) >= n;
}

static void fake_init(struct fake_device *d, size_t chunk)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->chunk = chunk;
}

/*
 * 3000 bytes typed while the device takes nothing (a guest still booting)
 * all arrive once it opens, in order, a few at a time; the wait is
 * counted, no byte is counted twice.
 */
static void test_input_waits_for_the_guest(void **state)
{
	struct console_in_stats stats = { 0 };
	struct fake_device d;
	struct console *con;
	uint8_t typed[3000];
	int fds[2];

	(void)state;
	fake_init(&d, 7);
	for (size_t i = 0; i < sizeof(typed); i++)
		typed[i] = (uint8_t)('a' + i % 26);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	con = console_start(fds[0], fake_sink(&d), &stats);
	assert_non_null(con);
	assert_int_equal(write(fds[1], typed, sizeof(typed)), sizeof(typed));

	sleep_ms(50);
	assert_int_equal(received(&d), 0);
	assert_true(atomic_load(&stats.waits) >= 1);
	assert_int_equal(atomic_load(&stats.bytes), 0);

	pthread_mutex_lock(&d.lock);
	d.open = true;
	pthread_mutex_unlock(&d.lock);
	assert_true(wait_for(has_bytes, &d, sizeof(typed)));
	assert_memory_equal(d.got, typed, sizeof(typed));
	assert_int_equal(atomic_load(&stats.bytes), sizeof(typed));

	console_stop(con);
	close(fds[0]);
	close(fds[1]);
}

/* A device that takes everything: no wait counted. */
static void test_no_wait_when_the_guest_takes_input(void **state)
{
	struct console_in_stats stats = { 0 };
	struct fake_device d;
	struct console *con;
	int fds[2];

	(void)state;
	fake_init(&d, SIZE_MAX);
	d.open = true;
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	con = console_start(fds[0], fake_sink(&d), &stats);
	assert_non_null(con);
	assert_int_equal(write(fds[1], "ls\r", 3), 3);
	assert_true(wait_for(has_bytes, &d, 3));
	console_stop(con);
	assert_int_equal(atomic_load(&stats.waits), 0);
	assert_int_equal(atomic_load(&stats.bytes), 3);
	close(fds[0]);
	close(fds[1]);
}

/* A pseudo-terminal: *MASTER, and the slave's fd returned. */
static int open_pty(int *master)
{
	char *name;
	int slave;

	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(*master >= 0);
	assert_int_equal(grantpt(*master), 0);
	assert_int_equal(unlockpt(*master), 0);
	name = ptsname(*master);
	assert_non_null(name);
	slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(slave >= 0);
	return slave;
}

/*
 * A user's terminal (cooked, ONLCR on): input raw while the VM runs, the
 * output settings kept, so a guest's bare "\n" still starts a new line;
 * all of it restored on stop.
 */
static void test_user_terminal_keeps_output_processing(void **state)
{
	struct fake_device d;
	struct termios before, during, after;
	struct console *con;
	int master, slave = open_pty(&master);

	(void)state;
	fake_init(&d, SIZE_MAX);
	assert_int_equal(tcgetattr(slave, &before), 0);
	assert_true(before.c_lflag & ICANON);
	assert_true(before.c_oflag & OPOST);
	assert_true(before.c_oflag & ONLCR);

	con = console_start(slave, fake_sink(&d), NULL);
	assert_non_null(con);
	assert_int_equal(tcgetattr(slave, &during), 0);
	assert_false(during.c_lflag & (ICANON | ECHO | ISIG));
	assert_false(during.c_iflag & ICRNL);
	assert_int_equal(during.c_oflag, before.c_oflag);
	assert_int_equal(write(slave, "a\n", 2), 2);
	{
		char out[8] = { 0 };

		assert_int_equal(read(master, out, sizeof(out)), 3);
		assert_string_equal(out, "a\r\n");
	}

	console_stop(con);
	assert_int_equal(tcgetattr(slave, &after), 0);
	assert_int_equal(after.c_lflag, before.c_lflag);
	assert_int_equal(after.c_iflag, before.c_iflag);
	assert_int_equal(after.c_oflag, before.c_oflag);
	close(slave);
	close(master);
}

/*
 * A terminal handed over fully raw (hintvm-runtime's, for a container):
 * hintvm adds no output processing, so "\r\n" from the guest's tty stays
 * "\r\n" and a bare "\n" stays bare.
 */
static void test_raw_terminal_stays_raw(void **state)
{
	struct fake_device d;
	struct termios t;
	struct console *con;
	char out[8] = { 0 };
	int master, slave = open_pty(&master);

	(void)state;
	fake_init(&d, SIZE_MAX);
	assert_int_equal(tcgetattr(slave, &t), 0);
	cfmakeraw(&t);
	assert_int_equal(tcsetattr(slave, TCSANOW, &t), 0);

	con = console_start(slave, fake_sink(&d), NULL);
	assert_non_null(con);
	assert_int_equal(tcgetattr(slave, &t), 0);
	assert_false(t.c_oflag & OPOST);
	assert_int_equal(write(slave, "a\r\nb\n", 5), 5);
	assert_int_equal(read(master, out, sizeof(out)), 5);
	assert_string_equal(out, "a\r\nb\n");
	console_stop(con);
	assert_int_equal(tcgetattr(slave, &t), 0);
	assert_false(t.c_oflag & OPOST);
	close(slave);
	close(master);
}

/* On a terminal, Ctrl-A x asks to quit; what came before it is delivered,
 * and Ctrl-A Ctrl-A is one Ctrl-A for the guest. */
static void test_escape_quits(void **state)
{
	struct fake_device d;
	struct console *con;
	int master, slave = open_pty(&master);

	(void)state;
	fake_init(&d, SIZE_MAX);
	d.open = true;
	con = console_start(slave, fake_sink(&d), NULL);
	assert_non_null(con);
	assert_int_equal(write(master, "ok\x01\x01", 4), 4);
	assert_true(wait_for(has_bytes, &d, 3));
	assert_int_equal(write(master, "\x01x", 2), 2);
	assert_true(wait_for(has_quit, &d, 1));
	assert_int_equal(received(&d), 3);
	assert_memory_equal(d.got, "ok\x01", 3);
	console_stop(con);
	close(slave);
	close(master);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_input_waits_for_the_guest),
		cmocka_unit_test(test_no_wait_when_the_guest_takes_input),
		cmocka_unit_test(test_user_terminal_keeps_output_processing),
		cmocka_unit_test(test_raw_terminal_stays_raw),
		cmocka_unit_test(test_escape_quits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
