/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lib.h"

/* String instructions: one emulated instruction instead of a loop, which
 * matters where kernel mode runs at ~1 MIPS. */
void *memset(void *dst, int c, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep movsb"
			 : "+D"(d), "+S"(src), "+c"(n)
			 :
			 : "memory");
	return dst;
}
