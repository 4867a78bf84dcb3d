/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Serial console on COM1: polled, one whole line at a time under a lock so
 * lines from different CPUs never interleave. Every byte costs ~2 exits:
 * keep output short.
 */
#ifndef TK_CONSOLE_H
#define TK_CONSOLE_H

#include "lib.h"

#define CONSOLE_LINE_MAX 192

/* printk is declared in lib.h (the shared code prints too). */
void vprintk(const char *fmt, va_list ap);

#endif
