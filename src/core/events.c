// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/events.h"

int event_ring_init(struct event_ring *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->wake_fd < 0)
		return hvm_set_errno_error("cannot create an eventfd");
	return 0;
}

void event_ring_destroy(struct event_ring *r)
{
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	r->wake_fd = -1;
	pthread_mutex_destroy(&r->lock);
}

void event_post(struct event_ring *r, enum vm_event_kind kind, int vcpu,
		uint64_t a, const char *text, const char *detail)
{
	struct vm_event *ev;
	uint64_t one = 1;

	if (!r || !atomic_load(&r->subscribers))
		return;
	pthread_mutex_lock(&r->lock);
	ev = &r->ev[r->next_seq % EVENT_RING_SIZE];
	*ev = (struct vm_event){ .seq = r->next_seq,
				 .time_ns = hvm_monotonic_ns(),
				 .kind = kind,
				 .vcpu = vcpu,
				 .a = a };
	snprintf(ev->text, sizeof(ev->text), "%s", text ? text : "");
	snprintf(ev->detail, sizeof(ev->detail), "%s", detail ? detail : "");
	r->next_seq++;
	pthread_mutex_unlock(&r->lock);
	/* Full counter (EAGAIN): the reader is already due to wake. */
	if (write(r->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_debug("events: cannot wake the control thread");
}

void event_post_boost(struct event_ring *r, int vcpu, const char *cause)
{
	uint64_t now, last;

	if (!r || !atomic_load(&r->subscribers))
		return;
	now = hvm_monotonic_ns();
	last = atomic_load(&r->last_boost_ns);
	if ((last && now - last < EVENT_BOOST_INTERVAL_NS) ||
	    !atomic_compare_exchange_strong(&r->last_boost_ns, &last, now)) {
		atomic_fetch_add(&r->boosts_suppressed, 1);
		return;
	}
	event_post(r, VM_EVENT_BOOST, vcpu,
		   atomic_exchange(&r->boosts_suppressed, 0), cause, NULL);
}

uint64_t event_ring_tail(struct event_ring *r)
{
	uint64_t seq;

	pthread_mutex_lock(&r->lock);
	seq = r->next_seq;
	pthread_mutex_unlock(&r->lock);
	return seq;
}

size_t event_read(struct event_ring *r, uint64_t *cursor, struct vm_event *out,
		  size_t max, uint64_t *lost)
{
	uint64_t oldest;
	size_t n = 0;

	*lost = 0;
	pthread_mutex_lock(&r->lock);
	oldest = r->next_seq > EVENT_RING_SIZE ? r->next_seq - EVENT_RING_SIZE
					       : 0;
	if (*cursor < oldest) {
		*lost = oldest - *cursor;
		*cursor = oldest;
	}
	if (*cursor > r->next_seq)
		*cursor = r->next_seq;
	while (n < max && *cursor < r->next_seq) {
		out[n++] = r->ev[*cursor % EVENT_RING_SIZE];
		(*cursor)++;
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}
