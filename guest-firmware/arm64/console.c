// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The UART the device tree names: a ns16550a (hintvm) or a PL011 (QEMU
 * virt). Each line is formatted first and written under a lock, so lines
 * from several CPUs never interleave. Usable at EL0: the device block is
 * mapped EL0-accessible and the lock lives in normal memory.
 */
#include "arm64.h"
#include "machine.h"
#include "spinlock.h"

#define NS16550_THR 0
#define NS16550_LSR 5
#define NS16550_LSR_THRE 0x20
#define PL011_DR 0x00
#define PL011_FR 0x18
#define PL011_FR_TXFF 0x20

static struct spinlock console_lock;

static void uart_putc(char c)
{
	uint64_t base = machine.uart_base;

	switch (machine.uart) {
	case UART_NS16550A:
		while (!(mmio_read8(base + NS16550_LSR) & NS16550_LSR_THRE))
			cpu_relax();
		mmio_write8(base + NS16550_THR, (uint8_t)c);
		break;
	case UART_PL011:
		while (mmio_read32(base + PL011_FR) & PL011_FR_TXFF)
			cpu_relax();
		mmio_write32(base + PL011_DR, (uint8_t)c);
		break;
	case UART_NONE:
		break;
	}
}

void printk(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = format(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	spin_lock(&console_lock);
	for (size_t i = 0; i < n; i++)
		uart_putc(line[i]);
	spin_unlock(&console_lock);
}
