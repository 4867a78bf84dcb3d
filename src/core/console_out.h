/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guest console output on its way to a host fd (stdout, a pipe, a file).
 * Devices (the 8250 UART on a vCPU thread, virtio-console on the event
 * loop) put bytes into a bounded buffer and never wait; a thread of its own
 * drains the buffer into the fd. When the reader of the fd stalls, the
 * buffer fills and further output is dropped and counted: a guest can
 * neither block a vCPU or the device loop on the host's stdout, nor keep
 * the VM from stopping.
 */
#ifndef HVM_CORE_CONSOLE_OUT_H
#define HVM_CORE_CONSOLE_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct console_out;

/* Buffered output of at most this many bytes waits for the reader. */
#define CONSOLE_OUT_BUFFER (64 * 1024)

/*
 * Start draining into FD (the caller keeps it open until
 * console_out_destroy). FD -1: all output is discarded (and not counted).
 * Returns NULL with the reason in hvm_error_message().
 */
struct console_out *console_out_create(int fd);

/*
 * Write what the reader takes within a short grace time, drop the rest,
 * stop the thread and free OUT. NULL is a no-op.
 */
void console_out_destroy(struct console_out *out);

/*
 * Queue LEN bytes; never blocks. Bytes that do not fit are dropped and
 * counted. Returns the bytes queued. Thread-safe; OUT may be NULL.
 */
size_t console_out_write(struct console_out *out, const void *buf, size_t len);
size_t console_out_writev(struct console_out *out, const struct iovec *iov,
			  unsigned int nr);

/* Wait up to TIMEOUT_MS for the buffer to empty: 0, or -ETIMEDOUT. */
int console_out_flush(struct console_out *out, unsigned int timeout_ms);

/* Bytes handed to the fd, and bytes dropped because the reader stalled. */
uint64_t console_out_written(const struct console_out *out);
uint64_t console_out_dropped(const struct console_out *out);

#endif
