/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What happens to a VM, for whoever subscribed (the control socket's
 * `events` request, hvm_vm_event_fd()): state changes, commit-state and
 * halt-poll window changes, boosts, how the guest ended, console output
 * dropped, settings changed at run time.
 *
 * One fixed ring per VM, written by any thread under a short mutex and
 * read by the control thread, which keeps one cursor per subscriber. A
 * producer never waits for a subscriber: a subscriber that falls more than
 * the ring's size behind loses the oldest events and is told how many.
 * With nobody subscribed, posting costs one atomic load.
 */
#ifndef HVM_CORE_EVENTS_H
#define HVM_CORE_EVENTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define EVENT_RING_SIZE 256
/* Boost events: at most one per this interval, the rest are counted. */
#define EVENT_BOOST_INTERVAL_NS 100000000ull

enum vm_event_kind {
	VM_EVENT_STATE, /* "state": text = running, paused, stopping */
	VM_EVENT_COMMIT, /* "commit": text = the new commit state */
	VM_EVENT_HALT_POLL, /* "halt-poll": a = the new window in ns */
	VM_EVENT_BOOST, /* "boost": vcpu, text = hint or irq, a = suppressed */
	VM_EVENT_EXIT, /* "exit": text = reason, a = exit status */
	VM_EVENT_CONSOLE_DROPPED, /* "console-dropped": a = bytes since last */
	VM_EVENT_SET, /* "set": text = "KEY=VALUE" */
	VM_EVENT_KIND_COUNT
};

struct vm_event {
	uint64_t seq;
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	enum vm_event_kind kind;
	int vcpu; /* -1: not about one vCPU */
	uint64_t a;
	char text[96];
	char detail[160]; /* exit: the human-readable cause */
};

struct event_ring {
	pthread_mutex_t lock;
	uint64_t next_seq; /* the ring holds [next_seq - held, next_seq) */
	struct vm_event ev[EVENT_RING_SIZE];
	atomic_uint subscribers; /* no subscriber: posting is a no-op */
	int wake_fd; /* eventfd made readable by every post */
	_Atomic uint64_t last_boost_ns;
	_Atomic uint64_t boosts_suppressed;
};

int event_ring_init(struct event_ring *r);
void event_ring_destroy(struct event_ring *r);

/* Post an event (any thread; not from signal handlers). */
void event_post(struct event_ring *r, enum vm_event_kind kind, int vcpu,
		uint64_t a, const char *text, const char *detail);

/* A boost of VCPU's thread (CAUSE "hint" or "irq"), rate-limited. */
void event_post_boost(struct event_ring *r, int vcpu, const char *cause);

/*
 * Copy up to MAX events from *CURSOR on into OUT and advance the cursor.
 * *LOST receives how many events the reader missed because the ring
 * overwrote them. A new subscriber starts at event_ring_tail().
 */
size_t event_read(struct event_ring *r, uint64_t *cursor, struct vm_event *out,
		  size_t max, uint64_t *lost);
uint64_t event_ring_tail(struct event_ring *r);

#endif
