/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transport-independent half of a virtio 1.x device: device status and
 * its handshake, feature negotiation, the queues and the device-specific
 * configuration space. Transports (virtio-pci, virtio-mmio) decode guest
 * register accesses and call in here; device models (blk, net, console,
 * rng) embed a struct virtio_device and supply virtio_device_ops.
 *
 * Locking: vdev->lock protects everything here, including the virtqueues.
 * Transports take it around register accesses (virtio_* functions below
 * that say "locked" expect the caller to hold it); devices take it in their
 * event-loop handlers around pop/push. Only modern (VERSION_1) drivers are
 * accepted: there is no legacy interface.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_DEVICE_H
#define HVM_DEVICES_VIRTIO_VIRTIO_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_config.h>

#include "core/event_loop.h"
#include "core/guest_memory.h"
#include "devices/virtio/virtqueue.h"

#define VIRTIO_BIT(n) (1ull << (n))

struct virtio_device;

struct virtio_device_ops {
	/* Driver set DRIVER_OK: start serving the queues. 0 or -errno. */
	int (*activate)(struct virtio_device *vdev);
	/*
	 * Device reset (status 0 or a failed activation): forget in-flight
	 * requests; the core resets the queues afterwards. Locked.
	 */
	void (*reset)(struct virtio_device *vdev);
	/*
	 * The driver kicked queue Q: drain it. On the event loop thread,
	 * locked, only while the device is live and the queue enabled.
	 */
	void (*queue_notify)(struct virtio_device *vdev, uint16_t q);
	/* Optional: device-specific rule on the accepted FEATURES. */
	int (*validate_features)(struct virtio_device *vdev, uint64_t features);
	/* Free the device (after the event loop has stopped). */
	void (*destroy)(struct virtio_device *vdev);
	/* Optional: the driver wrote config bytes [OFF, OFF + LEN). Locked. */
	void (*config_written)(struct virtio_device *vdev, uint32_t off,
			       uint32_t len);
};

/* What the transport provides to the device: interrupts. */
struct virtio_transport {
	/* Used-buffer notification for queue Q. */
	int (*signal_queue)(struct virtio_device *vdev, uint16_t q);
	/* Configuration change notification (also for NEEDS_RESET). */
	int (*signal_config)(struct virtio_device *vdev);
	void *ctx;
};

struct virtio_device {
	const char *name; /* for messages: "virtio-blk0" */
	const struct virtio_device_ops *ops;
	struct virtio_transport transport;
	const struct guest_memory *mem;
	pthread_mutex_t lock;

	uint32_t device_id; /* VIRTIO_ID_* */
	uint64_t device_features; /* offered (always includes VERSION_1) */
	uint64_t driver_features; /* written by the driver */
	uint8_t status;
	uint8_t config_generation;
	unsigned int errors_logged; /* driver errors logged, rate limit */

	void *config; /* device-specific configuration space */
	uint32_t config_size;

	struct virtq *vqs;
	uint16_t nr_vqs;
	struct virtio_kick *kicks; /* one eventfd per queue */

	/*
	 * Snapshots: while frozen, queue kicks are only recorded (bit Q of
	 * frozen_kicks) and nothing new is popped; requests already taken
	 * finish (virtio_device_freeze()).
	 */
	bool frozen;
	uint64_t frozen_kicks;
};

/*
 * A queue kick: an eventfd the transport hands to KVM as an ioeventfd (or
 * writes itself when a notify register write exits), watched by the event
 * loop, which then calls ops->queue_notify.
 */
struct virtio_kick {
	struct event_watch watch;
	struct virtio_device *vdev;
	uint16_t q;
	int fd;
};

/*
 * Initialise VDEV with NR_VQS queues of at most QUEUE_SIZE entries each and
 * the device FEATURES (VERSION_1 is added). CONFIG (CONFIG_SIZE bytes) is
 * the device config space, owned by the device. Returns 0 or -ENOMEM.
 */
int virtio_device_init(struct virtio_device *vdev, const char *name,
		       const struct virtio_device_ops *ops,
		       const struct guest_memory *mem, uint32_t device_id,
		       uint64_t features, uint16_t nr_vqs, uint16_t queue_size,
		       void *config, uint32_t config_size);
void virtio_device_destroy(struct virtio_device *vdev);

/* Serve queue kicks on LOOP from now on (watches outlive nothing: call once). */
int virtio_device_attach_loop(struct virtio_device *vdev,
			      struct event_loop *loop);

/* Kick queue Q from a transport register write (any thread, unlocked). */
void virtio_device_kick(struct virtio_device *vdev, uint16_t q);

/*
 * Whether a driver may accept ACCEPTED out of OFFERED: a subset, and
 * VERSION_1 present (no legacy drivers). 0 or -EINVAL with the reason in
 * hvm_error_message().
 */
int virtio_features_check(uint64_t offered, uint64_t accepted);

/* 32-bit windows of the feature words, as transports expose them. Locked. */
uint32_t virtio_device_features_word(const struct virtio_device *vdev,
				     uint32_t sel);
void virtio_driver_features_write(struct virtio_device *vdev, uint32_t sel,
				  uint32_t value);
uint32_t virtio_driver_features_word(const struct virtio_device *vdev,
				     uint32_t sel);

