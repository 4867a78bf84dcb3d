/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal virtio-vsock driver for the test kernels, polling only, meant
 * to run at user privilege where the CPU runs at native speed (on the dev
 * host kernel mode is emulated). The architecture finds the device and
 * programs the queues (virtio-pci on x86, virtio-mmio on arm64) with the
 * ring addresses vsock_guest_ring() hands out; everything else is here:
 *
 * - a hostile phase (one claim per case): packets with a bad length, a
 *   bad destination CID, an unknown op, a wrong type, a spoofed source,
 *   a credit overrun, a lying fwd_cnt, a second REQUEST; each must get an
 *   RST (a spoofed one nothing) while the device keeps serving;
 * - servers the host drives through hintvm's hybrid socket: echo on port
 *   1234, a sink on 1235 (counts bytes), a source on 1236 (sends
 *   vsock.source_kb KiB of a known pattern, then shuts down), the guest
 *   agent's greeting on 1024 (HELLO answered, nothing else: enough to
 *   make a VM template of, docs/template.md), and port 1 ends the
 *   payload.
 */
#ifndef TK_VSOCK_GUEST_H
#define TK_VSOCK_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#define VSOCK_GUEST_QSIZE 64
#define VSOCK_ECHO_PORT 1234
#define VSOCK_SINK_PORT 1235
#define VSOCK_SOURCE_PORT 1236
#define VSOCK_QUIT_PORT 1
/* The host port the kvm test listens on (PATH_7000) and one nobody does. */
#define VSOCK_HOST_LISTEN_PORT 7000
#define VSOCK_HOST_ABSENT_PORT 7001

struct vsock_guest_ops {
	/* Tell the device queue Q has new buffers. */
	void (*notify)(unsigned int q);
	/* The device status byte (to check it never asked for a reset). */
	uint8_t (*status)(void);
	uint64_t (*now_us)(void);
	/* Optional: the guest CID in config space, read on a transport reset. */
	uint64_t (*guest_cid)(void);
};

/* Guest-physical (= virtual) addresses of queue Q's three areas. */
struct vsock_guest_ring {
	uint64_t desc, avail, used;
};
void vsock_guest_ring(unsigned int q, struct vsock_guest_ring *r);

struct vsock_guest_stats {
	unsigned int hostile_cases, hostile_passed;
	unsigned int conns, conns_max, conns_open;
	uint64_t echoed, sunk, sourced;
	unsigned int resets; /* TRANSPORT_RESET events (a restored VM) */
	unsigned int agent_hellos; /* greetings answered on the agent port */
	bool quit; /* the host said so (port 1) */
	bool timed_out;
	bool device_ok; /* never NEEDS_RESET */
};

/*
 * With the queues enabled and DRIVER_OK set: post buffers, run the
 * hostile cases, then serve until the host connects to port 1 or
 * TIMEOUT_MS pass. SOURCE_KB: what the source port sends per connection.
 * HOSTILE: run the hostile cases first (benchmarks skip them).
 */
void vsock_guest_run(const struct vsock_guest_ops *ops, uint64_t guest_cid,
		     uint64_t timeout_ms, uint64_t source_kb, bool hostile,
		     struct vsock_guest_stats *st);

#endif
