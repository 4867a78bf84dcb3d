// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An i8042 with nothing plugged in and no AUX port. The controller answers
 * its own commands at once (the status port is never busy), so every
 * handshake a driver does with it completes without polling delays.
 *
 * The device has no interrupt line, so a keyboard or mouse could not answer
 * anyway; the model is chosen so that Linux's probe finishes quickly and
 * silently:
 *  - bytes written to the keyboard (data port, no command pending) are
 *    dropped: no keyboard is attached. atkbd's probe then times out in its
 *    own thread without delaying boot.
 *  - there is no AUX port: 0xd3 (AUX loopback) returns its byte as keyboard
 *    data (AUXDATA clear), which Linux takes as "loopback failed", and 0xa9
 *    (AUX interface test) reports 0x01 (clock line stuck low). Linux then
 *    gives up on AUX at once; a 0x00 here would send it into a 250 ms wait
 *    for an AUX interrupt that can never come.
 * Responses are a single output byte; a new response replaces an unread one.
 *
 * Access rules: both ports are one byte wide; a wider access handles its
 * first byte and reads the others as 0; an access starting beyond the port
 * reads all-ones and writes nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "devices/i8042.h"

#define STS_OBF 0x01 /* output buffer full */
#define STS_SYS 0x04 /* system flag: self test passed */
#define STS_CMD 0x08 /* last write went to the command port */
#define STS_NOT_INHIBITED 0x10 /* keylock off */

#define CTR_KBDINT 0x01
#define CTR_SYS 0x04
#define CTR_KBDDIS 0x10
#define CTR_AUXDIS 0x20
#define CTR_XLATE 0x40
/* What firmware leaves behind: keyboard on and translated, AUX off. */
#define CTR_DEFAULT (CTR_KBDINT | CTR_SYS | CTR_AUXDIS | CTR_XLATE)

#define CMD_READ_CTR 0x20
#define CMD_READ_RAM_LAST 0x3f
#define CMD_WRITE_CTR 0x60
#define CMD_WRITE_RAM_LAST 0x7f
#define CMD_AUX_DISABLE 0xa7
#define CMD_AUX_ENABLE 0xa8
#define CMD_AUX_TEST 0xa9
#define CMD_SELF_TEST 0xaa
#define CMD_KBD_TEST 0xab
#define CMD_KBD_DISABLE 0xad
#define CMD_KBD_ENABLE 0xae
#define CMD_READ_OUTPUT_PORT 0xd0
#define CMD_WRITE_OUTPUT_PORT 0xd1
#define CMD_WRITE_KBD_OUTPUT 0xd2
#define CMD_AUX_LOOP 0xd3
#define CMD_AUX_SEND 0xd4
#define CMD_PULSE_FIRST 0xf0 /* 0xf0-0xff: pulse output lines whose bit is 0 */

#define SELF_TEST_OK 0x55
#define INTERFACE_TEST_OK 0x00
#define INTERFACE_CLOCK_STUCK_LOW 0x01

#define OUTPUT_PORT_RESET_INACTIVE 0x01 /* bit 0 low holds the CPU in reset */
#define OUTPUT_PORT_A20 0x02
#define OUTPUT_PORT_DEFAULT (OUTPUT_PORT_RESET_INACTIVE | OUTPUT_PORT_A20)

#define NO_COMMAND 0

struct i8042 {
	pthread_mutex_t lock;
	struct power_sink power;
	uint8_t ctr;
	uint8_t output_port;
	uint8_t awaiting_data; /* command that takes the next data byte */
	bool last_write_was_cmd;
	bool output_full;
	uint8_t output;
};

static void kbc_respond(struct i8042 *kbc, uint8_t byte)
{
	kbc->output = byte;
	kbc->output_full = true;
}

/* Returns true when the command resets the machine. */
static bool kbc_command(struct i8042 *kbc, uint8_t cmd)
{
	kbc->awaiting_data = NO_COMMAND;
	if (cmd == CMD_READ_CTR) {
		kbc_respond(kbc, kbc->ctr);
		return false;
	}
	if (cmd > CMD_READ_CTR && cmd <= CMD_READ_RAM_LAST) {
		kbc_respond(kbc, 0); /* other controller RAM: unused */
		return false;
	}
	if (cmd >= CMD_WRITE_CTR && cmd <= CMD_WRITE_RAM_LAST) {
		kbc->awaiting_data = cmd;
		return false;
	}
	if (cmd >= CMD_PULSE_FIRST)
		return !(cmd & OUTPUT_PORT_RESET_INACTIVE);

	switch (cmd) {
	case CMD_AUX_DISABLE:
		kbc->ctr |= CTR_AUXDIS;
		break;
	case CMD_AUX_ENABLE:
		kbc->ctr &= ~CTR_AUXDIS;
		break;
	case CMD_AUX_TEST:
		kbc_respond(kbc, INTERFACE_CLOCK_STUCK_LOW);
		break;
	case CMD_SELF_TEST:
		kbc->ctr |= CTR_SYS;
		kbc_respond(kbc, SELF_TEST_OK);
		break;
	case CMD_KBD_TEST:
		kbc_respond(kbc, INTERFACE_TEST_OK);
		break;
	case CMD_KBD_DISABLE:
		kbc->ctr |= CTR_KBDDIS;
		break;
	case CMD_KBD_ENABLE:
		kbc->ctr &= ~CTR_KBDDIS;
		break;
	case CMD_READ_OUTPUT_PORT:
		kbc_respond(kbc, kbc->output_port);
		break;
	case CMD_WRITE_OUTPUT_PORT:
	case CMD_WRITE_KBD_OUTPUT:
	case CMD_AUX_LOOP:
	case CMD_AUX_SEND:
		kbc->awaiting_data = cmd;
		break;
	default: /* unknown or unsupported: ignored */
		break;
	}
	return false;
}

