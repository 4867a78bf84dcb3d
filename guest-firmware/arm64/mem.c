// SPDX-License-Identifier: LGPL-2.1-or-later
#include "lib.h"

/* Plain loops: -fno-tree-loop-distribute-patterns keeps GCC from turning
 * them back into calls to themselves. */

void *memset(void *s, int c, size_t n)
{
	unsigned char *p = s;

	while (n--)
		*p++ = (unsigned char)c;
	return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	while (n--)
		*dp++ = *sp++;
	return d;
}
