// SPDX-License-Identifier: LGPL-2.1-or-later
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"

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

static void log_line(enum log_level level, const char *line);

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_line(level, line);
}

/* One lock for every limiter: these lines are rare by construction. */
static pthread_mutex_t ratelimit_lock = PTHREAD_MUTEX_INITIALIZER;

void log_msg_ratelimited(struct log_ratelimit *rl, enum log_level level,
			 const char *fmt, ...)
{
	uint64_t now = hvm_monotonic_ns();
	unsigned long long suppressed = 0;
	char line[1024];
	size_t used;
	va_list ap;

	if (level > log_level)
		return;
	pthread_mutex_lock(&ratelimit_lock);
	if (!rl->window_start_ns ||
	    now - rl->window_start_ns >=
		    LOG_RATELIMIT_INTERVAL_S * 1000000000ull) {
		rl->window_start_ns = now;
		rl->printed = 0;
	}
	if (rl->printed >= LOG_RATELIMIT_BURST) {
		rl->suppressed++;
		pthread_mutex_unlock(&ratelimit_lock);
		return;
	}
	rl->printed++;
	suppressed = rl->suppressed;
	rl->suppressed = 0;
	pthread_mutex_unlock(&ratelimit_lock);

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	used = strlen(line);
	if (suppressed && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used,
			 " (%llu more like this suppressed)", suppressed);
	log_line(level, line);
}

void log_after_fork(void)
{
	pthread_mutex_init(&ratelimit_lock, NULL);
}

static void log_line(enum log_level level, const char *line)
{
	static const char *const prefix[] = {
		[LOG_ERROR] = "error",
		[LOG_WARN] = "warning",
		[LOG_INFO] = "info",
		[LOG_DEBUG] = "debug",
	};
	/* One write per line keeps lines whole between vCPU threads. */
	fprintf(stderr, "hintvm: %s: %s\n", prefix[level], line);
}
