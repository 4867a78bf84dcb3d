/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The part of an i8042 keyboard controller a guest without a keyboard
 * needs: a status port that never reads busy (Linux's probe and its reboot
 * path poll it), the command/data handshake Linux's probe uses, and the
 * 0xfe "pulse reset line" command, which resets the VM (reboot=k).
 */
#ifndef HVM_DEVICES_I8042_H
#define HVM_DEVICES_I8042_H

#include "core/bus.h"
#include "core/power.h"

struct i8042;

struct i8042 *i8042_create(struct power_sink power);
void i8042_destroy(struct i8042 *kbc);

extern const struct bus_ops i8042_data_bus_ops; /* port 0x60, 1 byte */
extern const struct bus_ops i8042_cmd_bus_ops; /* port 0x64, 1 byte */

/* Snapshot (docs/snapshot.md): the controller's bytes and flags. */
#define I8042_STATE_VERSION 1
struct i8042_state {
	uint8_t ctr, output_port, awaiting_data, last_write_was_cmd;
	uint8_t output_full, output;
	uint8_t reserved[2];
};
void i8042_save(struct i8042 *kbc, struct i8042_state *s);
int i8042_load(struct i8042 *kbc, const struct i8042_state *s);

#endif
