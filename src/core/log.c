// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <string.h>

#include "core/log.h"

static _Thread_local char error_buf[512];
static enum log_level log_level = LOG_WARN;

int hvm_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(error_buf, sizeof(error_buf), fmt, ap);
	va_end(ap);
	return err > 0 ? -err : err;
}

const char *hvm_error_message(void)
{
	return error_buf;
}

void log_set_level(enum log_level level)
{
	log_level = level;
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
