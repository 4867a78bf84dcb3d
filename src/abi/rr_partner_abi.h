/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Register ABI of the rr partner (rr_partner.h), shared with the test
 * kernel's `rr` payload. Plain #defines only: freestanding code includes it.
 * The port and IRQ are in the arch's platform.h (X86_RR_PARTNER_*).
 *
 * All registers are 32-bit, offsets from the region base:
 *   0x0 DOORBELL  write: one request (any value; normally caught by the
 *                 ioeventfd; a write that reaches the device rings too)
 *                 read: RR_PARTNER_MAGIC
 *   0x4 CONTROL   write RR_CTRL_START: start measuring host CPU time;
 *                 write RR_CTRL_STOP: stop; read: requests answered
 *   0x8 CPU_NS_LO host CPU time of the whole VMM process (every thread,
 *   0xc CPU_NS_HI kernel halt polling included) between START and STOP
 *   0x10 SERVICE_US  read/write: the partner's service time, how long it
 *                 "works" (sleeps) on a request before answering, at most
 *                 RR_MAX_SERVICE_US; 0 (the default) answers at once
 * Other widths and offsets read as all-ones; such writes are ignored.
 */
#ifndef HVM_ABI_RR_PARTNER_ABI_H
#define HVM_ABI_RR_PARTNER_ABI_H

#define RR_PARTNER_LEN 0x20
#define RR_PARTNER_MAGIC 0x52525052 /* "RPRR" read as little-endian */
#define RR_REG_DOORBELL 0x0
#define RR_REG_CONTROL 0x4
#define RR_REG_CPU_NS_LO 0x8
#define RR_REG_CPU_NS_HI 0xc
#define RR_REG_SERVICE_US 0x10
#define RR_MAX_SERVICE_US 1000000
#define RR_CTRL_START 1
#define RR_CTRL_STOP 2

#endif
