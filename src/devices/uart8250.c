// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 16550A register model. Transmission is instantaneous: a byte written to
 * THR goes into the console output buffer (core/console_out.h), which never
 * blocks and drops what a stalled reader does not take, so THR and the shift
 * register are always empty (LSR.THRE and LSR.TEMT always set).
 *
 * Reception keeps everything the host typed, even what was typed before
 * the guest was ready for it (a container's user typing right after
 * `start`). Host input waits in a queue of UART_INPUT_QUEUE bytes, the line
 * "before the chip", and the guest sees it (LSR.DR, RBR, the receive
 * interrupt) only while its receiver is set up: the FIFO enabled or the
 * receive-data interrupt on. That is what every driver does before it
 * reads; Linux opening the port does the opposite first (it resets the
 * FIFO and reads RBR blindly with both off, serial8250_do_startup), and
 * those reads find nothing to eat. A receive-FIFO reset never discards host
 * input either: a virtual line has no noise to flush, every byte is a key
 * the user pressed, and Linux resets the FIFO every time the port is opened
 * (and toggles FCR0 after enabling the interrupt, set_termios). What the
 * guest transmits to itself in loopback goes through a 16-byte FIFO of its
 * own, which a reset does clear and which overruns (LSR.OE) like the chip.
 * When the queue is full uart8250_receive() takes no more; the console
 * thread then waits and counts it (core/console.h), so input is held back
 * in the host's terminal, never dropped.
 *
 * Access rules: registers are one byte wide. A wider access handles its first
 * byte and reads the others as 0; an access that starts beyond the eight
 * registers reads all-ones and writes nothing, like an undecoded port.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "core/console_out.h"
#include "devices/uart8250.h"

/* Register offsets (DLAB selects the divisor latch at 0 and 1). */
#define REG_RBR_THR_DLL 0
#define REG_IER_DLM 1
#define REG_IIR_FCR 2
#define REG_LCR 3
#define REG_MCR 4
#define REG_LSR 5
#define REG_MSR 6
#define REG_SCR 7

#define IER_RDI 0x01 /* received data available */
#define IER_THRI 0x02 /* transmitter holding register empty */
#define IER_RLSI 0x04 /* receiver line status */
#define IER_MSI 0x08 /* modem status */
#define IER_MASK 0x0f /* bits 7:4 read 0 on a 16550A */

#define IIR_NO_INT 0x01
#define IIR_MSI 0x00
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_RLSI 0x06
#define IIR_FIFO_ENABLED 0xc0

#define FCR_ENABLE_FIFO 0x01
#define FCR_CLEAR_RCVR 0x02
#define FCR_CLEAR_XMIT 0x04
#define FCR_KEPT_BITS 0xc9 /* enable, DMA mode, trigger level */

#define LCR_DLAB 0x80

#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08
#define MCR_LOOP 0x10
#define MCR_MASK 0x1f

#define LSR_DR 0x01
#define LSR_OE 0x02
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

#define MSR_DCTS 0x01
#define MSR_DDSR 0x02
#define MSR_TERI 0x04
#define MSR_DDCD 0x08
#define MSR_DELTAS 0x0f
#define MSR_CTS 0x10
#define MSR_DSR 0x20
#define MSR_RI 0x40
#define MSR_DCD 0x80

#define UART_FIFO_DEPTH 16

/* Divisor 1 at the PC's 1.8432 MHz clock: 115200 baud, 8N1. Linux probes
 * the divisor when a console has no baud option and divides by it. */
#define UART_DEFAULT_DIVISOR 1
#define UART_DEFAULT_LCR 0x03

/* A byte queue over a buffer of CAP bytes. */
struct rx_ring {
	uint8_t *buf;
	size_t cap;
	size_t head;
	size_t count;
};

struct uart8250 {
	pthread_mutex_t lock;
	struct irq_line irq;
	struct console_out *out;
	void (*output_notify)(void *ctx);
	void *output_notify_ctx;
	bool irq_level;

	uint8_t ier;
	uint8_t fcr;
	uint8_t lcr;
	uint8_t mcr;
	uint8_t lsr_errors; /* LSR_OE; cleared by reading LSR */
	uint8_t msr; /* modem inputs (7:4) and their deltas (3:0) */
	uint8_t scr;
	uint8_t dll;
	uint8_t dlm;
	bool thri_pending; /* THR-empty interrupt raised, not yet taken */

