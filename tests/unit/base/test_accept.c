// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Accepting at the file limit: a guard with a spare lets one more
 * connection through, then pauses; one without pauses at once; a pause
 * ends on time; the spare comes back after a close.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/accept.h"

struct fixture {
	int listener, clients[4];
	struct rlimit saved;
};

static int setup(void **state)
{
	static struct fixture f;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	/* An abstract name: nothing on disk, unique per process. */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "hvm-accept-%d",
		 getpid());
	f.listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f.listener >= 0);
	assert_int_equal(bind(f.listener, (struct sockaddr *)&sa, sizeof(sa)),
			 0);
	assert_int_equal(listen(f.listener, 8), 0);
	for (int i = 0; i < 4; i++) {
		f.clients[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_int_equal(connect(f.clients[i], (struct sockaddr *)&sa,
					 sizeof(sa)),
				 0);
	}
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &f.saved), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	setrlimit(RLIMIT_NOFILE, &f->saved);
	close(f->listener);
	for (int i = 0; i < 4; i++)
		close(f->clients[i]);
	return 0;
}

/* The soft limit set so that the next descriptor would be over it. */
static void at_the_limit(void)
{
	int probe = dup(0);
	struct rlimit rl;

	assert_true(probe >= 0);
	close(probe);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = (rlim_t)probe; /* every number below it is taken */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static void spare_lets_one_connection_through_then_pauses(void **state)
{
	struct fixture *f = *state;
	struct accept_guard g;
	int fd;

	accept_guard_init(&g, true);
	assert_true(g.spare >= 0);
	at_the_limit();
	fd = accept_guarded(&g, f->listener, SOCK_CLOEXEC, 1000);
	assert_true(fd >= 0); /* in the spare's place */
	assert_int_equal(g.spare, -1);
	assert_int_equal(g.at_limit, 1);
	assert_false(accept_guard_paused(&g, 1000));
	/* The next one meets the limit with no spare: a pause, no retry. */
	assert_int_equal(accept_guarded(&g, f->listener, SOCK_CLOEXEC, 1000),
			 -1);
	assert_int_equal(errno, EMFILE);
	assert_true(accept_guard_paused(&g, 1000));
	assert_true(accept_guard_paused(&g, 1000 + ACCEPT_BACKOFF_MS - 1));
	assert_false(accept_guard_paused(&g, 1000 + ACCEPT_BACKOFF_MS));
	/* A connection closed: the spare comes back. */
	close(fd);
	accept_guard_refill(&g);
	assert_true(g.spare >= 0);
	accept_guard_destroy(&g);
}

static void without_a_spare_it_pauses_at_once(void **state)
{
	struct fixture *f = *state;
	struct accept_guard g;

	accept_guard_init(&g, false);
	assert_int_equal(g.spare, -1);
	at_the_limit();
	assert_int_equal(accept_guarded(&g, f->listener, SOCK_CLOEXEC, 5), -1);
	assert_int_equal(errno, EMFILE);
	assert_true(accept_guard_paused(&g, 5));
	accept_guard_refill(&g);
	assert_int_equal(g.spare, -1); /* keeps none */
	accept_guard_destroy(&g);
}

static void below_the_limit_it_is_accept4(void **state)
{
	struct fixture *f = *state;
	struct accept_guard g;
	int fd;

	accept_guard_init(&g, true);
	fd = accept_guarded(&g, f->listener, SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_true(g.spare >= 0);
	assert_int_equal(g.at_limit, 0);
	close(fd);
	accept_guard_destroy(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			spare_lets_one_connection_through_then_pauses, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			without_a_spare_it_pauses_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(below_the_limit_it_is_accept4,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
