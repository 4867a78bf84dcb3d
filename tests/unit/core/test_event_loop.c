// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The io_uring device event loop (src/core/event_loop.c), tested here with
 * its main user, virtio. Skips (77) where io_uring is missing, e.g. under
 * qemu-user for the arm64 unit tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <cmocka.h>

#include "core/event_loop.h"

struct fixture {
	struct event_loop *loop;
	sem_t done;
};

/* Completion callbacks post this; a stuck loop fails instead of hanging. */
static void wait_done(struct fixture *f)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 30;
	assert_int_equal(sem_timedwait(&f->done, &deadline), 0);
}

static struct fixture *the_fixture;

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_int_equal(event_loop_create(&f->loop, 64), 0);
	assert_int_equal(event_loop_start(f->loop, "test-io"), 0);
	sem_init(&f->done, 0, 0);
	the_fixture = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	event_loop_destroy(f->loop);
	sem_destroy(&f->done);
	free(f);
	return 0;
}

struct counted_watch {
	struct event_watch w;
	int calls;
	bool on_loop_thread;
};

static void count_ready(struct event_watch *w)
{
	struct counted_watch *cw = (struct counted_watch *)w;

	cw->calls++;
	cw->on_loop_thread = event_loop_on_thread(w->loop);
	sem_post(&the_fixture->done);
}

static void test_watch_eventfd_repeatedly(void **state)
{
	struct fixture *f = *state;
	struct counted_watch cw = { 0 };
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t one = 1, left;

	assert_true(efd >= 0);
	assert_int_equal(
		event_loop_watch(f->loop, &cw.w, efd, true, count_ready), 0);
	for (int i = 1; i <= 5; i++) {
		assert_int_equal(write(efd, &one, sizeof(one)), sizeof(one));
		wait_done(f);
		assert_int_equal(cw.calls, i);
	}
	assert_true(cw.on_loop_thread);
	assert_false(event_loop_on_thread(f->loop));
	/* The loop drained the counter: nothing left to read. */
	assert_int_equal(read(efd, &left, sizeof(left)), -1);
	assert_int_equal(errno, EAGAIN);
	/* cw lives on this stack: stop the loop before it goes. */
	event_loop_destroy(f->loop);
	assert_int_equal(event_loop_create(&f->loop, 8), 0);
	close(efd);
}

struct io_req {
	struct event_op op;
	int32_t res;
};

static void io_done(struct event_op *op, int32_t res)
{
	((struct io_req *)op)->res = res;
	sem_post(&the_fixture->done);
}

static void test_file_io_round_trip(void **state)
{
	struct fixture *f = *state;
	char path[] = "/tmp/hvm-event-loop-XXXXXX";
	char a[] = "hello ", b[] = "virtio", back[13] = { 0 };
	struct iovec wr[2] = { { a, 6 }, { b, 6 } };
	struct iovec rd[1] = { { back, 12 } };
	struct io_req req = { .op.done = io_done };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(event_loop_writev(f->loop, &req.op, fd, wr, 2, 512),
			 0);
	wait_done(f);
	assert_int_equal(req.res, 12);
	assert_int_equal(event_loop_fsync(f->loop, &req.op, fd, true), 0);
	wait_done(f);
	assert_int_equal(req.res, 0);
	assert_int_equal(event_loop_readv(f->loop, &req.op, fd, rd, 1, 512), 0);
	wait_done(f);
	assert_int_equal(req.res, 12);
	assert_string_equal(back, "hello virtio");
	/* Reading past the end returns 0 bytes, not an error. */
	assert_int_equal(event_loop_readv(f->loop, &req.op, fd, rd, 1, 4096),
			 0);
	wait_done(f);
	assert_int_equal(req.res, 0);
	/* An error comes back as -errno in the callback. */
	assert_int_equal(event_loop_readv(f->loop, &req.op, 9999, rd, 1, 0), 0);
	wait_done(f);
	assert_int_equal(req.res, -EBADF);
	close(fd);
}

struct call_req {
	struct event_op op;
	bool on_loop_thread;
};

static void call_done(struct event_op *op, int32_t res)
{
	struct call_req *c = (struct call_req *)op;

	c->on_loop_thread = event_loop_on_thread(the_fixture->loop);
	sem_post(&the_fixture->done);
}

static void test_call_runs_on_loop_thread(void **state)
{
	struct fixture *f = *state;
	struct call_req c = { .op.done = call_done };

	assert_int_equal(event_loop_call(f->loop, &c.op), 0);
	wait_done(f);
	assert_true(c.on_loop_thread);
}

