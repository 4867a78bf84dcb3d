/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The value parsers every option table uses (core/config.c,
 * sched/sched_config.c, ...). A leaf: it knows no configuration struct,
 * only strings, numbers and the error buffer.
 */
#ifndef HVM_BASE_PARSE_H
#define HVM_BASE_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Parse "512M", "2G", "1024" (MiB) ... into bytes; -EINVAL if malformed. */
int parse_size(const char *s, uint64_t *bytes);

/*
 * A rate in bytes per second: "1048576" (bytes), "10M", "512K/s", "1G/s"
 * (K, M, G, T with parse_size's spellings); -EINVAL if malformed or 0.
 */
int parse_rate(const char *s, uint64_t *bytes_per_s);

/* Parse a decimal unsigned integer in [MIN, MAX]; -EINVAL / -ERANGE. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Parse on/off, yes/no, true/false, 1/0 (NULL means on). */
int parse_bool(const char *s, bool *out);

/*
 * The option --NAME given as a switch (parse_bool): sets *FIELD, or
 * records "--NAME: 'VALUE' is not a switch value" and returns -EINVAL.
 */
int parse_switch(bool *field, const char *name, const char *value);

#endif
