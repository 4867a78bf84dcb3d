// SPDX-License-Identifier: LGPL-2.1-or-later
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "sandbox/thread.h"
#include "sandboxed_call.h"

struct call {
	enum sandbox_kind kind;
	void (*prepare)(void *);
	void (*fn)(void *);
	void *arg;
};

static void *confined(void *opaque)
{
	struct call *c = opaque;

	if (c->prepare)
		c->prepare(c->arg);
	sandbox_thread_enter(c->kind);
	c->fn(c->arg);
	return NULL;
}

void sandboxed_threads_begin(void)
{
	if (!getenv("HINTVM_TEST_SANDBOX"))
		return;
	if (sandbox_prepare() < 0) {
		fprintf(stderr, "sandboxed_call: %s\n", hvm_error_message());
		abort();
	}
	sandbox_set_requested(true);
}

void sandboxed_threads_end(void)
{
	sandbox_set_requested(false);
}

void sandboxed_call(enum sandbox_kind kind, void (*fn)(void *), void *arg)
{
	sandboxed_call_prepared(kind, NULL, fn, arg);
}

void sandboxed_call_prepared(enum sandbox_kind kind, void (*prepare)(void *),
			     void (*fn)(void *), void *arg)
{
	struct call c = { kind, prepare, fn, arg };
	pthread_t thread;

	if (!getenv("HINTVM_TEST_SANDBOX")) {
		fn(arg);
		return;
	}
	sandboxed_threads_begin();
	if (vm_thread_create(&thread, confined, &c)) {
		fprintf(stderr, "sandboxed_call: no thread\n");
		abort();
	}
	sandboxed_threads_end();
	pthread_join(thread, NULL);
}
