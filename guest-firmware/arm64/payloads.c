/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The payload table: the one place that lists every test by name. */
#include "payload.h"

extern const struct payload payload_hello;
extern const struct payload payload_ipi;
extern const struct payload payload_smp_count;
extern const struct payload payload_snap_count;
extern const struct payload payload_fault;
extern const struct payload payload_cpuid;
extern const struct payload payload_bad_mmio;
extern const struct payload payload_hint;
extern const struct payload payload_vsock;

const struct payload *const payloads[] = {
	&payload_hello, &payload_ipi,	&payload_smp_count, &payload_snap_count,
	&payload_fault, &payload_cpuid, &payload_bad_mmio,
	&payload_hint,	&payload_vsock, NULL,
};
