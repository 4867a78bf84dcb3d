/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * typeahead: a line the user typed before the guest was ready to read it
 * is not lost. The BSP sets COM1 up as Linux's console does at boot (FIFO
 * on, interrupts off) and says "typeahead: waiting"; once the host's bytes
 * have reached the UART (LSR.DR), and a moment later, it opens the port
 * the way Linux's 8250 driver does when a program opens ttyS0
 * (serial8250_do_startup, then set_termios: the FIFO reset and disabled,
 * RBR read blindly twice, the receive interrupt enabled before the FIFO
 * is turned back on), then reads one line, up to CR or LF, by polling
 * LSR.DR (interrupts stay off: no handler is needed).
 *
 *   typeahead.wait_ms=N  how long to wait for the first typed byte
 *                        (default 60000)
 *
 * RESULT fields: got=the line (bytes outside '!'..'~' as '?'), len=its
 * length; ok=1 when a whole line came. Whether it is the line that was
 * typed is the host's claim (tests/kvm/test_terminal.c).
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "timing.h"
#include "x86.h"

#define RBR 0
#define DLL 0
#define IER 1
#define DLM 1
#define IIR 2
#define FCR 2
#define LCR 3
#define MCR 4
#define LSR 5
#define MSR 6

#define LSR_DR 0x01
#define LINE_MAX 100
#define SETTLE_MS 100 /* the rest of the line after its first byte */
#define READ_MS 10000 /* the whole line, once the port is open */

static uint64_t wait_ms;
static char line[LINE_MAX + 1];
static unsigned int line_len;
static bool whole_line;

static uint8_t in(unsigned int reg)
{
	return inb((uint16_t)(X86_COM1_PORT + reg));
}

static void out(unsigned int reg, uint8_t value)
{
	outb((uint16_t)(X86_COM1_PORT + reg), value);
}

/* set_termios: IER first, then divisor and LCR, then the FIFO back on. */
static void linux_set_termios(uint8_t ier)
{
	out(IER, ier);
	out(LCR, 0x83);
	out(DLL, 1);
	out(DLM, 0);
	out(LCR, 0x03);
	out(FCR, 0x01);
	out(FCR, 0x81);
	out(MCR, 0x0b); /* OUT2, RTS, DTR */
}

static void linux_clear_interrupts(void)
{
	(void)in(LSR);
	(void)in(RBR);
	(void)in(IIR);
	(void)in(MSR);
}

/* serial8250_do_startup, then set_termios with the receive interrupt. */
static void linux_open_port(void)
{
	out(FCR, 0x01); /* serial8250_clear_fifos: reset, then FIFO off */
	out(FCR, 0x07);
	out(FCR, 0x00);
	linux_clear_interrupts();
	(void)in(LSR); /* the "no UART here" check */
	out(IER, 0x02); /* the THRE test */
	(void)in(IIR);
	out(IER, 0x00);
	out(IER, 0x02);
	(void)in(IIR);
	out(IER, 0x00);
	out(LCR, 0x03);
	out(MCR, 0x0b);
	out(IER, 0x02); /* the TX-enable test */
	(void)in(LSR);
	(void)in(IIR);
	out(IER, 0x00);
	linux_clear_interrupts(); /* "again for luck" */
	linux_set_termios(0x05); /* RLSI | RDI */
}

static bool wait_data(uint64_t deadline)
{
	while (!(in(LSR)&LSR_DR))
		if (rdtsc() > deadline)
			return false;
	return true;
}

static bool typeahead_setup(void)
{
	return cmdline_get_u64("typeahead.wait_ms", 60000, 1, 600000, &wait_ms);
}

static void typeahead_run(struct cpu *cpu)
{
	uint64_t deadline;

	if (cpu->nr != 0)
		return;
	linux_set_termios(0x00); /* the console, at boot */
	printk("typeahead: waiting");
	if (!wait_data(rdtsc() + ms_to_tsc(wait_ms))) {
		printk("typeahead: nothing typed within %u ms",
		       (unsigned int)wait_ms);
		return;
	}
	deadline = rdtsc() + ms_to_tsc(SETTLE_MS);
	while (rdtsc() < deadline)
		cpu_relax();

	linux_open_port();
	deadline = rdtsc() + ms_to_tsc(READ_MS);
	while (line_len < LINE_MAX && wait_data(deadline)) {
		uint8_t c = in(RBR);

		if (c == '\r' || c == '\n') {
			whole_line = true;
			break;
		}
		line[line_len++] = c > ' ' && c <= '~' ? (char)c : '?';
	}
	line[line_len] = '\0';
}

static bool typeahead_report(struct result *r)
{
	result_add(r, "got", "%s", line_len ? line : "-");
	result_add(r, "len", "%u", line_len);
	return whole_line;
}

const struct payload payload_typeahead = {
	.name = "typeahead",
	.setup = typeahead_setup,
	.run = typeahead_run,
	.report = typeahead_report,
};