	struct rx_ring input; /* host input not read yet (top of file) */
	struct rx_ring loop; /* bytes transmitted in loopback */
	uint8_t input_buf[UART8250_INPUT_QUEUE];
	uint8_t loop_buf[UART_FIFO_DEPTH];
};

/* What the modem inputs read: wired to MCR in loopback, else a terminal that
 * is present and ready (DCD, DSR, CTS) so no driver waits for flow control. */
static uint8_t uart_modem_inputs(const struct uart8250 *uart)
{
	uint8_t mcr = uart->mcr;

	if (!(mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	return (mcr & MCR_RTS ? MSR_CTS : 0) | (mcr & MCR_DTR ? MSR_DSR : 0) |
	       (mcr & MCR_OUT1 ? MSR_RI : 0) | (mcr & MCR_OUT2 ? MSR_DCD : 0);
}

static void uart_sample_modem_inputs(struct uart8250 *uart)
{
	uint8_t old = uart->msr & ~MSR_DELTAS;
	uint8_t now = uart_modem_inputs(uart);
	uint8_t changed = old ^ now;
	uint8_t deltas = uart->msr & MSR_DELTAS;

	if (changed & MSR_CTS)
		deltas |= MSR_DCTS;
	if (changed & MSR_DSR)
		deltas |= MSR_DDSR;
	if ((old & MSR_RI) && !(now & MSR_RI)) /* trailing edge only */
		deltas |= MSR_TERI;
	if (changed & MSR_DCD)
		deltas |= MSR_DDCD;
	uart->msr = now | deltas;
}

static bool ring_push(struct rx_ring *ring, uint8_t byte)
{
	if (ring->count == ring->cap)
		return false;
	ring->buf[(ring->head + ring->count) % ring->cap] = byte;
	ring->count++;
	return true;
}

static uint8_t ring_pop(struct rx_ring *ring)
{
	uint8_t byte = ring->buf[ring->head];

	ring->head = (ring->head + 1) % ring->cap;
	ring->count--;
	return byte;
}

/*
 * Whether the guest's receiver is set up, so that host input shows: the
 * FIFO enabled or the receive interrupt on (see the top of this file). In
 * loopback the serial input is disconnected.
 */
static bool uart_input_visible(const struct uart8250 *uart)
{
	if (uart->mcr & MCR_LOOP)
		return false;
	return (uart->fcr & FCR_ENABLE_FIFO) || (uart->ier & IER_RDI);
}

/* LSR.DR: a byte the guest can read now. */
static bool uart_data_ready(const struct uart8250 *uart)
{
	return uart->loop.count ||
	       (uart->input.count && uart_input_visible(uart));
}

/* RBR: the loopback FIFO's bytes first, then host input; 0 when empty. */
static uint8_t uart_rx_read(struct uart8250 *uart)
{
	if (uart->loop.count)
		return ring_pop(&uart->loop);
	if (uart->input.count && uart_input_visible(uart))
		return ring_pop(&uart->input);
	return 0;
}

/* The highest-priority pending interrupt, as IIR bits 3:0 report it. */
static uint8_t uart_pending_interrupt(const struct uart8250 *uart)
{
	if ((uart->ier & IER_RLSI) && uart->lsr_errors)
		return IIR_RLSI;
	if ((uart->ier & IER_RDI) && uart_data_ready(uart))
		return IIR_RDI;
	if ((uart->ier & IER_THRI) && uart->thri_pending)
		return IIR_THRI;
	if ((uart->ier & IER_MSI) && (uart->msr & MSR_DELTAS))
		return IIR_MSI;
	return IIR_NO_INT;
}

/* Drive the line only on a change: each change is an ioctl. */
static void uart_update_irq(struct uart8250 *uart)
{
	bool level = uart_pending_interrupt(uart) != IIR_NO_INT;

	if (level == uart->irq_level)
		return;
	uart->irq_level = level;
	irq_line_set(&uart->irq, level);
}

static void uart_transmit(struct uart8250 *uart, uint8_t byte)
{
	/*
	 * Writing THR takes the THRE interrupt back; transmission completes
	 * at once and raises it again. Dropping the line in between gives an
	 * edge-triggered interrupt controller the new edge a real UART gives.
	 */
	uart->thri_pending = false;
	uart_update_irq(uart);

	if (uart->mcr & MCR_LOOP) {
		if (!ring_push(&uart->loop, byte))
			uart->lsr_errors |= LSR_OE;
	} else {
		console_out_write(uart->out, &byte, 1);
		if (uart->output_notify)
			uart->output_notify(uart->output_notify_ctx);
	}

	uart->thri_pending = true;
}

static void uart_write_ier(struct uart8250 *uart, uint8_t value)
{
	uint8_t ier = value & IER_MASK;

	/*
	 * Enabling the THRE interrupt while THR is empty raises it even if
	 * the guest took it before (8250 behaviour that Linux's THRE test and
	 * Windows rely on); THR is always empty here.
	 */
	if ((ier & IER_THRI) && !(uart->ier & IER_THRI))
		uart->thri_pending = true;
	uart->ier = ier;
}

static void uart_write_fcr(struct uart8250 *uart, uint8_t value)
{
	/* Toggling the FIFO enable clears both FIFOs (16550A data sheet). */
	if ((value ^ uart->fcr) & FCR_ENABLE_FIFO)
		value |= FCR_CLEAR_RCVR | FCR_CLEAR_XMIT;
	/* Only what the guest sent itself: host input is never discarded. */
	if (value & FCR_CLEAR_RCVR)
		uart->loop.count = 0;
	/* Without FCR0 set the other bits are not programmed. */
	uart->fcr = (value & FCR_ENABLE_FIFO) ? value & FCR_KEPT_BITS : 0;
}

static uint8_t uart_read_reg(struct uart8250 *uart, unsigned int reg)
{
	bool dlab = uart->lcr & LCR_DLAB;
	uint8_t value = 0;

	switch (reg) {
	case REG_RBR_THR_DLL:
		value = dlab ? uart->dll : uart_rx_read(uart);
		break;
	case REG_IER_DLM:
		value = dlab ? uart->dlm : uart->ier;
		break;
	case REG_IIR_FCR:
		value = uart_pending_interrupt(uart);
		/* Reading IIR is how a driver takes a THRE interrupt. */
		if (value == IIR_THRI)
			uart->thri_pending = false;
		if (uart->fcr & FCR_ENABLE_FIFO)
			value |= IIR_FIFO_ENABLED;
		break;
	case REG_LCR:
		value = uart->lcr;
		break;
	case REG_MCR:
		value = uart->mcr;
		break;
	case REG_LSR:
		value = LSR_THRE | LSR_TEMT | uart->lsr_errors |
			(uart_data_ready(uart) ? LSR_DR : 0);
		uart->lsr_errors = 0;
		break;
	case REG_MSR:
		value = uart->msr;
		uart->msr &= ~MSR_DELTAS;
		break;
	case REG_SCR:
		value = uart->scr;
		break;
	}
	return value;
}

static void uart_write_reg(struct uart8250 *uart, unsigned int reg,
			   uint8_t value)
{
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case REG_RBR_THR_DLL:
		if (dlab)
			uart->dll = value;
		else
			uart_transmit(uart, value);
		break;
	case REG_IER_DLM:
		if (dlab)
			uart->dlm = value;
		else
			uart_write_ier(uart, value);
		break;
	case REG_IIR_FCR:
		uart_write_fcr(uart, value);
		break;
	case REG_LCR:
		uart->lcr = value;
		break;
	case REG_MCR:
		uart->mcr = value & MCR_MASK;
		uart_sample_modem_inputs(uart);
		break;
	case REG_SCR:
		uart->scr = value;
		break;
	default: /* LSR and MSR are read-only (writes are factory tests) */
		break;
	}
}

static void uart_bus_read(void *dev, uint64_t offset, uint8_t *data,
			  uint32_t len)
{
	struct uart8250 *uart = dev;

	if (!len)
		return;
	if (offset >= UART8250_REGS) {
		memset(data, 0xff, len);
		return;
	}
	memset(data, 0, len);
	pthread_mutex_lock(&uart->lock);
	data[0] = uart_read_reg(uart, (unsigned int)offset);
	uart_update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
}

static void uart_bus_write(void *dev, uint64_t offset, const uint8_t *data,
			   uint32_t len)
{
	struct uart8250 *uart = dev;

	if (!len || offset >= UART8250_REGS)
		return;
	pthread_mutex_lock(&uart->lock);
	uart_write_reg(uart, (unsigned int)offset, data[0]);
	uart_update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
}

const struct bus_ops uart8250_bus_ops = {
	.read = uart_bus_read,
	.write = uart_bus_write,
};

struct uart8250 *uart8250_create(struct irq_line irq, struct console_out *out)
{
	struct uart8250 *uart = calloc(1, sizeof(*uart));

	if (!uart)
		return NULL;
	if (pthread_mutex_init(&uart->lock, NULL)) {
		free(uart);
		return NULL;
	}
	uart->irq = irq;
	uart->out = out;
	uart->input = (struct rx_ring){ .buf = uart->input_buf,
					.cap = sizeof(uart->input_buf) };
	uart->loop = (struct rx_ring){ .buf = uart->loop_buf,
				       .cap = sizeof(uart->loop_buf) };
	uart->lcr = UART_DEFAULT_LCR;
	uart->dll = UART_DEFAULT_DIVISOR & 0xff;
	uart->dlm = UART_DEFAULT_DIVISOR >> 8;
	uart->msr = uart_modem_inputs(uart);
	return uart;
}

void uart8250_set_output_notify(struct uart8250 *uart, void (*notify)(void *),
				void *ctx)
{
	uart->output_notify = notify;
	uart->output_notify_ctx = ctx;
}

void uart8250_destroy(struct uart8250 *uart)
{
	if (!uart)
		return;
	pthread_mutex_destroy(&uart->lock);
	free(uart);
}

size_t uart8250_receive(struct uart8250 *uart, const uint8_t *buf, size_t len)
{
	size_t accepted = 0;

	if (!buf)
		return 0;
	pthread_mutex_lock(&uart->lock);
	/* In loopback the serial input is disconnected: offer again later. */
	if (!(uart->mcr & MCR_LOOP)) {
		while (accepted < len && ring_push(&uart->input, buf[accepted]))
			accepted++;
	}
	uart_update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
	return accepted;
}

static size_t console_deliver(void *ctx, const uint8_t *buf, size_t len)
{
	return uart8250_receive(ctx, buf, len);
}

struct console_sink uart8250_console_sink(struct uart8250 *uart)
{
	return (struct console_sink){ .deliver = console_deliver, .ctx = uart };
}

void uart8250_save(struct uart8250 *uart, struct uart8250_state *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&uart->lock);
	*s = (struct uart8250_state){
		.ier = uart->ier,
		.fcr = uart->fcr,
		.lcr = uart->lcr,
		.mcr = uart->mcr,
		.lsr_errors = uart->lsr_errors,
		.msr = uart->msr,
		.scr = uart->scr,
		.dll = uart->dll,
		.dlm = uart->dlm,
		.thri_pending = uart->thri_pending,
		.loop_count = (uint8_t)uart->loop.count,
	};
	for (size_t i = 0; i < uart->loop.count; i++)
		s->loop[i] =
			uart->loop.buf[(uart->loop.head + i) % uart->loop.cap];
	pthread_mutex_unlock(&uart->lock);
}

