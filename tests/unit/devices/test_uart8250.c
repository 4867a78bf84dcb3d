// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/console_out.h"
#include "devices/uart8250.h"
#include "fakes.h"

enum {
	RBR = 0,
	THR = 0,
	DLL = 0,
	IER = 1,
	DLM = 1,
	IIR = 2,
	FCR = 2,
	LCR = 3,
	MCR = 4,
	LSR = 5,
	MSR = 6,
	SCR = 7,
};

#define COM1_GSI 4

struct fixture {
	struct uart8250 *uart;
	struct fake_irq irq;
	struct console_out *out;
	int pipe_rd;
	int pipe_wr;
};

static uint8_t rd(struct uart8250 *uart, uint64_t reg)
{
	uint8_t value;

	uart8250_bus_ops.read(uart, reg, &value, 1);
	return value;
}

static void wr(struct uart8250 *uart, uint64_t reg, uint8_t value)
{
	uart8250_bus_ops.write(uart, reg, &value, 1);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int fds[2];

	assert_non_null(f);
	assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	f->pipe_rd = fds[0];
	f->pipe_wr = fds[1];
	f->out = console_out_create(f->pipe_wr);
	assert_non_null(f->out);
	f->uart = uart8250_create(fake_irq_line(&f->irq, COM1_GSI), f->out);
	assert_non_null(f->uart);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	uart8250_destroy(f->uart);
	console_out_destroy(f->out);
	close(f->pipe_rd);
	close(f->pipe_wr);
	free(f);
	return 0;
}

/* What the console thread has written so far (it writes asynchronously). */
static size_t drain(struct fixture *f, char *buf, size_t cap)
{
	ssize_t n;

	console_out_flush(f->out, 100);
	n = read(f->pipe_rd, buf, cap);
	return n > 0 ? (size_t)n : 0;
}

static void test_divisor_latch_round_trip(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;

	/* Firmware-like default: a non-zero divisor (Linux divides by it). */
	wr(u, LCR, 0x83);
	assert_int_not_equal(rd(u, DLL) | rd(u, DLM) << 8, 0);

	wr(u, DLL, 0x34);
	wr(u, DLM, 0x12);
	assert_int_equal(rd(u, DLL), 0x34);
	assert_int_equal(rd(u, DLM), 0x12);
	assert_int_equal(rd(u, LCR), 0x83);

	/* DLAB off: the same offsets are RBR/IER again, untouched. */
	wr(u, LCR, 0x03);
	assert_int_equal(rd(u, IER), 0);
	wr(u, IER, 0x05);
	assert_int_equal(rd(u, IER), 0x05);
	wr(u, LCR, 0x83);
	assert_int_equal(rd(u, DLM), 0x12);
	assert_int_equal(rd(u, DLL), 0x34);
	/* Writing DLL with DLAB set transmits nothing. */
	assert_int_equal(drain(f, (char[8]){ 0 }, 8), 0);
}

static void test_scratch_and_ier_probe(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	unsigned int v;

	for (v = 0; v < 256; v++) {
		wr(u, SCR, (uint8_t)v);
		assert_int_equal(rd(u, SCR), v);
	}
	/* Linux autoconfig: IER holds exactly its low four bits. */
	wr(u, IER, 0);
	assert_int_equal(rd(u, IER), 0);
	wr(u, IER, 0xff);
	assert_int_equal(rd(u, IER), 0x0f);
	wr(u, IER, 0);
}

static void test_loopback(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	char buf[8];

	/* Outside loopback a ready terminal: DCD, DSR, CTS. */
	assert_int_equal(rd(u, MSR) & 0xf0, 0xb0);

	/* Linux's probe: LOOP | OUT2 | RTS must read DCD | CTS. */
	wr(u, MCR, 0x10 | 0x08 | 0x02);
	assert_int_equal(rd(u, MCR), 0x1a);
	assert_int_equal(rd(u, MSR) & 0xf0, 0x90);
	wr(u, MCR, 0x10 | 0x04 | 0x01); /* OUT1 -> RI, DTR -> DSR */
	assert_int_equal(rd(u, MSR) & 0xf0, 0x60);

	/* Transmitted bytes come back and do not reach the host. */
	wr(u, THR, 'x');
	assert_true(rd(u, LSR) & 0x01);
	assert_int_equal(rd(u, RBR), 'x');
	assert_false(rd(u, LSR) & 0x01);
	assert_int_equal(drain(f, buf, sizeof(buf)), 0);

	/* The serial input is disconnected in loopback. */
	assert_int_equal(uart8250_receive(u, (const uint8_t *)"ab", 2), 0);

	wr(u, MCR, 0);
	assert_int_equal(rd(u, MSR) & 0xf0, 0xb0);
	assert_int_equal(uart8250_receive(u, (const uint8_t *)"ab", 2), 2);
}

