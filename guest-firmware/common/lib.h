/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The small freestanding C library both test kernels share (common/lib.c),
 * and the few functions each architecture provides to the shared code.
 */
#ifndef TK_LIB_H
#define TK_LIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/*
 * GCC may emit calls to these for struct copies and initialisers. memset
 * and memcpy are per arch (x86/mem.c, arm64/mem.c).
 */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/*
 * printf subset: %c %s %d %u %x %p with optional l/ll/z length, a field width
 * and '0' padding, and %%. Always NUL-terminates; returns the length
 * written (truncated output is cut, never overflows).
 */
size_t format(char *buf, size_t size, const char *fmt, va_list ap);
size_t snformat(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parse an unsigned decimal or 0x-prefixed hex number filling all of S. */
bool parse_u64(const char *s, uint64_t *value);

/*
 * Provided by each architecture. printk formats one line (a '\n' is
 * appended) and writes it to the console whole; machine_exit ends the
 * machine the way docs/testkernel.md and docs/arm64.md describe.
 */
void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void machine_exit(bool success);

#endif
