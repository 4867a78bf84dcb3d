/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of the guest console: a thread that reads the input fd and
 * hands bytes to the guest's console device, with the terminal's input in
 * raw mode while the VM runs (restored on every exit path) and an escape
 * sequence, Ctrl-A x, to stop the VM from the keyboard.
 *
 * Nothing read is dropped: when the device takes less than offered (its
 * queue full, or a driver that has posted no buffers yet) the thread waits
 * for it and reads no more meanwhile, so the rest stays in the host's
 * terminal or pipe, which in turn holds back its writer, as a terminal's
 * flow control does. Each such wait is counted.
 */
#ifndef HVM_CORE_CONSOLE_H
#define HVM_CORE_CONSOLE_H

#include <stdatomic.h>
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

/* What the input thread did; its owner keeps it (the VM: --stats). */
struct console_in_stats {
	_Atomic uint64_t bytes; /* taken by the guest's console device */
	_Atomic uint64_t waits; /* reads the device could not take at once */
};

struct console;

/*
 * IN_FD -1: no input. Raw mode only when IN_FD is a terminal, and for its
 * input only: output post-processing (OPOST) stays as the terminal had it
 * (see enter_raw_mode). STATS may be NULL.
 */
struct console *console_start(int in_fd, struct console_sink sink,
			      struct console_in_stats *stats);
void console_stop(struct console *con);

#endif
