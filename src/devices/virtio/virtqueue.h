/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The split virtqueue (virtio 1.x, section 2.7), device side, shared by every
 * virtio device. The three ring areas live in guest RAM and are written by a
 * guest that may be hostile and may run on other CPUs at the same time, so:
 *
 * - the ring addresses are validated once, when the driver enables the
 *   queue (alignment, whole area inside one RAM region); RAM regions never
 *   move while the VM exists, so the host pointers stay valid;
 * - every value read from the rings (indices, descriptors) is copied once
 *   into host memory and validated there, never re-read;
 * - a chain is turned into host iovecs only after every descriptor in it has
 *   been checked (index < size, buffer inside RAM, direction order, length
 *   totals, no loop, indirect tables well formed);
 * - a driver that breaks the rules makes the queue "broken": nothing more is
 *   consumed from it until the device is reset, and the device reports
 *   VIRTIO_CONFIG_S_NEEDS_RESET (see virtio_device.h).
 *
 * A virtqueue is used from one thread at a time (the device's event loop);
 * configuration happens under the device lock while the queue is stopped.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTQUEUE_H
#define HVM_DEVICES_VIRTIO_VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/guest_memory.h"

#define VIRTQ_MAX_SIZE 32768

/* Guest-physical layout of a split ring; sizes per virtio 1.x 2.7. */
#define VIRTQ_DESC_SIZE 16
#define VIRTQ_DESC_ALIGN 16
#define VIRTQ_AVAIL_ALIGN 2
#define VIRTQ_USED_ALIGN 4

static inline uint64_t virtq_desc_bytes(uint16_t size)
{
	return (uint64_t)VIRTQ_DESC_SIZE * size;
}

/* flags, idx, ring[size], used_event */
static inline uint64_t virtq_avail_bytes(uint32_t size)
{
	return 2 + 2 + 2ull * size + 2;
}

/* flags, idx, ring[size] of {id, len}, avail_event */
static inline uint64_t virtq_used_bytes(uint32_t size)
{
	return 2 + 2 + 8ull * size + 2;
}

/*
 * virtio 1.x 2.7.7.2 "vring_need_event": true when moving the index from
 * OLD to NEW crossed EVENT, i.e. the other side asked to hear about it.
 */
static inline bool virtq_need_event(uint16_t event, uint16_t new_idx,
				    uint16_t old_idx)
{
	return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

struct virtq {
	const struct guest_memory *mem;
	uint16_t max_size; /* what the device offers */
	uint16_t size; /* what the driver chose; power of two */
	bool enabled;
	bool broken; /* driver broke the rules; see virtq_error() */
	bool event_idx; /* VIRTIO_RING_F_EVENT_IDX negotiated */
	bool indirect; /* VIRTIO_RING_F_INDIRECT_DESC negotiated */

	uint64_t desc_gpa, avail_gpa, used_gpa;
	/* Host views of the rings, valid while enabled. */
	uint8_t *desc;
	uint8_t *avail;
	uint8_t *used;

	uint16_t last_avail; /* next avail ring slot to consume */
	uint16_t used_idx; /* our copy of used->idx */
	uint16_t signalled_used; /* used_idx at the last interrupt decision */
	bool signalled_used_valid;
};

/*
 * One popped descriptor chain. iov[0 .. nr_out) are device-readable
 * buffers (driver to device), iov[nr_out .. nr_out + nr_in) device-writable.
 * The iovecs point into guest RAM; they stay valid for the life of the VM,
 * but the driver owns the contents until the chain is pushed back.
 */
struct virtq_chain {
	uint16_t head;
	uint16_t nr_out;
	uint16_t nr_in;
	uint16_t iov_cap; /* capacity of iov[], set by virtq_chain_alloc */
	uint32_t out_len; /* total bytes in the readable part */
	uint32_t in_len; /* total bytes in the writable part */
	struct iovec iov[];
};

/* A chain able to hold CAP buffers (use the queue's max size). */
struct virtq_chain *virtq_chain_alloc(uint16_t cap);

static inline struct iovec *virtq_chain_in(struct virtq_chain *chain)
{
	return chain->iov + chain->nr_out;
}

void virtq_init(struct virtq *vq, const struct guest_memory *mem,
		uint16_t max_size);

/* Back to the state after virtq_init (device reset). */
void virtq_reset(struct virtq *vq);

/*
 * The driver's queue size: a power of two in [1, max_size]. Returns 0 or
 * -EINVAL (the size is left unchanged). Only while the queue is disabled.
 */
int virtq_set_size(struct virtq *vq, uint32_t size);

/*
 * Enable the queue with the ring addresses already stored in desc_gpa,
 * avail_gpa and used_gpa and the negotiated device FEATURES. Validates
 * alignment and that each area lies in RAM; returns 0, or -EINVAL with the
 * reason in hvm_error_message().
 */
int virtq_enable(struct virtq *vq, uint64_t features);

/*
 * Take the next available chain. Returns 1 with CHAIN filled, 0 when the
 * driver has not made anything available, or -EINVAL when the driver broke
 * the rules (the queue is then broken; the reason is logged and left in
 * hvm_error_message()). A broken or disabled queue returns -EIO / 0.
 */
int virtq_pop(struct virtq *vq, struct virtq_chain *chain);

/*
 * Give back the chain popped last (not yet pushed), e.g. an rx buffer
 * popped when no packet was ready after all. It is read and validated
 * again by the next pop.
 */
void virtq_unpop(struct virtq *vq);

/* True when a pop would find something (without consuming it). */
bool virtq_has_avail(struct virtq *vq);

/*
 * Hand the chain with head HEAD back to the driver, WRITTEN bytes written
 * into its writable part. Publishes used->idx with release semantics.
 */
void virtq_push(struct virtq *vq, uint16_t head, uint32_t written);

/*
 * Whether the driver wants an interrupt for what was pushed since the last
 * call (EVENT_IDX used_event, or VRING_AVAIL_F_NO_INTERRUPT).
 */
bool virtq_should_notify(struct virtq *vq);

/*
 * Notification suppression for the driver-to-device direction, used by
 * a device that drains a queue in a loop: virtq_disable_notify() before,
 * virtq_enable_notify() after. The latter returns true when new buffers
 * arrived meanwhile (drain again instead of waiting for a kick).
 */
void virtq_disable_notify(struct virtq *vq);
bool virtq_enable_notify(struct virtq *vq);

/*
 * Mark the queue broken because the driver broke a rule; logs the reason
 * once. Returns -EINVAL for tail calls.
 */
int virtq_error(struct virtq *vq, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
