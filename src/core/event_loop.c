// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/event_loop.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

struct event_loop {
	struct io_uring ring;
	pthread_mutex_t sq_lock; /* the submission queue has one producer */
	pthread_t thread;
	char name[16];
	bool started;
	/*
	 * Set by destroy once the loop thread is gone: completions reaped
	 * then only finish their operations. A watch's ready() is device
	 * work (the vsock host side's epoll, say) for the loop thread, under
	 * its sandbox rules, not for the thread tearing the VM down.
	 */
	bool draining;
	struct event_op stop_op;
	struct event_op cancel_op;
	/*
	 * Submitted operations whose last completion has not been reaped
	 * (a multishot poll counts once, until its final CQE). Destroy
	 * waits for zero: the kernel may write into guest RAM until then.
	 */
	_Atomic unsigned int inflight;
};

/*
 * The only operations the ring accepts (IORING_REGISTER_RESTRICTIONS).
 * io_uring operations are not system calls, so the sandbox's seccomp
 * filters (src/sandbox/sandbox_rules.c) cannot see them: without this list a
 * thread that submits to the ring could open, connect or read anything.
 * A new event_loop_* helper adds its opcode here.
 */
static const uint8_t allowed_ops[] = {
	IORING_OP_NOP, /* event_loop_call, stop */
	IORING_OP_POLL_ADD, /* event_loop_watch (multishot) */
	IORING_OP_READV,     IORING_OP_WRITEV,	     IORING_OP_FSYNC,
	IORING_OP_FALLOCATE, IORING_OP_ASYNC_CANCEL, /* destroy */
};

#define NR_ALLOWED_OPS (sizeof(allowed_ops) / sizeof(allowed_ops[0]))

/*
 * A ring created disabled: restrict it, then enable it. The system call
 * itself: bookworm's liburing.so (2.3) does not export
 * io_uring_register_restrictions() and io_uring_enable_rings().
 */
static int restrict_ring(struct io_uring *ring)
{
	struct io_uring_restriction res[NR_ALLOWED_OPS] = { 0 };

	for (unsigned int i = 0; i < NR_ALLOWED_OPS; i++) {
		res[i].opcode = IORING_RESTRICTION_SQE_OP;
		res[i].sqe_op = allowed_ops[i];
	}
	if (syscall(__NR_io_uring_register, ring->ring_fd,
		    IORING_REGISTER_RESTRICTIONS, res, NR_ALLOWED_OPS) < 0 ||
	    syscall(__NR_io_uring_register, ring->ring_fd,
		    IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
		return -errno;
	return 0;
}

int event_loop_create(struct event_loop **out, unsigned int entries)
{
	struct event_loop *loop = calloc(1, sizeof(*loop));
	int ret;

	if (!loop)
		return -ENOMEM;
	ret = io_uring_queue_init(entries, &loop->ring,
				  IORING_SETUP_R_DISABLED);
	if (ret == 0) {
		ret = restrict_ring(&loop->ring);
		if (ret < 0)
			io_uring_queue_exit(&loop->ring);
	}
	if (ret < 0) {
		free(loop);
		return hvm_set_error(ret, "io_uring_queue_init(%u): %s",
				     entries, strerror(-ret));
	}
	pthread_mutex_init(&loop->sq_lock, NULL);
	*out = loop;
	return 0;
}

bool event_loop_on_thread(const struct event_loop *loop)
{
	return loop->started && pthread_equal(pthread_self(), loop->thread);
}

static void dispatch(struct event_loop *loop, struct event_op *op, int32_t res,
		     uint32_t flags)
{
	if (!(flags & IORING_CQE_F_MORE))
		atomic_fetch_sub(&loop->inflight, 1);
	if (!op || op == &loop->stop_op || op == &loop->cancel_op)
		return;
	op->cqe_flags = flags;
	op->done(op, res);
}

static void *loop_thread(void *arg)
{
	struct event_loop *loop = arg;
	bool stop = false;

	pthread_setname_np(pthread_self(), loop->name);
	sandbox_thread_enter(SANDBOX_EVENT_LOOP);

	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;
		int ret;

		pthread_mutex_lock(&loop->sq_lock);
		ret = io_uring_submit(&loop->ring);
		pthread_mutex_unlock(&loop->sq_lock);
		if (ret < 0 && ret != -EBUSY && ret != -EAGAIN)
			pr_err("event loop: io_uring_submit: %s",
			       strerror(-ret));
		ret = io_uring_wait_cqe(&loop->ring, &cqe);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret < 0) {
			pr_err("event loop: io_uring_wait_cqe: %s",
			       strerror(-ret));
			break;
		}
		io_uring_for_each_cqe(&loop->ring, head, cqe)
		{
			struct event_op *op = io_uring_cqe_get_data(cqe);

			seen++;
			if (op == &loop->stop_op)
				stop = true;
			dispatch(loop, op, cqe->res, cqe->flags);
		}
		io_uring_cq_advance(&loop->ring, seen);
	}
	return NULL;
}

