/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The payload table: the one place that lists every test by name. */
#include "payload.h"

extern const struct payload payload_hello;
extern const struct payload payload_ipi;
extern const struct payload payload_smp_count;
extern const struct payload payload_snap_count;
extern const struct payload payload_snap_blk;
extern const struct payload payload_snap_net;
extern const struct payload payload_fault;
extern const struct payload payload_cpuid;
extern const struct payload payload_hint;
extern const struct payload payload_virtio;
extern const struct payload payload_exits;
extern const struct payload payload_spinlock;
extern const struct payload payload_rr;
extern const struct payload payload_panic;
extern const struct payload payload_tlbflush;
extern const struct payload payload_flood;
extern const struct payload payload_vsock;
extern const struct payload payload_durable;
extern const struct payload payload_blkload;
extern const struct payload payload_typeahead;

/* One line per payload (kept by hand so additions merge cleanly). */
/* clang-format off */
const struct payload *const payloads[] = {
	&payload_hello,
	&payload_ipi,
	&payload_smp_count,
	&payload_snap_count,
	&payload_snap_blk,
	&payload_snap_net,
	&payload_fault,
	&payload_cpuid,
	&payload_hint,
	&payload_virtio,
	&payload_exits,
	&payload_spinlock,
	&payload_rr,
	&payload_panic,
	&payload_tlbflush,
	&payload_flood,
	&payload_vsock,
	&payload_durable,
	&payload_blkload,
	&payload_typeahead,
	NULL,
};
/* clang-format on */