/* Returns true when the byte resets the machine. */
static bool kbc_data(struct i8042 *kbc, uint8_t byte)
{
	uint8_t cmd = kbc->awaiting_data;

	kbc->awaiting_data = NO_COMMAND;
	switch (cmd) {
	case CMD_WRITE_CTR:
		kbc->ctr = byte;
		break;
	case CMD_WRITE_OUTPUT_PORT:
		kbc->output_port = byte;
		return !(byte & OUTPUT_PORT_RESET_INACTIVE);
	case CMD_WRITE_KBD_OUTPUT:
	case CMD_AUX_LOOP: /* no AUX port: comes back as keyboard data */
		kbc_respond(kbc, byte);
		break;
	default:
		/* CMD_AUX_SEND, controller RAM writes, or a byte for the
		 * keyboard: nothing is attached to take it. */
		break;
	}
	return false;
}

static uint8_t kbc_status(const struct i8042 *kbc)
{
	return (kbc->output_full ? STS_OBF : 0) |
	       (kbc->ctr & CTR_SYS ? STS_SYS : 0) |
	       (kbc->last_write_was_cmd ? STS_CMD : 0) | STS_NOT_INHIBITED;
}

static void kbc_bus_read(struct i8042 *kbc, uint64_t offset, uint8_t *data,
			 uint32_t len, bool status_port)
{
	if (!len)
		return;
	if (offset) {
		memset(data, 0xff, len);
		return;
	}
	memset(data, 0, len);
	pthread_mutex_lock(&kbc->lock);
	if (status_port) {
		data[0] = kbc_status(kbc);
	} else if (kbc->output_full) {
		data[0] = kbc->output;
		kbc->output_full = false;
	}
	pthread_mutex_unlock(&kbc->lock);
}

static void kbc_bus_write(struct i8042 *kbc, uint64_t offset,
			  const uint8_t *data, uint32_t len, bool command_port)
{
	bool reset;

	if (!len || offset)
		return;
	pthread_mutex_lock(&kbc->lock);
	kbc->last_write_was_cmd = command_port;
	reset = command_port ? kbc_command(kbc, data[0])
			     : kbc_data(kbc, data[0]);
	pthread_mutex_unlock(&kbc->lock);
	/* Outside the lock: the sink may stop vCPUs that wait on it. */
	if (reset)
		power_sink_event(&kbc->power, POWER_RESET, 0);
}

static void kbc_data_read(void *dev, uint64_t offset, uint8_t *data,
			  uint32_t len)
{
	kbc_bus_read(dev, offset, data, len, false);
}

static void kbc_data_write(void *dev, uint64_t offset, const uint8_t *data,
			   uint32_t len)
{
	kbc_bus_write(dev, offset, data, len, false);
}

static void kbc_cmd_read(void *dev, uint64_t offset, uint8_t *data,
			 uint32_t len)
{
	kbc_bus_read(dev, offset, data, len, true);
}

static void kbc_cmd_write(void *dev, uint64_t offset, const uint8_t *data,
			  uint32_t len)
{
	kbc_bus_write(dev, offset, data, len, true);
}

const struct bus_ops i8042_data_bus_ops = {
	.read = kbc_data_read,
	.write = kbc_data_write,
};

const struct bus_ops i8042_cmd_bus_ops = {
	.read = kbc_cmd_read,
	.write = kbc_cmd_write,
};

struct i8042 *i8042_create(struct power_sink power)
{
	struct i8042 *kbc = calloc(1, sizeof(*kbc));

	if (!kbc)
		return NULL;
	if (pthread_mutex_init(&kbc->lock, NULL)) {
		free(kbc);
		return NULL;
	}
	kbc->power = power;
	kbc->ctr = CTR_DEFAULT;
	kbc->output_port = OUTPUT_PORT_DEFAULT;
	return kbc;
}

void i8042_destroy(struct i8042 *kbc)
{
	if (!kbc)
		return;
	pthread_mutex_destroy(&kbc->lock);
	free(kbc);
}

void i8042_save(struct i8042 *kbc, struct i8042_state *s)
{
	pthread_mutex_lock(&kbc->lock);
	*s = (struct i8042_state){ .ctr = kbc->ctr,
				   .output_port = kbc->output_port,
				   .awaiting_data = kbc->awaiting_data,
				   .last_write_was_cmd =
					   kbc->last_write_was_cmd,
				   .output_full = kbc->output_full,
				   .output = kbc->output };
	pthread_mutex_unlock(&kbc->lock);
}

int i8042_load(struct i8042 *kbc, const struct i8042_state *s)
{
	if (s->last_write_was_cmd > 1 || s->output_full > 1 || s->reserved[0] ||
	    s->reserved[1])
		return hvm_set_error(
			-EINVAL,
			"i8042 state: flags %u/%u: expected 0 or 1 and zero reserved bytes",
			s->last_write_was_cmd, s->output_full);
	pthread_mutex_lock(&kbc->lock);
	kbc->ctr = s->ctr;
	kbc->output_port = s->output_port;
	kbc->awaiting_data = s->awaiting_data;
	kbc->last_write_was_cmd = s->last_write_was_cmd;
	kbc->output_full = s->output_full;
	kbc->output = s->output;
	pthread_mutex_unlock(&kbc->lock);
	return 0;
}
