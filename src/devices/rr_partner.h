/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The request/response partner: the host side of the `rr` benchmark, a
 * stand-in for the remote end of a netperf TCP_RR connection. The guest
 * rings a doorbell; a partner thread answers each ring with an interrupt.
 * The machine code wires the two eventfds to KVM (doorbell port as an
 * ioeventfd, response as an irqfd), so a transaction never exits to
 * userspace on the vCPU thread: the vCPU halts, and what wakes it (halt
 * polling or not) is exactly what the benchmark measures.
 *
 * Registers: rr_partner_abi.h (shared with the guest payload).
 */
#ifndef HVM_DEVICES_RR_PARTNER_H
#define HVM_DEVICES_RR_PARTNER_H

#include "abi/rr_partner_abi.h"
#include "core/bus.h"

struct rr_partner;

/* Create the partner and start its thread; NULL with hvm_set_error(). */
struct rr_partner *rr_partner_create(void);
void rr_partner_destroy(struct rr_partner *rr);

/* Eventfd the guest's doorbell signals (register it as an ioeventfd). */
int rr_partner_request_fd(const struct rr_partner *rr);
/* Eventfd the partner signals to answer (register it as an irqfd). */
int rr_partner_response_fd(const struct rr_partner *rr);

extern const struct bus_ops rr_partner_bus_ops;

#endif
