// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The rr partner (rr_partner.h). One thread blocks in poll() on the request
 * eventfd and answers every wake-up with one write to the response eventfd:
 * the least work a "remote peer" can do, so that the measured latency is
 * the VMM's and KVM's, not the partner's. A dedicated thread rather than
 * the device event loop because the partner models another machine, not a
 * device backend: it must never queue behind device work.
 *
 * A service time makes the partner sleep (with 1 ns timer slack) between
 * a request and its answer, as a remote server would compute: long enough
 * and the vCPU really halts, which is when halt polling matters.
 *
 * Several doorbells that arrive before the thread reads the eventfd
 * collapse into one answer; the `rr` payload never has more than one
 * request outstanding, so this cannot lose a transaction there.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "devices/rr_partner.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

struct rr_partner {
	int request_fd;
	int response_fd;
	int stop_fd;
	pthread_t thread;
	bool thread_started;
	_Atomic uint64_t answered;
	_Atomic uint32_t service_us;

	pthread_mutex_t lock; /* the measurement below */
	uint64_t cpu_start_ns;
	uint64_t cpu_ns;
	bool measuring;
};

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void serve(uint32_t service_us)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (long)(service_us % 1000000) * 1000;
	until.tv_sec += service_us / 1000000 + until.tv_nsec / 1000000000;
	until.tv_nsec %= 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ==
	       EINTR)
		;
}

static void *rr_partner_thread(void *arg)
{
	struct rr_partner *rr = arg;
	struct pollfd fds[2] = {
		{ .fd = rr->request_fd, .events = POLLIN },
		{ .fd = rr->stop_fd, .events = POLLIN },
	};

	/* The default 50 us of slack would dwarf short service times. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_setname_np(pthread_self(), "hintvm-rr");
	sandbox_thread_enter(SANDBOX_RR_PARTNER);
	for (;;) {
		uint32_t service_us;
		uint64_t count;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("rr-partner: poll failed: %s", strerror(errno));
			return NULL;
		}
		if (fds[1].revents)
			return NULL;
		if (!(fds[0].revents & POLLIN))
			continue;
		if (read(rr->request_fd, &count, sizeof(count)) !=
		    sizeof(count))
			continue; /* EAGAIN: someone else drained it */
		service_us = atomic_load_explicit(&rr->service_us,
						  memory_order_relaxed);
		if (service_us)
			serve(service_us);
		if (write(rr->response_fd, &(uint64_t){ 1 },
			  sizeof(uint64_t)) != sizeof(uint64_t))
			pr_warn("rr-partner: cannot answer: %s",
				strerror(errno));
		atomic_fetch_add_explicit(&rr->answered, 1,
					  memory_order_relaxed);
	}
}

struct rr_partner *rr_partner_create(void)
{
	struct rr_partner *rr = calloc(1, sizeof(*rr));
	int r;

	if (!rr) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&rr->lock, NULL);
	rr->request_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rr->response_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rr->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rr->request_fd < 0 || rr->response_fd < 0 || rr->stop_fd < 0) {
		hvm_set_errno_error("rr-partner: cannot create eventfds");
		rr_partner_destroy(rr);
		return NULL;
	}
	r = vm_thread_create(&rr->thread, rr_partner_thread, rr);
	if (r) {
		hvm_set_error(-r, "rr-partner: cannot start its thread: %s",
			      strerror(r));
		rr_partner_destroy(rr);
		return NULL;
	}
	rr->thread_started = true;
	return rr;
}

void rr_partner_destroy(struct rr_partner *rr)
{
	if (!rr)
		return;
	if (rr->thread_started) {
		if (write(rr->stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
			pr_warn("rr-partner: cannot stop its thread: %s",
				strerror(errno));
		pthread_join(rr->thread, NULL);
	}
	for (int *fd = &rr->request_fd; fd <= &rr->stop_fd; fd++) {
		if (*fd >= 0)
			close(*fd);
	}
	pthread_mutex_destroy(&rr->lock);
	free(rr);
}

int rr_partner_request_fd(const struct rr_partner *rr)
{
	return rr->request_fd;
}

int rr_partner_response_fd(const struct rr_partner *rr)
{
	return rr->response_fd;
}

static void put_le32(uint8_t *data, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		data[i] = (uint8_t)(value >> (8 * i));
}

static void rr_partner_read(void *dev, uint64_t offset, uint8_t *data,
			    uint32_t len)
{
	struct rr_partner *rr = dev;
	uint32_t value;

	if (len != 4 || offset % 4 || offset >= RR_PARTNER_LEN) {
		memset(data, 0xff, len);
		return;
	}
	switch (offset) {
	case RR_REG_DOORBELL:
		value = RR_PARTNER_MAGIC;
		break;
	case RR_REG_CONTROL:
		value = (uint32_t)atomic_load_explicit(&rr->answered,
						       memory_order_relaxed);
		break;
	case RR_REG_SERVICE_US:
		value = atomic_load_explicit(&rr->service_us,
					     memory_order_relaxed);
		break;
	case RR_REG_CPU_NS_LO:
	case RR_REG_CPU_NS_HI:
		pthread_mutex_lock(&rr->lock);
		value = (uint32_t)(offset == RR_REG_CPU_NS_LO
					   ? rr->cpu_ns
					   : rr->cpu_ns >> 32);
		pthread_mutex_unlock(&rr->lock);
		break;
	default:
		value = 0xffffffff; /* the hole up to RR_PARTNER_LEN */
		break;
	}
	put_le32(data, value);
}

static void rr_partner_write(void *dev, uint64_t offset, const uint8_t *data,
			     uint32_t len)
{
	struct rr_partner *rr = dev;
	uint32_t value = 0;

	if (len != 4 || offset % 4 || offset >= RR_PARTNER_LEN)
		return;
	for (int i = 0; i < 4; i++)
		value |= (uint32_t)data[i] << (8 * i);
	if (offset == RR_REG_DOORBELL) {
		if (write(rr->request_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) <
		    0)
			pr_warn_ratelimited("rr-partner: doorbell lost: %s",
					    strerror(errno));
		return;
	}
	if (offset == RR_REG_SERVICE_US) {
		if (value <= RR_MAX_SERVICE_US)
			atomic_store_explicit(&rr->service_us, value,
					      memory_order_relaxed);
		return;
	}
	if (offset != RR_REG_CONTROL)
		return;
	pthread_mutex_lock(&rr->lock);
	if (value == RR_CTRL_START) {
		rr->cpu_start_ns = process_cpu_ns();
		rr->cpu_ns = 0;
		rr->measuring = true;
	} else if (value == RR_CTRL_STOP && rr->measuring) {
		rr->cpu_ns = process_cpu_ns() - rr->cpu_start_ns;
		rr->measuring = false;
	}
	pthread_mutex_unlock(&rr->lock);
}

const struct bus_ops rr_partner_bus_ops = {
	.read = rr_partner_read,
	.write = rr_partner_write,
};