/*
 * The driver writes the device status (locked). 0 resets the device;
 * otherwise bits may only be added: FEATURES_OK sticks only when the
 * features pass virtio_features_check() (the driver reads it back),
 * DRIVER_OK only after FEATURES_OK and a successful activate().
 */
void virtio_set_status(struct virtio_device *vdev, uint8_t status);

/* Reset to the power-on state (locked). */
void virtio_device_reset(struct virtio_device *vdev);

/* True when the driver has set DRIVER_OK and the device is not broken. */
bool virtio_device_live(const struct virtio_device *vdev);

/*
 * Log a problem the guest caused (a bad request, a failed I/O it asked
 * for): at most a few lines per device, so a guest cannot flood the log.
 * Locked.
 */
void virtio_device_log_guest_error(struct virtio_device *vdev, const char *fmt,
				   ...) __attribute__((format(printf, 2, 3)));

/*
 * The driver broke the rules: set NEEDS_RESET and tell the driver with a
 * configuration change notification (locked).
 */
void virtio_device_set_needs_reset(struct virtio_device *vdev);

/*
 * Device config space access at OFF, LEN bytes (locked). Out-of-range or
 * oversized accesses read as zero and are ignored on write. Returns 0 or
 * -EINVAL for an access outside the space.
 */
int virtio_config_read(struct virtio_device *vdev, uint32_t off, uint8_t *data,
		       uint32_t len);
int virtio_config_write(struct virtio_device *vdev, uint32_t off,
			const uint8_t *data, uint32_t len);

/* The device changed its config space (locked): bump generation, notify. */
void virtio_config_changed(struct virtio_device *vdev);

/*
 * Enable queue Q from the addresses the transport stored (locked); on bad
 * addresses the device needs reset. Returns 0 or -EINVAL.
 */
int virtio_queue_enable(struct virtio_device *vdev, uint16_t q);

/*
 * After pushing to queue Q: send the used-buffer interrupt if the driver
 * wants one (locked).
 */
void virtio_queue_notify_driver(struct virtio_device *vdev, uint16_t q);

/*
 * A pop returned an error: the driver broke the rules on queue Q, so the
 * whole device needs reset (locked).
 */
void virtio_queue_failed(struct virtio_device *vdev, uint16_t q);

/*
 * How a device serves one queue with virtio_queue_drain(): GET_CHAIN lends
 * storage for the next chain (NULL: no request slot free, stop until one
 * frees and the device kicks the queue again); HANDLE returns the bytes
 * written into the chain to push it now, -EINPROGRESS when the device
 * keeps the chain and pushes it later, or another -errno when the request
 * shows the driver broke the rules (the device then needs reset).
 */
struct virtio_queue_handler {
	struct virtq_chain *(*get_chain)(struct virtio_device *vdev,
					 uint16_t q);
	int (*handle)(struct virtio_device *vdev, uint16_t q,
		      struct virtq_chain *chain);
};

/*
 * Serve queue Q until it is empty, with notifications suppressed while
 * draining, at most one queue's worth of chains per call (then the queue
 * kicks itself, so one busy queue cannot starve the event loop), and one
 * interrupt at the end if the driver wants it. Locked.
 */
void virtio_queue_drain(struct virtio_device *vdev, uint16_t q,
			const struct virtio_queue_handler *h);

/* ---- snapshots (docs/snapshot.md) ---- */

/*
 * Freeze VDEV for a snapshot: from now on a queue kick is recorded, not
 * served, and the host side pushes nothing new (console input waits);
 * what the device already took from a queue (a disk request in the
 * kernel) still completes. Any thread; takes the lock.
 */
void virtio_device_freeze(struct virtio_device *vdev);
/* Serve again, and the kicks that came while frozen. */
void virtio_device_thaw(struct virtio_device *vdev);

/*
 * The layout of a virtio device section (docs/snapshot.md): struct
 * virtio_device_state, its queues, the transport's state, the device's.
 */
#define VIRTIO_STATE_VERSION 1

/* One virtqueue, as saved: the driver's choices and our ring positions. */
struct virtq_state {
	uint64_t desc_gpa, avail_gpa, used_gpa;
	uint16_t size;
	uint16_t last_avail;
	uint16_t used_idx;
	uint16_t signalled_used;
	uint8_t enabled;
	uint8_t broken;
	uint8_t signalled_used_valid;
	uint8_t reserved[5];
};

/* The transport-independent state, then nr_vqs struct virtq_state. */
struct virtio_device_state {
	uint64_t driver_features;
	uint8_t status;
	uint8_t config_generation;
	uint16_t nr_vqs;
	uint32_t reserved;
};

_Static_assert(sizeof(struct virtq_state) == 40, "docs/snapshot.md's layout");
_Static_assert(sizeof(struct virtio_device_state) == 16,
	       "docs/snapshot.md's layout");

/* Bytes virtio_device_save() writes for VDEV. */
size_t virtio_device_state_size(const struct virtio_device *vdev);
/* Locked, and frozen with nothing in flight. */
void virtio_device_save(const struct virtio_device *vdev, void *buf);
/*
 * Load what virtio_device_save() wrote (LEN bytes) into a device fresh
 * from creation: every field checked against what this device can hold
 * (queue count and sizes, offered features, status bits, ring addresses
 * in RAM), -EINVAL naming the field otherwise. Locked. Nothing is
 * activated: the caller calls ops->activate for a live device.
 */
int virtio_device_load(struct virtio_device *vdev, const void *buf, size_t len);

#endif
