// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD (after the sanitizer runtime) leak-at-start.so: 77 bytes
 * allocated and dropped before main, so that every process of that hintvm,
 * the jailed child included, holds a leak for LeakSanitizer's exit check
 * to find. sandbox-test.sh uses it to prove the check still runs in a
 * --jail whose process has switched to the VM's uid.
 */
#include <stdlib.h>
#include <string.h>

void *volatile leak_at_start_sink;

static void __attribute__((constructor)) leak_at_start(void)
{
	char *p = malloc(77);

	if (p)
		memset(p, 0x5a, 77);
	/* Seen once, then forgotten: no pointer to it is left. */
	leak_at_start_sink = p;
	leak_at_start_sink = NULL;
}
