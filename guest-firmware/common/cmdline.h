/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel command line: space-separated key=value words. test=NAME picks
 * the payload; payloads read their own parameters (iterations=N, ...).
 * Words without '=' and unknown keys are ignored (QEMU may add its own).
 */
#ifndef TK_CMDLINE_H
#define TK_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>

#define CMDLINE_MAX 512

/* Copy the command line at SRC (NULL: empty) into kernel memory. */
void cmdline_init(const char *src);

/* The value of KEY (last occurrence), or NULL. */
const char *cmdline_get(const char *key);

/*
 * KEY as an unsigned number in [MIN, MAX]; DEFAULT_VALUE when absent.
 * Returns false (after printing why) for a malformed or out-of-range value.
 */
bool cmdline_get_u64(const char *key, uint64_t default_value, uint64_t min,
		     uint64_t max, uint64_t *value);

#endif
