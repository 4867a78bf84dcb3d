/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime's builders (seccomp.c, network.c, initramfs.c) report a
 * failure as a message in the caller's buffer plus a return value, so that
 * they stay free of the runtime log and can be unit-tested and fuzzed alone.
 */
#ifndef HVM_RUNTIME_ERRBUF_H
#define HVM_RUNTIME_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Format the message into ERR (ERRLEN bytes) and return RET. */
static inline int __attribute__((format(printf, 4, 5)))
rt_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

#endif
