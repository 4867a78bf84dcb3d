/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The architecture-neutral part of the test kernels' freestanding library.
 * memset and memcpy are per arch (x86/mem.c, arm64/mem.c).
 */
#include "lib.h"

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++) {
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	}
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b || !*a)
			return (unsigned char)*a - (unsigned char)*b;
	}
	return 0;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, (size_t)-1);
}

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_char(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_number(struct out *o, uint64_t value, unsigned int base,
		       bool negative, unsigned int width, char pad)
{
	char digits[24];
	unsigned int n = 0;

	do {
		unsigned int d = value % base;

		digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		value /= base;
	} while (value);
	if (negative)
		digits[n++] = '-';
	while (width > n) {
		out_char(o, pad);
		width--;
	}
	while (n)
		out_char(o, digits[--n]);
}

size_t format(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { .buf = buf, .size = size, .len = 0 };

	for (; *fmt; fmt++) {
		unsigned int width = 0, longs = 0;
		char pad = ' ';
		uint64_t u;
		int64_t s;

		if (*fmt != '%') {
			out_char(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0') {
			pad = '0';
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (unsigned int)(*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			longs++;
			fmt++;
		}
		switch (*fmt) {
		case 'c':
			out_char(&o, (char)va_arg(ap, int));
			break;
		case 's': {
			const char *str = va_arg(ap, const char *);

			if (!str)
				str = "(null)";
			while (*str)
				out_char(&o, *str++);
			break;
		}
		case 'd':
			s = longs ? va_arg(ap, int64_t) : va_arg(ap, int);
			out_number(&o, s < 0 ? -(uint64_t)s : (uint64_t)s, 10,
				   s < 0, width, pad);
			break;
		case 'u':
		case 'x':
			u = longs ? va_arg(ap, uint64_t)
				  : va_arg(ap, unsigned int);
			out_number(&o, u, *fmt == 'x' ? 16 : 10, false, width,
				   pad);
			break;
		case 'p':
			out_char(&o, '0');
			out_char(&o, 'x');
			out_number(&o, (uintptr_t)va_arg(ap, void *), 16, false,
				   width, pad);
			break;
		case '%':
			out_char(&o, '%');
			break;
		default: /* unknown conversion: show it rather than guess */
			out_char(&o, '%');
			if (!*fmt)
				goto done;
			out_char(&o, *fmt);
			break;
		}
	}
done:
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len < size ? o.len : (size ? size - 1 : 0);
}

size_t snformat(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = format(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

bool parse_u64(const char *s, uint64_t *value)
{
	unsigned int base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*value = v;
	return true;
}