int uart8250_load(struct uart8250 *uart, const struct uart8250_state *s)
{
	static const uint8_t zero[sizeof(s->reserved)];

	if (s->ier & ~IER_MASK || s->fcr & ~FCR_KEPT_BITS ||
	    s->mcr & ~MCR_MASK || s->lsr_errors & ~LSR_OE ||
	    s->thri_pending > 1 || s->loop_count > sizeof(s->loop) ||
	    s->loop_count > UART_FIFO_DEPTH ||
	    memcmp(s->reserved, zero, sizeof(zero)))
		return hvm_set_error(
			-EINVAL,
			"serial port state: ier 0x%x fcr 0x%x mcr 0x%x lsr 0x%x thri %u loop %u: a bit no 16550A register holds",
			s->ier, s->fcr, s->mcr, s->lsr_errors, s->thri_pending,
			s->loop_count);
	pthread_mutex_lock(&uart->lock);
	uart->ier = s->ier;
	uart->fcr = s->fcr;
	uart->lcr = s->lcr;
	uart->mcr = s->mcr;
	uart->lsr_errors = s->lsr_errors;
	uart->msr = s->msr;
	uart->scr = s->scr;
	uart->dll = s->dll;
	uart->dlm = s->dlm;
	uart->thri_pending = s->thri_pending;
	uart->loop.head = 0;
	uart->loop.count = 0;
	for (unsigned int i = 0; i < s->loop_count; i++)
		ring_push(&uart->loop, s->loop[i]);
	/* The line follows the restored registers (the irqchip's state
	 * says what the pin was; a level it missed is raised here). */
	uart->irq_level = false;
	uart_update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
	return 0;
}
