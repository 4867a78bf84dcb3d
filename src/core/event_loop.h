/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device-work event loop: one thread per VM driving an io_uring. Device
 * backends do their work here, never on vCPU threads: a vCPU's queue kick
 * (an ioeventfd) completes a poll on this ring, the device's handler runs
 * on the loop thread, submits file I/O (virtio-blk) to the same ring, and
 * the completions come back as callbacks on the same thread. So a device's
 * handlers never run concurrently with each other.
 *
 * Submissions are allowed from any thread; from the loop thread they are
 * batched and submitted once per loop iteration. Buffers and event_op
 * structures must stay valid until their completion callback has run.
 * Destroy the loop before unmapping guest memory: destroy cancels the I/O
 * still in flight and waits for it (each op's done() runs, usually with
 * -ECANCELED), so the kernel writes into no buffer after it returns.
 */
#ifndef HVM_CORE_EVENT_LOOP_H
#define HVM_CORE_EVENT_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct event_loop;

/* One submission; embed it in the request it belongs to. */
struct event_op {
	/* On the loop thread: RES is the io_uring result (bytes, or -errno). */
	void (*done)(struct event_op *op, int32_t res);
	uint32_t cqe_flags; /* internal */
};

/* A file descriptor watched for readability until the loop is destroyed. */
struct event_watch {
	struct event_op op; /* internal */
	struct event_loop *loop;
	int fd;
	bool drain_eventfd; /* read the eventfd counter before calling ready */
	void (*ready)(struct event_watch *w);
};

/*
 * Create a loop with an io_uring of ENTRIES submission slots. Returns 0 or
 * -errno; -ENOSYS when the kernel (or qemu-user) has no io_uring.
 */
int event_loop_create(struct event_loop **out, unsigned int entries);

/* Start the loop thread (named NAME, at most 15 characters). */
int event_loop_start(struct event_loop *loop, const char *name);

/*
 * Stop the thread (if started), cancel what is in flight and wait for it
 * (done() callbacks run on the caller's thread), free the loop.
 */
void event_loop_destroy(struct event_loop *loop);

/*
 * For tests and fuzzing, on a loop that was never started: submit what is
 * queued and run the done() of every completion already there, on the
 * calling thread. Returns how many ran (0: nothing was ready).
 */
int event_loop_run_ready(struct event_loop *loop);

/* True when called on LOOP's own thread. */
bool event_loop_on_thread(const struct event_loop *loop);

/*
 * Call W->ready on the loop thread each time FD becomes readable. With
 * DRAIN_EVENTFD the loop reads (resets) an eventfd's counter first, so the
 * callback sees one call per batch of kicks. W must outlive the loop.
 */
int event_loop_watch(struct event_loop *loop, struct event_watch *w, int fd,
		     bool drain_eventfd, void (*ready)(struct event_watch *w));

/* File I/O at OFFSET; OP->done gets the byte count or -errno. */
int event_loop_readv(struct event_loop *loop, struct event_op *op, int fd,
		     const struct iovec *iov, unsigned int nr, uint64_t offset);
int event_loop_writev(struct event_loop *loop, struct event_op *op, int fd,
		      const struct iovec *iov, unsigned int nr,
		      uint64_t offset);
/* fdatasync(2) of FD (fsync(2) when !DATASYNC). */
int event_loop_fsync(struct event_loop *loop, struct event_op *op, int fd,
		     bool datasync);
/* fallocate(2) of FD with MODE (e.g. PUNCH_HOLE | KEEP_SIZE for discard). */
int event_loop_fallocate(struct event_loop *loop, struct event_op *op, int fd,
			 int mode, uint64_t offset, uint64_t len);
/*
 * For tests of the ring's restriction: submit IORING_OP_OPENAT of PATH as
 * a hijacked thread could, and return its result (-EACCES: refused, as
 * every opcode outside the event loop's own list is).
 */
int event_loop_try_openat(struct event_loop *loop, const char *path);

/* Run OP->done(op, 0) on the loop thread (work handed over from vCPUs). */
int event_loop_call(struct event_loop *loop, struct event_op *op);

#endif