static void test_msr_deltas_and_modem_interrupt(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	uint8_t msr;

	wr(u, MCR, 0x10 | 0x0f); /* loopback, every output on */
	(void)rd(u, MSR);
	wr(u, IER, 0x08);
	assert_false(f->irq.level);

	wr(u, MCR, 0x10 | 0x0e); /* DTR off: DSR falls */
	assert_true(f->irq.level);
	assert_int_equal(rd(u, IIR) & 0x0f, 0x00);
	msr = rd(u, MSR);
	assert_int_equal(msr & 0x0f, 0x02); /* DDSR only */
	assert_false(f->irq.level);
	assert_int_equal(rd(u, MSR) & 0x0f, 0);

	wr(u, MCR, 0x10 | 0x0a); /* OUT1 off: RI trailing edge */
	assert_int_equal(rd(u, MSR) & 0x0f, 0x04);
	wr(u, MCR, 0x10 | 0x0e); /* OUT1 on: leading edge is no TERI */
	assert_int_equal(rd(u, MSR) & 0x0f, 0);
}

static void test_fifo_detection(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;

	assert_int_equal(rd(u, IIR), 0x01);
	wr(u, FCR, 0x01);
	assert_int_equal(rd(u, IIR), 0xc1);
	/* A 16550A has no 64-byte FIFO: IIR bit 5 stays clear. */
	wr(u, FCR, 0x21);
	assert_int_equal(rd(u, IIR) & 0xe0, 0xc0);
	/* With DLAB set, offset 2 is still IIR (the EFR probe sees non-0). */
	wr(u, LCR, 0xbf);
	assert_int_not_equal(rd(u, IIR), 0);
	wr(u, LCR, 0x03);
	wr(u, FCR, 0x00);
	assert_int_equal(rd(u, IIR), 0x01);
}

static void test_thri_raise_take_and_reraise(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;

	wr(u, FCR, 0x07);
	assert_false(f->irq.level);
	/* Enabling ETBEI with THR empty raises THRI at once. */
	wr(u, IER, 0x02);
	assert_true(f->irq.level);
	assert_int_equal(f->irq.gsi, COM1_GSI);
	/* LSR does not take it; reading IIR does. */
	assert_int_equal(rd(u, LSR) & 0x60, 0x60);
	assert_true(f->irq.level);
	assert_int_equal(rd(u, IIR), 0xc2);
	assert_false(f->irq.level);
	assert_int_equal(rd(u, IIR), 0xc1);
	/* Linux's THRE test: IER off and on raises it again. */
	wr(u, IER, 0x02);
	assert_false(f->irq.level); /* no rising edge of ETBEI: stays taken */
	wr(u, IER, 0x00);
	wr(u, IER, 0x02);
	assert_true(f->irq.level);
	assert_int_equal(rd(u, IIR), 0xc2);
}