int event_loop_run_ready(struct event_loop *loop)
{
	struct io_uring_cqe *cqe;
	int ran = 0;

	if (loop->started)
		return -EBUSY;
	pthread_mutex_lock(&loop->sq_lock);
	io_uring_submit(&loop->ring);
	pthread_mutex_unlock(&loop->sq_lock);
	while (io_uring_peek_cqe(&loop->ring, &cqe) == 0) {
		struct event_op *op = io_uring_cqe_get_data(cqe);
		int32_t res = cqe->res;
		uint32_t flags = cqe->flags;

		/* Seen before dispatch: done() may submit and complete more. */
		io_uring_cqe_seen(&loop->ring, cqe);
		dispatch(loop, op, res, flags);
		ran++;
	}
	return ran;
}

int event_loop_start(struct event_loop *loop, const char *name)
{
	int ret;

	loop->started = true; /* before the thread can test it */
	snprintf(loop->name, sizeof(loop->name), "%s", name);
	ret = vm_thread_create(&loop->thread, loop_thread, loop);
	if (ret) {
		loop->started = false;
		return hvm_set_error(-ret, "event loop thread: %s",
				     strerror(ret));
	}
	return 0;
}

/* A free submission slot, with sq_lock held. */
static struct io_uring_sqe *get_sqe(struct event_loop *loop)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&loop->ring);

	if (!sqe) {
		io_uring_submit(&loop->ring);
		sqe = io_uring_get_sqe(&loop->ring);
	}
	return sqe;
}

/*
 * Hand a prepared entry to the kernel, with sq_lock held: the loop thread
 * batches (it submits before it waits), other threads submit now because
 * the loop may be asleep in io_uring_wait_cqe.
 */
static int commit(struct event_loop *loop, struct io_uring_sqe *sqe,
		  struct event_op *op)
{
	int ret;

	io_uring_sqe_set_data(sqe, op);
	atomic_fetch_add(&loop->inflight, 1);
	if (event_loop_on_thread(loop))
		return 0;
	ret = io_uring_submit(&loop->ring);
	return ret < 0 ? ret : 0;
}

#define SUBMIT(loop, op, prep)                             \
	({                                                 \
		struct io_uring_sqe *sqe_;                 \
		int ret_ = -EBUSY;                         \
		pthread_mutex_lock(&(loop)->sq_lock);      \
		sqe_ = get_sqe(loop);                      \
		if (sqe_) {                                \
			prep;                              \
			ret_ = commit((loop), sqe_, (op)); \
		}                                          \
		pthread_mutex_unlock(&(loop)->sq_lock);    \
		ret_;                                      \
	})

