/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Diagnostics. Internal helpers return -errno and leave the explanation in
 * the per-thread error buffer (hvm_set_error); the public API hands it out
 * through hvm_last_error(). Messages name the thing, the value and what was
 * expected.
 */
#ifndef HVM_BASE_LOG_H
#define HVM_BASE_LOG_H

#include <stdarg.h>

/*
 * Record why the current operation failed; returns ERR for tail calls.
 * ERR is a negative errno value (asserted): the sign every internal helper
 * returns, so a value passes from a callee to this without flipping.
 */
int hvm_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The same for a failed system call or ioctl: the message is FMT followed by
 * ": " and strerror(errno), and the return value is -errno (read on entry,
 * before anything can change it).
 */
int hvm_set_errno_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Forget the recorded message (for callers that test whether one is set). */
void hvm_clear_error(void);

/* The recorded message (empty when none). */
const char *hvm_error_message(void);

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/*
 * Messages at or below LEVEL reach stderr; default LOG_WARN. The level is
 * per thread, so that each VM logs at its own --verbose: the builder sets
 * the VM's level on the calling thread for the length of each hvm_vm_*
 * call, and every thread a VM starts (sandbox/thread.h) keeps the level
 * of the thread that started it.
 */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* The level for VERBOSITY (--verbose count) above the default. */
enum log_level log_level_for_verbosity(int verbosity);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A message a guest can trigger at will goes through a rate limit of its
 * own (one static struct log_ratelimit per call site): at most
 * LOG_RATELIMIT_BURST lines per LOG_RATELIMIT_INTERVAL_S seconds; the next
 * line that passes says how many were suppressed in between.
 */
#define LOG_RATELIMIT_BURST 5
#define LOG_RATELIMIT_INTERVAL_S 5

struct log_ratelimit {
	unsigned long long window_start_ns;
	unsigned int printed; /* in this window */
	unsigned long long suppressed; /* since the last printed line */
};

void log_msg_ratelimited(struct log_ratelimit *rl, enum log_level level,
			 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * In a child forked from a multithreaded hintvm (a share's file server):
 * another thread may have held the rate limiters' lock at the fork, and
 * the child has no such thread to release it.
 */
void log_after_fork(void);

#define pr_warn_ratelimited(...)                                  \
	do {                                                      \
		static struct log_ratelimit rl_;                  \
		log_msg_ratelimited(&rl_, LOG_WARN, __VA_ARGS__); \
	} while (0)
#define pr_debug_ratelimited(...)                                  \
	do {                                                       \
		static struct log_ratelimit rl_;                   \
		log_msg_ratelimited(&rl_, LOG_DEBUG, __VA_ARGS__); \
	} while (0)

#define pr_err(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
