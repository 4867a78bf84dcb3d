/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the harnesses of the real virtio device models share (fuzz_blk,
 * fuzz_net, fuzz_console, fuzz_rng): the device as hintvm builds it, on
 * the virtio-mmio transport, with a real event loop (io_uring) that is
 * never started, so that its completions run on the fuzzing thread when
 * the input says so. The input is a sequence of 12-byte records:
 *
 *   byte 0     kind % 5: 0 register write, 1 register read, 2 guest RAM
 *              write (8 bytes), 3 event-loop turn (kicks, I/O completions,
 *              host input the device watches), 4 host input (the device's
 *              own: a packet from the "tap", console keystrokes)
 *   byte 1     width (1 << n % 4) for register accesses; length of host
 *              input
 *   bytes 2-3  register offset % 0x200, or RAM offset
 *   bytes 4-11 value
 *
 * Nothing may crash, leak, hang or touch memory outside guest RAM, and the
 * interrupt line must follow InterruptStatus at every step. Guest RAM is
 * 64 KiB at GPA 0: ring addresses and buffers the seeds use fit in it.
 */
#ifndef HVM_FUZZ_DEVICE_HARNESS_H
#define HVM_FUZZ_DEVICE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "devices/virtio/virtio_host.h"

#define FUZZ_RAM_SIZE 0x10000u

struct fuzz_device {
	/* Called once (LLVMFuzzerInitialize); may be NULL. */
	int (*init)(void);
	/* A fresh device for one input, on HOST. */
	struct virtio_device *(*create)(const struct virtio_host *host);
	/* Host-side input of LEN bytes (kind 4); may be NULL. */
	void (*host_input)(struct virtio_device *vdev, const uint8_t *buf,
			   size_t len);
	/* After each event-loop turn, and after the device is destroyed. */
	void (*turn_done)(void);
	void (*input_done)(void);
};

int fuzz_device_init(const struct fuzz_device *d);
int fuzz_device_run(const struct fuzz_device *d, const uint8_t *data,
		    size_t size);

#endif
