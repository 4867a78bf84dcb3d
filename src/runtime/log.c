// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The runtime log. containerd's runc shim and conmon pass --log FILE
 * --log-format json and, when a command fails, show the "msg" of the last
 * entry to the user; so every error goes there, one JSON object per line
 * ({"level","msg","time"}), or "time=... level=... msg=..." in text format.
 * Errors go to stderr too, for people running the runtime by hand.
 */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

static const char *const level_names[] = { "debug", "info", "warning",
					   "error" };
/* rt_log_keep_open(): the VMM process's log, opened once. */
static FILE *kept;

void rt_log_keep_open(void)
{
	if (rt.log_path && !kept)
		kept = fopen(rt.log_path, "ae");
}

void rt_format_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ts.tv_nsec);
}

void rt_log(enum rt_level level, const char *fmt, ...)
{
	char msg[2048], when[64];
	va_list ap;
	FILE *f;

	if (level == RT_DEBUG && !rt.debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level == RT_ERROR || (!rt.log_path && level >= RT_WARN))
		fprintf(stderr, "hintvm-runtime: %s\n", msg);
	if (!rt.log_path)
		return;
	f = kept ? kept : fopen(rt.log_path, "ae");
	if (!f)
		return;
	rt_format_time(when, sizeof(when));
	if (rt.log_json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(
			o, "level", json_object_new_string(level_names[level]));
		json_object_object_add(o, "msg", json_object_new_string(msg));
		json_object_object_add(o, "time", json_object_new_string(when));
		fprintf(f, "%s\n",
			json_object_to_json_string_ext(
				o, JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		fprintf(f, "time=\"%s\" level=%s msg=\"%s\"\n", when,
			level_names[level], msg);
	}
	if (f == kept)
		fflush(f);
	else
		fclose(f);
}
