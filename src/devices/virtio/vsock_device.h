/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the parts of virtio-vsock share: the device state and the
 * connection table (vsock_conn.c), which both virtio_vsock.c (the guest
 * end: queues, packets, credit) and vsock_host.c (the host end: the hybrid
 * socket, handshakes, host fds and their epoll set, deadlines) change. The
 * guest end drives the host end (vsock_host.h); the host end never calls
 * the guest end. Everything here runs under the device lock, on the event
 * loop thread (vCPU threads only reset the device). Not for other files:
 * the device's interface is virtio_vsock.h.
 */
#ifndef HVM_DEVICES_VIRTIO_VSOCK_DEVICE_H
#define HVM_DEVICES_VIRTIO_VSOCK_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "base/accept.h"
#include "core/event_loop.h"
#include "devices/virtio/virtio_vsock.h"
#include "devices/virtio/vsock_proto.h"

#define VSOCK_QUEUE_SIZE 256
#define VSOCK_MAX_ADOPT 16
#define RX_QUEUE 0
#define TX_QUEUE 1
#define EVENT_QUEUE 2
#define HASH_BUCKETS 1024
#define PENDING_RSTS 64
/* Host ports for host-initiated connections, as Firecracker allocates. */
#define EPHEMERAL_PORT_FIRST (1u << 30)
#define EPHEMERAL_PORT_LAST 0xfffffffeu

enum conn_state {
	CONN_HANDSHAKE, /* host client connected, CONNECT line not yet read */
	CONN_CONNECTING, /* REQUEST sent to the guest, RESPONSE awaited */
	CONN_ESTABLISHED,
	CONN_CLOSING, /* guest shut down both ways: flush to host, then RST */
	CONN_RESETTING, /* host side gone: only the RST to the guest left */
	CONN_DEAD, /* released; freed at the end of this turn */
};

/* Control packets owed to the guest, sent in this order. */
#define SEND_REQUEST 0x01
#define SEND_RESPONSE 0x02
#define SEND_SHUTDOWN 0x04
#define SEND_CREDIT 0x08
#define SEND_RST 0x10

struct link {
	struct link *prev, *next;
};

struct vsock_conn {
	struct link all; /* every connection, for deadlines and resets */
	struct link ready; /* the rx work list, when on_ready */
	struct vsock_conn *hash_next;
	enum conn_state state;
	int fd; /* host end, -1 once closed */
	uint32_t host_port, guest_port;
	uint32_t events; /* epoll interest registered now */
	bool registered; /* fd in the epoll set */
	bool on_ready;
	bool hashed;
	uint8_t send; /* SEND_* */
	uint8_t shutdown_to_send; /* flags of the SHUTDOWN owed */
	uint8_t guest_shut; /* SHUTDOWN flags the guest sent */
	bool host_eof; /* the host will send no more */
	bool host_hup; /* the host closed both ways */
	bool want_read; /* host data (or EOF) waiting to be read */
	uint64_t deadline_ns; /* 0: none */
	/* The guest's receive side, as it told us. */
	uint32_t peer_buf_alloc, peer_fwd_cnt;
	uint32_t tx_cnt; /* payload bytes sent to the guest */
	/* Our receive side (guest to host). Invariant: buf_len = rx - fwd. */
	uint32_t rx_cnt, fwd_cnt, fwd_cnt_told;
	uint8_t *buf; /* ring of VSOCK_BUF_ALLOC bytes, while non-empty */
	uint32_t buf_start, buf_len;
	char line[VSOCK_CONNECT_LINE_MAX];
	uint32_t line_len;
};

struct host_listener {
	uint32_t port;
	void (*on_connect)(int fd, void *opaque);
	void *opaque;
};

/* An in-process listener's end of a socketpair, handed over after unlock. */
struct deferred_connect {
	struct deferred_connect *next;
	void (*on_connect)(int fd, void *opaque);
	void *opaque;
	int fd;
};