/* Submissions from callbacks (on the loop thread) are batched. */
struct chain_req {
	struct event_op op;
	int remaining;
};

static void chain_done(struct event_op *op, int32_t res)
{
	struct chain_req *c = (struct chain_req *)op;

	if (--c->remaining > 0)
		assert_int_equal(event_loop_call(the_fixture->loop, op), 0);
	else
		sem_post(&the_fixture->done);
}

static void test_submit_from_callback(void **state)
{
	struct fixture *f = *state;
	struct chain_req c = { .op.done = chain_done, .remaining = 1000 };

	assert_int_equal(event_loop_call(f->loop, &c.op), 0);
	wait_done(f);
	assert_int_equal(c.remaining, 0);
}

static void test_more_requests_than_slots(void **state)
{
	struct fixture *f = *state;
	struct io_req reqs[200];

	/* 200 submissions into a 64-entry ring from a foreign thread. */
	for (int i = 0; i < 200; i++) {
		reqs[i].op.done = io_done;
		assert_int_equal(event_loop_call(f->loop, &reqs[i].op), 0);
	}
	for (int i = 0; i < 200; i++)
		wait_done(f);
}

struct pending_read {
	struct event_op op;
	int32_t res;
	int calls;
};

static void pending_done(struct event_op *op, int32_t res)
{
	struct pending_read *p = (struct pending_read *)op;

	p->res = res;
	p->calls++;
}

/*
 * Teardown while a read is in the kernel (a virtio-blk read into guest RAM
 * whose data has not come): destroy must cancel it and wait for it, so that
 * the caller may unmap the buffer once destroy returns. The read's done()
 * has run, exactly once, and what arrives later stays in the pipe.
 */
static void test_destroy_cancels_and_waits_for_inflight_io(void **state)
{
	struct event_loop *loop;
	struct pending_read p = { .op.done = pending_done };
	char buf[16] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	int fds[2];

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_int_equal(event_loop_create(&loop, 8), 0);
	assert_int_equal(event_loop_start(loop, "test-cancel"), 0);
	assert_int_equal(event_loop_readv(loop, &p.op, fds[0], &iov, 1, -1ULL),
			 0);
	usleep(20 * 1000); /* let the read reach the kernel and wait there */
	event_loop_destroy(loop);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.res, -ECANCELED);
	assert_int_equal(write(fds[1], "late", 4), 4);
	assert_int_equal(read(fds[0], buf, sizeof(buf)), 4);
	close(fds[0]);
	close(fds[1]);
}

static int ready_calls_at_destroy;

static void note_ready_at_destroy(struct event_watch *w)
{
	(void)w;
	ready_calls_at_destroy++;
}

/*
 * A watch whose fd became ready while the VM was being torn down: destroy
 * reaps the poll's completion on the caller's thread, and must not run the
 * watch's ready() there (device work, under the loop thread's sandbox
 * rules: the vsock host side's epoll_wait killed hintvm's main thread with
 * SIGSYS once in an arm64 e2e run).
 */
static void test_destroy_runs_no_watch_callback(void **state)
{
	struct event_loop *loop;
	struct event_watch w;
	uint64_t one = 1;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	(void)state;
	assert_true(efd >= 0);
	ready_calls_at_destroy = 0;
	assert_int_equal(event_loop_create(&loop, 8), 0);
	assert_int_equal(
		event_loop_watch(loop, &w, efd, true, note_ready_at_destroy),
		0);
	assert_int_equal(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	event_loop_destroy(loop);
	assert_int_equal(ready_calls_at_destroy, 0);
	close(efd);
}

/* io_uring bypasses seccomp: the ring itself refuses foreign opcodes. */
static void test_ring_refuses_other_operations(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(event_loop_try_openat(f->loop, "/etc/hostname"),
			 -EACCES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_watch_eventfd_repeatedly,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_io_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_call_runs_on_loop_thread,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit_from_callback,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_requests_than_slots,
						setup, teardown),
		cmocka_unit_test(
			test_destroy_cancels_and_waits_for_inflight_io),
		cmocka_unit_test(test_destroy_runs_no_watch_callback),
		cmocka_unit_test_setup_teardown(
			test_ring_refuses_other_operations, setup, teardown),
	};
	struct event_loop *probe;
	int ret = event_loop_create(&probe, 4);

	if (ret == -ENOSYS || ret == -EPERM) {
		printf("SKIP: io_uring is not available here (%s)\n",
		       strerror(-ret));
		return 77;
	}
	if (ret == 0)
		event_loop_destroy(probe);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
