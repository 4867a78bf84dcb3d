/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of the guest console: a thread that reads the input fd and
 * hands bytes to the guest's console device, with the terminal in raw mode
 * while the VM runs (restored on every exit path) and an escape sequence,
 * Ctrl-A x, to stop the VM from the keyboard.
 */
#ifndef HVM_CORE_CONSOLE_H
#define HVM_CORE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

struct console_sink {
	/* Offer bytes to the guest; returns how many it took. */
	size_t (*deliver)(void *ctx, const uint8_t *buf, size_t len);
	void *ctx;
	/* The user typed the quit escape. */
	void (*quit)(void *quit_ctx);
	void *quit_ctx;
};

struct console;

/* IN_FD -1: no input. Raw mode only when IN_FD is a terminal. */
struct console *console_start(int in_fd, struct console_sink sink);
void console_stop(struct console *con);

#endif
