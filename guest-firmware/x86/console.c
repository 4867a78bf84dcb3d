/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "console.h"

#include "arch/x86/platform.h"
#include "spinlock.h"

#define UART_THR 0 /* transmit holding register */
#define UART_LSR 5 /* line status register */
#define UART_LSR_THRE 0x20 /* transmit holding register empty */

static struct spinlock console_lock;

static void uart_put(char c)
{
	while (!(inb(X86_COM1_PORT + UART_LSR) & UART_LSR_THRE))
		cpu_relax();
	outb(X86_COM1_PORT + UART_THR, (uint8_t)c);
}

void vprintk(const char *fmt, va_list ap)
{
	char line[CONSOLE_LINE_MAX];
	size_t len = format(line, sizeof(line) - 1, fmt, ap);

	line[len++] = '\n';
	spin_lock(&console_lock);
	for (size_t i = 0; i < len; i++)
		uart_put(line[i]);
	spin_unlock(&console_lock);
}

void printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}
