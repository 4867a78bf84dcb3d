/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest scheduling-hint channel ABI (docs/hint-channel.md): register
 * offsets and the event word. Plain #defines only, so freestanding guest
 * code (guest-firmware/) can include it. x86: I/O ports X86_HINT_PORT +
 * offset; arm64: the hint MMIO page + offset. All accesses are 32-bit.
 */
#ifndef HVM_ABI_HINT_ABI_H
#define HVM_ABI_HINT_ABI_H

/* Registers (byte offsets). */
#define HINT_REG_EVENT 0x0 /* write: an event word; read: HINT_MAGIC */
#define HINT_REG_INFO 0x4 /* read: version | nr_vcpus << 16 */
#define HINT_REG_ACCEPTED 0x8 /* read: events accepted from this vCPU */
#define HINT_REG_DROPPED 0xc /* read: events this vCPU had rate-limited */
#define HINT_REGION_LEN 0x10

#define HINT_MAGIC 0x484d5648 /* "HVMH" in little-endian byte order */
#define HINT_VERSION 1

/* The event word: kind in bits 31..24, target vCPU in 23..12, 11..0 zero. */
#define HINT_KIND_SHIFT 24
#define HINT_TARGET_SHIFT 12
#define HINT_TARGET_MASK 0xfff
#define HINT_RESERVED_MASK 0xfff
#define HINT_EVENT(kind, target)                     \
	(((unsigned int)(kind) << HINT_KIND_SHIFT) | \
	 (((unsigned int)(target)&HINT_TARGET_MASK) << HINT_TARGET_SHIFT))

/* "I (the writing vCPU) spin on a lock held by vCPU TARGET." */
#define HINT_KIND_SPIN_ON_HOLDER 1
/* "I am idle and polling for work" (TARGET must be 0). */
#define HINT_KIND_IDLE_POLL 2
/*
 * "I released a lock and handed it to vCPU TARGET": wake TARGET if hintvm
 * parked it after a SPIN_ON_HOLDER, or make its next park return at once.
 * A guest that sends these lets hintvm park its spinners instead of
 * yielding them (docs/hint-channel.md). Not rate-limited: it only ever
 * ends a park, and parks are.
 */
#define HINT_KIND_RELEASED 3

#endif
