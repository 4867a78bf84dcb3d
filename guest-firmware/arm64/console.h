/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Line-at-a-time console output, safe from any CPU and from EL0. */
#ifndef TK_CONSOLE_H
#define TK_CONSOLE_H

void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
