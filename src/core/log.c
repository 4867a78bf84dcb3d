// SPDX-License-Identifier: LGPL-2.1-or-later
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

static _Thread_local char error_buf[512];
static _Thread_local enum log_level log_level = LOG_WARN;

/* Format into a copy first: the arguments may be hvm_error_message(). */
static void set_message(const char *errno_text, const char *fmt, va_list ap)
{
	char msg[sizeof(error_buf)];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (errno_text && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", errno_text);
	memcpy(error_buf, msg, sizeof(error_buf));
}

int hvm_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	assert(err < 0);
	if (err >= 0)
		err = err ? -err
			  : -EIO; /* never report success for a failure */
	va_start(ap, fmt);
	set_message(NULL, fmt, ap);
	va_end(ap);
	return err;
}

int hvm_set_errno_error(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	assert(err > 0);
	if (err <= 0)
		err = EIO; /* never report success for a failure */
	va_start(ap, fmt);
	set_message(strerror(err), fmt, ap);
	va_end(ap);
	return -err;
}

void hvm_clear_error(void)
{
	error_buf[0] = '\0';
}

const char *hvm_error_message(void)
{
	return error_buf;
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

enum log_level log_level_for_verbosity(int verbosity)
{
	if (verbosity <= 0)
		return LOG_WARN;
	return verbosity >= LOG_DEBUG - LOG_WARN ? LOG_DEBUG
						 : LOG_WARN + verbosity;
}

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	enum log_level level;
};

static void *thread_trampoline(void *opaque)
{
	struct thread_start start = *(struct thread_start *)opaque;

	free(opaque);
	log_level = start.level;
	return start.fn(start.arg);
}

int log_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	struct thread_start *start = malloc(sizeof(*start));
	int r;

	if (!start)
		return ENOMEM;
	*start = (struct thread_start){ fn, arg, log_level };
	r = pthread_create(thread, NULL, thread_trampoline, start);
	if (r)
		free(start);
	return r;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[LOG_ERROR] = "error",
		[LOG_WARN] = "warning",
		[LOG_INFO] = "info",
		[LOG_DEBUG] = "debug",
	};
	char line[1024];
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line keeps lines whole between vCPU threads. */
	fprintf(stderr, "hintvm: %s: %s\n", prefix[level], line);
}