static void test_thr_write_gives_new_edge(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	char buf[4];
	int before;

	wr(u, IER, 0x02);
	assert_true(f->irq.level);
	before = f->irq.changes;
	wr(u, THR, 'a');
	/* The line dropped and rose again: an edge per transmitted byte. */
	assert_int_equal(f->irq.changes, before + 2);
	assert_false(f->irq.history[before]);
	assert_true(f->irq.history[before + 1]);
	assert_int_equal(rd(u, IIR) & 0x0f, 0x02);
	assert_false(f->irq.level);
	assert_int_equal(drain(f, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'a');

	/* Disabled interrupts: the line never moves. */
	wr(u, IER, 0);
	before = f->irq.changes;
	wr(u, THR, 'b');
	uart8250_receive(u, (const uint8_t *)"z", 1);
	assert_int_equal(f->irq.changes, before);
}

static void test_iir_priority_and_clearing(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	uint8_t byte = 'q';
	size_t i;

	/* Host input waiting, then an overrun of the loopback FIFO. */
	assert_int_equal(uart8250_receive(u, &byte, 1), 1);
	wr(u, MCR, 0x10); /* loopback, outputs off: CTS, DSR, DCD fall */
	for (i = 0; i <= 16; i++)
		wr(u, THR, (uint8_t)('a' + i));
	(void)rd(u, IIR);
	wr(u, IER, 0x0f);
	assert_true(f->irq.level);

	/* Line status first, cleared by reading LSR (which shows OE). */
	assert_int_equal(rd(u, IIR), 0x06);
	assert_int_equal(rd(u, LSR) & 0x03, 0x03);
	assert_false(rd(u, LSR) & 0x02);
	/* Then received data: the 16 bytes the FIFO held, the 17th lost. */
	assert_int_equal(rd(u, IIR), 0x04);
	for (i = 0; i < 16; i++)
		assert_int_equal(rd(u, RBR), 'a' + i);
	/* The serial input is disconnected: the host's byte stays unseen. */
	assert_false(rd(u, LSR) & 0x01);
	/* Then THRE, taken by the IIR read that reports it. */
	assert_int_equal(rd(u, IIR), 0x02);
	/* Then modem status (entering loopback changed the inputs). */
	assert_int_equal(rd(u, IIR), 0x00);
	(void)rd(u, MSR);
	assert_int_equal(rd(u, IIR), 0x01);
	assert_false(f->irq.level);
	/* An empty RBR reads 0. */
	assert_int_equal(rd(u, RBR), 0);

	/* Out of loopback the host's byte is received after all. */
	wr(u, MCR, 0);
	assert_int_equal(rd(u, IIR), 0x04);
	assert_int_equal(rd(u, RBR), 'q');
	assert_int_equal(rd(u, IIR), 0x00);
}

static void test_receive_accounting_and_irq(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	static uint8_t big[5000];
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	wr(u, IER, 0x01);
	assert_false(f->irq.level);
	/* The queue is bounded; the rest is offered again later. */
	assert_int_equal(uart8250_receive(u, big, sizeof(big)),
			 UART8250_INPUT_QUEUE);
	assert_true(f->irq.level);
	assert_int_equal(uart8250_receive(u, big, 1), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(rd(u, RBR), (uint8_t)i);
	assert_int_equal(uart8250_receive(u, big + UART8250_INPUT_QUEUE, 20),
			 10);
	assert_int_equal(uart8250_receive(u, big, 0), 0);
	assert_int_equal(uart8250_receive(u, NULL, 5), 0);
	/* Bytes come out in order, with no loss: no overrun reported. */
	for (i = 10; i < UART8250_INPUT_QUEUE + 10; i++)
		assert_int_equal(rd(u, RBR), (uint8_t)i);
	assert_int_equal(rd(u, LSR) & 0x03, 0);
	assert_false(f->irq.level);
}

/*
 * Resetting the receive FIFO (FCR bit 1, or toggling FCR bit 0) throws
 * away what the guest sent itself in loopback, never what the host typed.
 */
static void test_fifo_reset_keeps_host_input(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	uint8_t data[40];
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	wr(u, FCR, 0x01);
	assert_int_equal(uart8250_receive(u, data, sizeof(data)), 40);
	wr(u, FCR, 0x03); /* reset the receive FIFO */
	wr(u, FCR, 0x00); /* FIFO off: a reset too */
	wr(u, FCR, 0x01);
	for (i = 0; i < sizeof(data); i++)
		assert_int_equal(rd(u, RBR), (uint8_t)i);
	assert_false(rd(u, LSR) & 0x01);

	wr(u, MCR, 0x10);
	wr(u, THR, 'x');
	wr(u, THR, 'y');
	assert_true(rd(u, LSR) & 0x01);
	wr(u, FCR, 0x03);
	assert_false(rd(u, LSR) & 0x01);
	assert_int_equal(rd(u, RBR), 0);
	wr(u, FCR, 0x03); /* clearing an empty FIFO is harmless */
	assert_false(rd(u, LSR) & 0x01);
}

/*
 * Input typed before the guest set up its receiver (FIFO off, receive
 * interrupt off) waits: the guest neither sees it nor eats it with a blind
 * RBR read, and gets it whole once it enables the receive interrupt.
 */
static void test_input_held_until_receiver_set_up(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	const char *typed = "typed";

	assert_int_equal(uart8250_receive(u, (const uint8_t *)typed, 5), 5);
	assert_false(rd(u, LSR) & 0x01);
	assert_int_equal(rd(u, RBR), 0);
	assert_int_equal(rd(u, IIR), 0x01);
	assert_false(f->irq.level);

	wr(u, IER, 0x01);
	assert_true(f->irq.level);
	assert_int_equal(rd(u, IIR), 0x04);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(rd(u, RBR), typed[i]);
	assert_false(f->irq.level);
	assert_int_equal(rd(u, IIR), 0x01);
}

/* A polling driver (firmware, a boot loader) enables the FIFO and reads
 * LSR.DR and RBR with interrupts off: it gets the input as it comes. */
static void test_polling_driver_reads_input(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;

	wr(u, FCR, 0x07);
	assert_int_equal(uart8250_receive(u, (const uint8_t *)"ok", 2), 2);
	assert_true(rd(u, LSR) & 0x01);
	assert_int_equal(rd(u, RBR), 'o');
	assert_int_equal(rd(u, RBR), 'k');
	assert_false(rd(u, LSR) & 0x01);
	assert_false(f->irq.level);
}

/*
 * What Linux's 8250 driver does to the port (drivers/tty/serial/8250/
 * 8250_port.c), register by register: the console's set_termios at boot,
 * serial8250_do_startup and set_termios when a program opens ttyS0,
 * serial8250_do_shutdown when the last one closes it.
 */
static void linux_clear_fifos(struct uart8250 *u)
{
	wr(u, FCR, 0x01);
	wr(u, FCR, 0x07);
	wr(u, FCR, 0x00);
}

static void linux_clear_interrupts(struct uart8250 *u)
{
	(void)rd(u, LSR);
	(void)rd(u, RBR);
	(void)rd(u, IIR);
	(void)rd(u, MSR);
}

static void linux_set_termios(struct uart8250 *u, uint8_t ier)
{
	wr(u, IER, ier); /* before the FIFO is (re-)enabled */
	wr(u, LCR, 0x83);
	wr(u, DLL, 1);
	wr(u, DLM, 0);
	wr(u, LCR, 0x03);
	wr(u, FCR, 0x01);
	wr(u, FCR, 0x81);
	wr(u, MCR, 0x0b);
}

static void linux_open(struct uart8250 *u)
{
	linux_clear_fifos(u);
	linux_clear_interrupts(u);
	(void)rd(u, LSR); /* the 0xff "no UART here" check */
	wr(u, IER, 0x02); /* the THRE test */
	(void)rd(u, IIR);
	wr(u, IER, 0x00);
	wr(u, IER, 0x02);
	(void)rd(u, IIR);
	wr(u, IER, 0x00);
	wr(u, LCR, 0x03);
	wr(u, MCR, 0x0b); /* OUT2, RTS, DTR */
	wr(u, IER, 0x02); /* the TX-enable test */
	(void)rd(u, LSR);
	(void)rd(u, IIR);
	wr(u, IER, 0x00);
	linux_clear_interrupts(u);
	linux_set_termios(u, 0x05); /* RLSI | RDI */
}

static void linux_close(struct uart8250 *u)
{
	wr(u, IER, 0x00);
	wr(u, MCR, 0x03);
	wr(u, LCR, rd(u, LCR) & ~0x40);
	linux_clear_fifos(u);
	(void)rd(u, RBR);
}

/* The interrupt handler: RBR while LSR.DR. Returns the bytes read. */
static size_t linux_receive(struct uart8250 *u, uint8_t *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap && (rd(u, LSR) & 0x01))
		buf[n++] = rd(u, RBR);
	return n;
}

/*
 * A user types ahead while the guest boots (issue: a 17-byte line lost
 * whole): Linux resets the FIFO and reads RBR twice while it opens the
 * port, then enables the FIFO after the receive interrupt. Every byte
 * arrives, in order, and so does what is typed while the port is closed
 * and opened again.
 */
static void test_linux_port_open_keeps_typeahead(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	const char *line = "echo typed-before-the-guest-was-ready\r";
	const char *more = "typed while nobody had the port open\r";
	uint8_t got[128];

	linux_set_termios(u, 0x00); /* the console, at boot */
	assert_int_equal(
		uart8250_receive(u, (const uint8_t *)line, strlen(line)),
		strlen(line));
	linux_open(u);
	assert_true(f->irq.level);
	assert_int_equal(rd(u, IIR), 0xc4);
	assert_int_equal(linux_receive(u, got, sizeof(got)), strlen(line));
	assert_memory_equal(got, line, strlen(line));
	assert_false(f->irq.level);

	linux_close(u);
	assert_int_equal(
		uart8250_receive(u, (const uint8_t *)more, strlen(more)),
		strlen(more));
	assert_false(f->irq.level);
	linux_open(u);
	assert_true(f->irq.level);
	assert_int_equal(linux_receive(u, got, sizeof(got)), strlen(more));
	assert_memory_equal(got, more, strlen(more));
}

static void test_output_to_pipe(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	const char *msg = "hello\n";
	char buf[16] = { 0 };
	size_t i;

	for (i = 0; msg[i]; i++)
		wr(u, THR, (uint8_t)msg[i]);
	assert_int_equal(drain(f, buf, sizeof(buf)), strlen(msg));
	assert_string_equal(buf, msg);
}

static void test_full_console_never_stalls(void **state)
{
	struct fixture *f = *state;
	char chunk[4096];
	size_t total = 0, n;
	int i;

	memset(chunk, 'x', sizeof(chunk));
	/* Fill the non-blocking pipe until the kernel refuses more. */
	while (write(f->pipe_wr, chunk, sizeof(chunk)) > 0)
		;
	assert_int_equal(errno, EAGAIN);
	for (i = 0; i < 100; i++)
		wr(f->uart, THR, 'y');
	/* The guest still sees an idle transmitter. */
	assert_int_equal(rd(f->uart, LSR) & 0x60, 0x60);
	while ((n = drain(f, chunk, sizeof(chunk))) > 0)
		total += n;
	assert_true(total > 0);
}

static void alarm_fired(int sig)
{
	fail_msg("a console write blocked the vCPU (still blocked after 10 s)");
}

/*
 * The reader of hintvm's stdout stops reading, on a *blocking* pipe (as a
 * shell pipeline gives): every THR write still returns at once, what does
 * not fit is dropped and counted, and stopping the output returns promptly.
 */
static void test_stalled_reader_never_blocks_the_vcpu(void **state)
{
	struct fake_irq irq;
	struct console_out *out;
	struct uart8250 *u;
	char chunk[4096];
	int fds[2];

	memset(chunk, 'x', sizeof(chunk));
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	out = console_out_create(fds[1]);
	assert_non_null(out);
	u = uart8250_create(fake_irq_line(&irq, 4), out);
	assert_non_null(u);
	signal(SIGALRM, alarm_fired);
	alarm(10);
	/* 64 KiB fill the pipe, 64 KiB the console buffer, the rest drops. */
	for (int i = 0; i < 256 * 1024; i++)
		wr(u, THR, 'y');
	assert_int_equal(rd(u, LSR) & 0x60, 0x60);
	assert_true(console_out_dropped(out) > 0);
	assert_int_equal(console_out_flush(out, 100), -ETIMEDOUT);
	console_out_destroy(out);
	alarm(0);
	uart8250_destroy(u);
	close(fds[0]);
	close(fds[1]);
}

static void test_discarding_console(void **state)
{
	struct fake_irq irq;
	struct uart8250 *u = uart8250_create(fake_irq_line(&irq, 3), NULL);

	assert_non_null(u);
	wr(u, THR, 'x');
	assert_int_equal(rd(u, LSR) & 0x60, 0x60);
	uart8250_destroy(u);
	uart8250_destroy(NULL);
}

static void test_odd_widths_and_offsets(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	uint8_t data[8];
	const uint8_t wide[4] = { 0xa5, 0x11, 0x22, 0x33 };
	char buf[8];

	/* A wide access handles its first byte; the rest read 0. */
	uart8250_bus_ops.write(u, SCR, wide, 4);
	memset(data, 0xee, sizeof(data));
	uart8250_bus_ops.read(u, SCR, data, 4);
	assert_int_equal(data[0], 0xa5);
	assert_int_equal(data[1], 0);
	assert_int_equal(data[2], 0);
	assert_int_equal(data[3], 0);
	uart8250_bus_ops.read(u, LSR, data, 8);
	assert_int_equal(data[0] & 0x60, 0x60);
	assert_int_equal(data[7], 0);

	/* A 2-byte THR write transmits one byte, not two. */
	uart8250_bus_ops.write(u, THR, (const uint8_t *)"AB", 2);
	assert_int_equal(drain(f, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'A');

	/* Beyond the eight registers: reads all-ones, writes vanish. */
	memset(data, 0, sizeof(data));
	uart8250_bus_ops.read(u, 8, data, 2);
	assert_int_equal(data[0], 0xff);
	assert_int_equal(data[1], 0xff);
	uart8250_bus_ops.read(u, UINT64_MAX, data, 1);
	assert_int_equal(data[0], 0xff);
	uart8250_bus_ops.write(u, 8, wide, 1);
	uart8250_bus_ops.write(u, UINT64_MAX, wide, 4);
	assert_int_equal(rd(u, SCR), 0xa5);
	/* Zero-length accesses touch nothing. */
	uart8250_bus_ops.write(u, SCR, wide + 1, 0);
	uart8250_bus_ops.read(u, RBR, data, 0);
	assert_int_equal(rd(u, SCR), 0xa5);
}

#define WRITERS 2
#define BYTES_PER_WRITER 1000

static void *writer(void *arg)
{
	struct uart8250 *u = arg;
	int i;

	for (i = 0; i < BYTES_PER_WRITER; i++)
		wr(u, THR, 'w');
	return NULL;
}

static void test_concurrent_writers(void **state)
{
	struct fixture *f = *state;
	pthread_t threads[WRITERS];
	char buf[4096];
	size_t total = 0, n;
	int i;

	wr(f->uart, IER, 0x03);
	for (i = 0; i < WRITERS; i++)
		assert_int_equal(
			pthread_create(&threads[i], NULL, writer, f->uart), 0);
	for (i = 0; i < WRITERS; i++)
		pthread_join(threads[i], NULL);
	while ((n = drain(f, buf, sizeof(buf))) > 0)
		total += n;
	/* Every byte of both vCPUs arrived once; the IRQ state is sane. */
	assert_int_equal(total, WRITERS * BYTES_PER_WRITER);
	assert_true(f->irq.level);
	assert_int_equal(rd(f->uart, IIR), 0x02);
	assert_false(f->irq.level);
}

/* Snapshot state (docs/snapshot.md): registers and loopback bytes load
 * back; a bit no 16550A register holds is refused. */
static void test_snapshot_state(void **state)
{
	struct fixture *f = *state;
	struct uart8250 *u = f->uart;
	struct uart8250_state s, bad;

	wr(u, MCR, 0x10); /* loopback */
	wr(u, THR, 'q');
	wr(u, SCR, 0x5a);
	uart8250_save(u, &s);
	assert_int_equal(s.loop_count, 1);
	wr(u, SCR, 0);
	assert_int_equal(rd(u, RBR), 'q');
	assert_int_equal(uart8250_load(u, &s), 0);
	assert_int_equal(rd(u, SCR), 0x5a);
	assert_int_equal(rd(u, RBR), 'q');

	bad = s;
	bad.ier = 0x10;
	assert_int_equal(uart8250_load(u, &bad), -EINVAL);
	bad = s;
	bad.loop_count = 17;
	assert_int_equal(uart8250_load(u, &bad), -EINVAL);
	bad = s;
	bad.reserved[0] = 1;
	assert_int_equal(uart8250_load(u, &bad), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_divisor_latch_round_trip),
		T(test_scratch_and_ier_probe),
		T(test_loopback),
		T(test_msr_deltas_and_modem_interrupt),
		T(test_fifo_detection),
		T(test_thri_raise_take_and_reraise),
		T(test_thr_write_gives_new_edge),
		T(test_iir_priority_and_clearing),
		T(test_receive_accounting_and_irq),
		T(test_fifo_reset_keeps_host_input),
		T(test_input_held_until_receiver_set_up),
		T(test_polling_driver_reads_input),
		T(test_linux_port_open_keeps_typeahead),
		T(test_output_to_pipe),
		T(test_full_console_never_stalls),
		T(test_odd_widths_and_offsets),
		T(test_concurrent_writers),
		T(test_snapshot_state),
		cmocka_unit_test(test_discarding_console),
		cmocka_unit_test(test_stalled_reader_never_blocks_the_vcpu),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
