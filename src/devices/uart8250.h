/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * 16550A-compatible UART (the "8250" Linux drives at ttyS0). Guest output
 * goes to a console output buffer (never blocking the vCPU); host input is
 * queued with uart8250_receive() and kept until the guest's receiver is set
 * up, so nothing typed ahead is lost. Used as a PIO device on x86 and as an
 * MMIO ns16550a on arm64 (register stride 1).
 */
#ifndef HVM_DEVICES_UART8250_H
#define HVM_DEVICES_UART8250_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/console.h"
#include "core/irq.h"

#define UART8250_REGS 8
/*
 * Host input the UART holds for the guest: typed before its driver reads
 * (README.md, on the console), or faster than it reads. Beyond it the
 * console thread waits, and counts that (console.in_waits in --stats).
 */
#define UART8250_INPUT_QUEUE 4096

struct uart8250;

struct console_out;

/* OUT receives guest output (NULL: discard). Returns NULL on ENOMEM. */
struct uart8250 *uart8250_create(struct irq_line irq, struct console_out *out);
void uart8250_destroy(struct uart8250 *uart);

/*
 * Queue LEN bytes of host input for the guest; returns how many fit (the
 * rest should be offered again later). None fit in loopback, where the
 * serial input is disconnected. Thread-safe against guest access.
 */
size_t uart8250_receive(struct uart8250 *uart, const uint8_t *buf, size_t len);

/* Call NOTIFY(CTX) whenever the guest transmits a byte (boot tracing). */
void uart8250_set_output_notify(struct uart8250 *uart, void (*notify)(void *),
				void *ctx);

/* The console sink that feeds host input to UART (uart8250_receive). */
struct console_sink uart8250_console_sink(struct uart8250 *uart);

extern const struct bus_ops uart8250_bus_ops;

/*
 * Snapshot (docs/snapshot.md): the registers and the loopback bytes, not
 * host input the guest has not read (a restored VM reads its new console).
 * Every field is a byte, so the layout has no padding to leak or check.
 */
#define UART8250_STATE_VERSION 1
struct uart8250_state {
	uint8_t ier, fcr, lcr, mcr, lsr_errors, msr, scr, dll, dlm;
	uint8_t thri_pending, loop_count;
	uint8_t reserved[5];
	uint8_t loop[16];
};
void uart8250_save(struct uart8250 *uart, struct uart8250_state *s);
/* Refuses (-EINVAL, reason recorded) a bit no register can hold. */
int uart8250_load(struct uart8250 *uart, const struct uart8250_state *s);

#endif
