/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal polling virtio-blk driver for payloads (durable, blkload):
 * the first virtio-blk function on PCI bus 0, one queue of four
 * descriptors, VERSION_1 and FLUSH negotiated, no interrupts. BSP only.
 */
#ifndef TK_VIRTIO_BLK_POLL_H
#define TK_VIRTIO_BLK_POLL_H

#include <stdbool.h>
#include <stdint.h>

#define VBLK_SECTOR 512
#define VBLK_T_IN 0
#define VBLK_T_OUT 1
#define VBLK_T_FLUSH 4

/* Find and initialise the disk; false (and a line printed) when absent. */
bool vblk_open(void);

/*
 * One request to completion: TYPE at SECTOR with LEN bytes of DATA (none
 * for a flush; LEN a multiple of 512). True when the device answered OK.
 */
bool vblk_request(uint32_t type, uint64_t sector, void *data, uint32_t len);

/* The status byte of the last request (0xff: never answered). */
uint8_t vblk_last_status(void);

#endif