struct virtio_vsock {
	struct virtio_device vdev;
	struct virtio_vsock_config config;
	uint64_t guest_cid;
	struct virtq_chain *rx_chain, *tx_chain, *event_chain;
	struct event_watch epoll_watch;
	int epoll_fd, uds_fd, timer_fd, wake_fd;
	bool timer_armed;
	/* At the file limit the listener leaves the epoll set for a while. */
	struct accept_guard accept;
	bool uds_unwatched;
	char *uds_path;
	bool told_connect_error; /* the first failed UDS_PATH_P connect, logged */
	dev_t uds_dev;
	ino_t uds_ino;

	struct vsock_conn *hash[HASH_BUCKETS];
	struct link all; /* struct vsock_conn.all */
	struct link ready; /* struct vsock_conn.ready */
	struct link dead; /* released, freed at the end of the turn */
	unsigned int nr_conns;
	uint32_t next_host_port;

	struct vsock_hdr rsts[PENDING_RSTS]; /* connection-less RSTs */
	unsigned int rst_head, rst_count;
	bool event_pending; /* TRANSPORT_RESET to announce */
	bool missed_epoll; /* host events left while frozen (snapshot) */

	struct host_listener listeners[VSOCK_MAX_HOST_LISTENERS];
	unsigned int nr_listeners;
	/* virtio_vsock_connect(): host clients' ends, for the event loop. */
	int adopt[VSOCK_MAX_ADOPT];
	unsigned int nr_adopt;
	struct deferred_connect *deferred;
	/* Connections and their buffers are charged here (--guest-objects). */
	struct budget *budget;
};

static inline struct virtio_vsock *to_vsock(struct virtio_device *vdev)
{
	return (struct virtio_vsock *)vdev;
}

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

static inline void link_init(struct link *l)
{
	l->prev = l->next = l;
}

static inline bool link_empty(const struct link *l)
{
	return l->next == l;
}

static inline void link_add_tail(struct link *head, struct link *l)
{
	l->prev = head->prev;
	l->next = head;
	head->prev->next = l;
	head->prev = l;
}

static inline void link_del(struct link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	link_init(l);
}

/* ---- vsock_conn.c: the connection table ---- */

struct vsock_conn *vsock_conn_lookup(struct virtio_vsock *vs,
				     uint32_t host_port, uint32_t guest_port);
void vsock_conn_hash(struct virtio_vsock *vs, struct vsock_conn *c);
/*
 * A new connection in STATE on host FD (-1: set later); NULL at
 * VSOCK_MAX_CONNS or over the VM's guest-object budget.
 */
struct vsock_conn *vsock_conn_new(struct virtio_vsock *vs, int fd,
				  enum conn_state state);
/* C's buffer for guest data the host has not taken, charged to the
 * budget; false when over it (or out of memory). */
bool vsock_conn_alloc_buf(struct virtio_vsock *vs, struct vsock_conn *c);
void vsock_conn_free_buf(struct virtio_vsock *vs, struct vsock_conn *c);
/* Forget C (host fd closed, no RST); freed by vsock_reap(). */
void vsock_conn_release(struct virtio_vsock *vs, struct vsock_conn *c);
/* Close the host end and owe the guest an RST (released once sent). */
void vsock_conn_reset(struct virtio_vsock *vs, struct vsock_conn *c);
/* Free what was released; at the end of every entry point. */
void vsock_reap(struct virtio_vsock *vs);
/* C has something to tell the guest: to the back of the rx work list. */
void vsock_ready_add(struct virtio_vsock *vs, struct vsock_conn *c);
/* Off the rx work list (the pump took it). */
void vsock_ready_del(struct vsock_conn *c);
/* The credit the guest granted C and it has not used. */
uint32_t vsock_conn_credit(const struct vsock_conn *c);
/* Host data may go to the guest now (data waiting, credit, open). */
bool vsock_can_send_data(const struct vsock_conn *c);
/* N more bytes reached the host: fwd_cnt, and a credit update when due. */
void vsock_forwarded(struct virtio_vsock *vs, struct vsock_conn *c, uint32_t n);
/* Nothing buffered any more: free the ring, finish a pending close. */
void vsock_after_flush(struct virtio_vsock *vs, struct vsock_conn *c);

#endif
