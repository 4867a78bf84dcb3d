/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one clock hintvm measures intervals and deadlines with. */
#ifndef HVM_BASE_CLOCK_H
#define HVM_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t hvm_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