static void watch_done(struct event_op *op, int32_t res)
{
	struct event_watch *w =
		(struct event_watch *)((char *)op -
				       offsetof(struct event_watch, op));
	int ret;

	if (res == -ECANCELED || w->loop->draining)
		return; /* the loop is going away */
	if (res < 0) {
		pr_err("event loop: poll on fd %d: %s", w->fd, strerror(-res));
		return;
	}
	if (w->drain_eventfd) {
		uint64_t count;

		/* Non-blocking eventfd: EAGAIN just means already drained. */
		if (read(w->fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
			pr_warn("event loop: read eventfd %d: %s", w->fd,
				strerror(errno));
	}
	w->ready(w);
	/* A multishot poll ends (no F_MORE) on overflow; arm it again. */
	if (!(op->cqe_flags & IORING_CQE_F_MORE)) {
		ret = SUBMIT(w->loop, op,
			     io_uring_prep_poll_multishot(sqe_, w->fd, POLLIN));
		if (ret)
			pr_err("event loop: re-arming poll on fd %d: %s", w->fd,
			       strerror(-ret));
	}
}

int event_loop_watch(struct event_loop *loop, struct event_watch *w, int fd,
		     bool drain_eventfd, void (*ready)(struct event_watch *w))
{
	w->op.done = watch_done;
	w->loop = loop;
	w->fd = fd;
	w->drain_eventfd = drain_eventfd;
	w->ready = ready;
	return SUBMIT(loop, &w->op,
		      io_uring_prep_poll_multishot(sqe_, fd, POLLIN));
}

int event_loop_readv(struct event_loop *loop, struct event_op *op, int fd,
		     const struct iovec *iov, unsigned int nr, uint64_t offset)
{
	return SUBMIT(loop, op, io_uring_prep_readv(sqe_, fd, iov, nr, offset));
}

int event_loop_writev(struct event_loop *loop, struct event_op *op, int fd,
		      const struct iovec *iov, unsigned int nr, uint64_t offset)
{
	return SUBMIT(loop, op,
		      io_uring_prep_writev(sqe_, fd, iov, nr, offset));
}

int event_loop_fsync(struct event_loop *loop, struct event_op *op, int fd,
		     bool datasync)
{
	return SUBMIT(loop, op,
		      io_uring_prep_fsync(
			      sqe_, fd, datasync ? IORING_FSYNC_DATASYNC : 0));
}

int event_loop_fallocate(struct event_loop *loop, struct event_op *op, int fd,
			 int mode, uint64_t offset, uint64_t len)
{
	return SUBMIT(loop, op,
		      io_uring_prep_fallocate(sqe_, fd, mode, offset, len));
}

struct openat_probe {
	struct event_op op; /* first: done() gets this struct's address */
	_Atomic int32_t res; /* 1 until the completion came */
};

static void openat_done(struct event_op *op, int32_t res)
{
	atomic_store(&((struct openat_probe *)op)->res, res);
}

int event_loop_try_openat(struct event_loop *loop, const char *path)
{
	struct openat_probe probe = { .op.done = openat_done, .res = 1 };
	int32_t res;
	int ret;

	ret = SUBMIT(loop, &probe.op,
		     io_uring_prep_openat(sqe_, AT_FDCWD, path, O_RDONLY, 0));
	if (ret < 0)
		return ret;
	while ((res = atomic_load(&probe.res)) == 1) {
		if (!loop->started)
			event_loop_run_ready(loop);
		else
			usleep(1000);
	}
	if (res >= 0)
		close(res);
	return res;
}

int event_loop_call(struct event_loop *loop, struct event_op *op)
{
	return SUBMIT(loop, op, io_uring_prep_nop(sqe_));
}

/*
 * After the loop thread is gone: cancel whatever is still in the kernel
 * and reap it, running each op's done() (with -ECANCELED, or its result
 * if it finished first) on this thread. Only then may the caller free
 * buffers or unmap the guest RAM a read was going to fill: closing the
 * ring alone cancels asynchronously, after this function returned.
 */
static void cancel_inflight(struct event_loop *loop)
{
	uint64_t start = hvm_monotonic_ns();
	bool warned = false;

	while (atomic_load(&loop->inflight)) {
		struct __kernel_timespec wait = { .tv_nsec =
							  100 * 1000 * 1000 };
		struct io_uring_cqe *cqe;
		int ret;

		SUBMIT(loop, &loop->cancel_op,
		       io_uring_prep_cancel(sqe_, NULL,
					    IORING_ASYNC_CANCEL_ANY));
		ret = io_uring_wait_cqe_timeout(&loop->ring, &cqe, &wait);
		while (ret == 0) {
			dispatch(loop, io_uring_cqe_get_data(cqe), cqe->res,
				 cqe->flags);
			io_uring_cqe_seen(&loop->ring, cqe);
			ret = io_uring_peek_cqe(&loop->ring, &cqe);
		}
		if (!warned && hvm_monotonic_ns() - start > 1000000000ull) {
			pr_warn("event loop: waiting for %u I/O requests to finish before guest memory goes",
				atomic_load(&loop->inflight));
			warned = true;
		}
	}
}

void event_loop_destroy(struct event_loop *loop)
{
	if (!loop)
		return;
	if (loop->started) {
		int tries = 0;

		/* The loop thread exits when it sees this no-op complete. */
		while (SUBMIT(loop, &loop->stop_op, io_uring_prep_nop(sqe_)) &&
		       ++tries < 1000)
			usleep(1000);
		pthread_join(loop->thread, NULL);
	}
	loop->draining = true;
	cancel_inflight(loop);
	io_uring_queue_exit(&loop->ring);
	pthread_mutex_destroy(&loop->sq_lock);
	free(loop);
}
