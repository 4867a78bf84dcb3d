// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/log.h"
#include "sandbox/identity.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	enum log_level level;
	bool sandbox; /* sandbox_requested() of the creator */
	const struct vm_identity *identity; /* identity_requested() of it */
};

static void *thread_trampoline(void *opaque)
{
	struct thread_start start = *(struct thread_start *)opaque;

	free(opaque);
	log_set_level(start.level);
	sandbox_set_requested(start.sandbox);
	identity_set_requested(start.identity);
	return start.fn(start.arg);
}

int vm_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	struct thread_start *start = malloc(sizeof(*start));
	int r;

	if (!start)
		return ENOMEM;
	*start = (struct thread_start){ fn, arg, log_get_level(),
					sandbox_requested(),
					identity_requested() };
	r = pthread_create(thread, NULL, thread_trampoline, start);
	if (r)
		free(start);
	return r;
}
