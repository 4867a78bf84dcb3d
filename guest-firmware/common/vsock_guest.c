/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test kernels' virtio-vsock driver (see vsock_guest.h). Split rings
 * of 64 entries, no EVENT_IDX, no interrupts: the loop polls the used
 * rings. rx buffers are one 4 KiB descriptor each (header + payload), tx
 * packets one descriptor from a slot of header + up to 4 KiB. Each
 * connection of the echo server buffers what it has not echoed yet (its
 * credit: ECHO_BUF bytes), and echoes only as far as the host's credit
 * allows, so both directions of flow control are exercised.
 */
#include "vsock_guest.h"
#include "abi/agent_proto.h"
#include "lib.h"

#define QSIZE VSOCK_GUEST_QSIZE
#define RXQ 0
#define TXQ 1
#define EVQ 2
#define HDR 44
#define RXBUF 4096
#define TXPAY 4096
#define HOST_CID 2
#define MAX_CONNS 1100
#define HASH 1024
#define ECHO_BUF 8192
#define SINK_BUF (256 * 1024)
#define FIRST_LOCAL_PORT 50000
#define HOSTILE_WAIT_US 2000000

enum {
	OP_REQUEST = 1,
	OP_RESPONSE,
	OP_RST,
	OP_SHUTDOWN,
	OP_RW,
	OP_CREDIT_UPDATE,
	OP_CREDIT_REQUEST
};
enum { ROLE_ECHO = 1, ROLE_SINK, ROLE_SOURCE, ROLE_CLIENT, ROLE_AGENT };
/* The greeter's frames: a header and a small HELLO (docs/agent.md). */
#define AGENT_IN_MAX 256

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vq {
	struct desc desc[QSIZE] __attribute__((aligned(16)));
	struct {
		uint16_t flags, idx, ring[QSIZE], used_event;
	} avail __attribute__((aligned(2)));
	struct {
		uint16_t flags, idx;
		struct {
			uint32_t id, len;
		} ring[QSIZE];
		uint16_t avail_event;
	} used __attribute__((aligned(4)));
	uint16_t last_used, avail_idx;
	bool dirty; /* added since the last notify */
};

struct hdr {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port, len;
	uint16_t type, op;
	uint32_t flags, buf_alloc, fwd_cnt;
} __attribute__((packed));

struct conn {
	bool used;
	uint8_t role;
	bool peer_done; /* the host will send no more */
	bool closing; /* SHUTDOWN once the echo buffer is empty */
	bool shut_sent; /* waiting for the device's RST */
	uint16_t hash_next; /* index + 1 */
	uint32_t host_port, port;
	uint32_t peer_buf_alloc, peer_fwd_cnt, tx_cnt;
	uint32_t rx_cnt, fwd_cnt, fwd_told, buf_alloc;
	uint32_t head, len; /* echo ring (the greeter's replies too) */
	uint16_t in_len; /* the greeter: bytes of a frame in agent_in */
	uint64_t source_left;
};

static struct vq vqs[3] __attribute__((aligned(4096)));
static uint8_t rxbuf[QSIZE][RXBUF] __attribute__((aligned(64)));
static uint8_t txbuf[QSIZE][HDR + TXPAY] __attribute__((aligned(64)));
static uint32_t evbuf[4];
static uint16_t tx_free[QSIZE], nr_tx_free;
static struct conn conns[MAX_CONNS];
static uint8_t echo[MAX_CONNS][ECHO_BUF];
static uint16_t buckets[HASH]; /* index + 1 */
static uint8_t scratch[TXPAY];
static uint8_t agent_in[MAX_CONNS][AGENT_IN_MAX];

static const struct vsock_guest_ops *ops;
static uint64_t cid;
static uint64_t source_bytes;
static struct vsock_guest_stats *stats;
/* What the hostile phase waits for, by local port - FIRST_LOCAL_PORT. */
static uint8_t seen_op[32];
static uint64_t seen_src_cid[32];

static void fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void vsock_guest_ring(unsigned int q, struct vsock_guest_ring *r)
{
	r->desc = (uint64_t)(uintptr_t)vqs[q].desc;
	r->avail = (uint64_t)(uintptr_t)&vqs[q].avail;
	r->used = (uint64_t)(uintptr_t)&vqs[q].used;
}

static void vq_add(unsigned int q, uint16_t id, uint64_t addr, uint32_t len,
		   bool device_writes)
{
	struct vq *vq = &vqs[q];

	vq->desc[id] = (struct desc){ addr, len, device_writes ? 2 : 0, 0 };
	vq->avail.ring[vq->avail_idx % QSIZE] = id;
	fence();
	vq->avail_idx++;
	WRITE_ONCE(vq->avail.idx, vq->avail_idx);
	vq->dirty = true;
}

static void kick(unsigned int q)
{
	if (!vqs[q].dirty)
		return;
	vqs[q].dirty = false;
	fence();
	ops->notify(q);
}

static bool vq_used(unsigned int q, uint32_t *id, uint32_t *len)
{
	struct vq *vq = &vqs[q];

	if (READ_ONCE(vq->used.idx) == vq->last_used)
		return false;
	fence();
	*id = vq->used.ring[vq->last_used % QSIZE].id;
	*len = vq->used.ring[vq->last_used % QSIZE].len;
	vq->last_used++;
	return true;
}

static void reclaim_tx(void)
{
	uint32_t id, len;

	while (vq_used(TXQ, &id, &len))
		if (id < QSIZE)
			tx_free[nr_tx_free++] = (uint16_t)id;
}

/* A free tx slot, waiting for the device to give one back if need be. */
static int tx_slot(void)
{
	uint64_t deadline = ops->now_us() + HOSTILE_WAIT_US;

	reclaim_tx();
	while (!nr_tx_free) {
		kick(TXQ);
		reclaim_tx();
		if (ops->now_us() > deadline)
			return -1;
	}
	return tx_free[--nr_tx_free];
}

/* Queue one packet: H (its len is the payload), PAYLOAD, CHAIN_LEN bytes. */
static bool send_raw(const struct hdr *h, const void *payload,
		     uint32_t chain_len)
{
	int slot = tx_slot();

	if (slot < 0)
		return false;
	memcpy(txbuf[slot], h, HDR);
	if (chain_len > HDR && payload)
		memcpy(txbuf[slot] + HDR, payload, chain_len - HDR);
	vq_add(TXQ, (uint16_t)slot, (uint64_t)(uintptr_t)txbuf[slot], chain_len,
	       false);
	return true;
}

static struct hdr make_hdr(const struct conn *c, uint16_t op, uint32_t len)
{
	return (struct hdr){ .src_cid = cid,
			     .dst_cid = HOST_CID,
			     .src_port = c->port,
			     .dst_port = c->host_port,
			     .len = len,
			     .type = 1,
			     .op = op,
			     .buf_alloc = c->buf_alloc,
			     .fwd_cnt = c->fwd_cnt };
}

static bool send_ctl(struct conn *c, uint16_t op, uint32_t flags)
{
	struct hdr h = make_hdr(c, op, 0);

	h.flags = flags;
	c->fwd_told = c->fwd_cnt;
	return send_raw(&h, 0, HDR);
}

/* ---- connections ---- */

static unsigned int hash_of(uint32_t host_port, uint32_t port)
{
	return (host_port * 2654435761u ^ port * 40503u) % HASH;
}

static struct conn *lookup(uint32_t host_port, uint32_t port)
{
	for (uint16_t i = buckets[hash_of(host_port, port)]; i;
	     i = conns[i - 1].hash_next) {
		struct conn *c = &conns[i - 1];

		if (c->host_port == host_port && c->port == port)
			return c;
	}
	return 0;
}

static struct conn *conn_new(uint32_t host_port, uint32_t port, uint8_t role)
{
	for (unsigned int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &conns[i];
		unsigned int b = hash_of(host_port, port);

		if (c->used)
			continue;
		*c = (struct conn){ .used = true,
				    .role = role,
				    .host_port = host_port,
				    .port = port,
				    .buf_alloc = role == ROLE_SINK ? SINK_BUF
								   : ECHO_BUF,
				    .hash_next = buckets[b] };
		buckets[b] = (uint16_t)(i + 1);
		stats->conns++;
		if (++stats->conns_open > stats->conns_max)
			stats->conns_max = stats->conns_open;
		return c;
	}
	return 0;
}

static void conn_free(struct conn *c)
{
	uint16_t *p = &buckets[hash_of(c->host_port, c->port)];
	uint16_t me = (uint16_t)(c - conns + 1);

	while (*p && *p != me)
		p = &conns[*p - 1].hash_next;
	if (*p)
		*p = c->hash_next;
	c->used = false;
	stats->conns_open--;
}

static uint32_t peer_credit(const struct conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt;

	return in_flight >= c->peer_buf_alloc ? 0
					      : c->peer_buf_alloc - in_flight;
}

/* ---- receiving ---- */

static void reply_rst(const struct hdr *h)
{
	struct hdr r = { .src_cid = cid,
			 .dst_cid = h->src_cid,
			 .src_port = h->dst_port,
			 .dst_port = h->src_port,
			 .type = 1,
			 .op = OP_RST };

	send_raw(&r, 0, HDR);
}

/* Queue N bytes for the host on C (the echo ring, sent by pump()). */
static void queue_out(struct conn *c, const uint8_t *data, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		echo[c - conns][(c->head + c->len + i) % ECHO_BUF] = data[i];
	c->len += n;
}

static uint32_t put_attr(uint8_t *p, uint16_t type, const void *v, uint16_t len)
{
	p[0] = (uint8_t)type;
	p[1] = (uint8_t)(type >> 8);
	p[2] = (uint8_t)len;
	p[3] = (uint8_t)(len >> 8);
	memcpy(p + 4, v, len);
	return 4u + len;
}

/*
 * The agent's greeting on port AGENT_VSOCK_PORT, and nothing more: HELLO
 * is answered with HELLO (VERSION 1), any other request with ERROR
 * EOPNOTSUPP, as an agent answers a type it does not know. Enough for the
 * host to tell that a guest is ready (a VM template is snapshotted once
 * its agent greets, docs/template.md); exec needs a Linux guest.
 */
static void agent_frame(struct conn *c, uint16_t type, uint32_t id)
{
	static const char name[] = "hintvm test kernel";
	static const char msg[] = "the test kernel's agent answers HELLO only";
	uint8_t out[AGENT_HDR_SIZE + 128];
	uint32_t one = AGENT_PROTO_VERSION, max = AGENT_IN_MAX - AGENT_HDR_SIZE;
	uint32_t eopnotsupp = 95, n = AGENT_HDR_SIZE;
	uint16_t reply =
		type == AGENT_MSG_HELLO ? AGENT_MSG_HELLO : AGENT_MSG_ERROR;

	if (reply == AGENT_MSG_HELLO) {
		n += put_attr(out + n, AGENT_ATTR_VERSION, &one, 4);
		n += put_attr(out + n, AGENT_ATTR_NAME, name, sizeof(name) - 1);
		n += put_attr(out + n, AGENT_ATTR_MAX_PAYLOAD, &max, 4);
		stats->agent_hellos++;
	} else {
		n += put_attr(out + n, AGENT_ATTR_ERRNO, &eopnotsupp, 4);
		n += put_attr(out + n, AGENT_ATTR_MESSAGE, msg,
			      sizeof(msg) - 1);
	}
	for (int i = 0; i < 4; i++) {
		out[i] = (uint8_t)((n - AGENT_HDR_SIZE) >> (8 * i));
		out[8 + i] = (uint8_t)(id >> (8 * i));
	}
	out[4] = (uint8_t)reply;
	out[5] = (uint8_t)(reply >> 8);
	out[6] = out[7] = 0;
	queue_out(c, out, n);
}

static void agent_in_bytes(struct conn *c, const uint8_t *data, uint32_t len)
{
	uint8_t *in = agent_in[c - conns];

	c->fwd_cnt += len; /* taken in at once: the credit is the host's */
	for (uint32_t i = 0; i < len; i++) {
		uint32_t plen;

		if (c->in_len == AGENT_IN_MAX) {
			printk("vsock: agent port: a frame over %u bytes",
			       AGENT_IN_MAX);
			send_ctl(c, OP_RST, 0);
			conn_free(c);
			return;
		}
		in[c->in_len++] = data[i];
		if (c->in_len < AGENT_HDR_SIZE)
			continue;
		plen = in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
		       (uint32_t)in[3] << 24;
		if (plen > AGENT_IN_MAX - AGENT_HDR_SIZE) {
			c->in_len = AGENT_IN_MAX; /* refused at the next byte */
			continue;
		}
		if (c->in_len < AGENT_HDR_SIZE + plen)
			continue;
		agent_frame(c, (uint16_t)(in[4] | in[5] << 8),
			    in[8] | (uint32_t)in[9] << 8 |
				    (uint32_t)in[10] << 16 |
				    (uint32_t)in[11] << 24);
		c->in_len = 0;
	}
}

static void echo_in(struct conn *c, const uint8_t *data, uint32_t len)
{
	if (c->role == ROLE_AGENT) {
		agent_in_bytes(c, data, len);
		return;
	}
	if (c->role == ROLE_SINK) {
		stats->sunk += len;
		c->fwd_cnt += len;
		if (c->fwd_cnt - c->fwd_told >= SINK_BUF / 2)
			send_ctl(c, OP_CREDIT_UPDATE, 0);
		return;
	}
	if (c->role != ROLE_ECHO)
		return; /* the hostile client's peer: discard */
	if (len > ECHO_BUF - c->len) {
		/* The host sent beyond our credit: it broke the rules. */
		printk("vsock: host overran the credit of port %u", c->port);
		send_ctl(c, OP_RST, 0);
		conn_free(c);
		return;
	}
	for (uint32_t i = 0; i < len; i++)
		echo[c - conns][(c->head + c->len + i) % ECHO_BUF] = data[i];
	c->len += len;
}

static void handle(const struct hdr *h, const uint8_t *data)
{
	struct conn *c;
	unsigned int slot = h->dst_port - FIRST_LOCAL_PORT;

	if (h->dst_cid != cid)
		return;
	if (slot < 32) {
		seen_op[slot] = (uint8_t)h->op;
		seen_src_cid[slot] = h->src_cid;
	}
	c = lookup(h->src_port, h->dst_port);
	if (!c) {
		uint8_t role = h->dst_port == VSOCK_ECHO_PORT	  ? ROLE_ECHO
			       : h->dst_port == VSOCK_SINK_PORT	  ? ROLE_SINK
			       : h->dst_port == VSOCK_SOURCE_PORT ? ROLE_SOURCE
			       : h->dst_port == AGENT_VSOCK_PORT  ? ROLE_AGENT
								  : 0;

		if (h->op != OP_REQUEST) {
			if (h->op != OP_RST)
				reply_rst(h);
			return;
		}
		if (h->dst_port == VSOCK_QUIT_PORT)
			stats->quit = true;
		if (!role || !(c = conn_new(h->src_port, h->dst_port, role))) {
			reply_rst(h);
			return;
		}
		c->peer_buf_alloc = h->buf_alloc;
		c->peer_fwd_cnt = h->fwd_cnt;
		c->source_left = role == ROLE_SOURCE ? source_bytes : 0;
		send_ctl(c, OP_RESPONSE, 0);
		return;
	}
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	switch (h->op) {
	case OP_RW:
		c->rx_cnt += h->len;
		echo_in(c, data, h->len);
		break;
	case OP_SHUTDOWN:
		if (h->flags & 2) /* the host sends no more */
			c->peer_done = true;
		if ((h->flags & 3) == 3 || c->role != ROLE_ECHO)
			c->closing = true;
		else if (c->peer_done)
			c->closing = true; /* echo the rest, then close */
		break;
	case OP_RST:
		conn_free(c);
		break;
	case OP_CREDIT_REQUEST:
		send_ctl(c, OP_CREDIT_UPDATE, 0);
		break;
	case OP_RESPONSE: /* our hostile client connected */
	case OP_CREDIT_UPDATE:
	default:
		break;
	}
}

/* Handle what the device put on the rx queue; repost the buffers. */
static unsigned int poll_rx(void)
{
	unsigned int n = 0;
	uint32_t id, len;

	while (vq_used(RXQ, &id, &len)) {
		struct hdr h;

		if (id >= QSIZE)
			continue;
		if (len >= HDR) {
			memcpy(&h, rxbuf[id], HDR);
			if (h.len <= len - HDR)
				handle(&h, rxbuf[id] + HDR);
		}
		vq_add(RXQ, (uint16_t)id, (uint64_t)(uintptr_t)rxbuf[id], RXBUF,
		       true);
		n++;
	}
	kick(RXQ);
	return n;
}

/* Echo and source data as far as the host's credit allows. */
static void pump(void)
{
	for (unsigned int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &conns[i];

		if (!c->used)
			continue;
		while ((c->role == ROLE_ECHO || c->role == ROLE_AGENT) &&
		       c->len && peer_credit(c)) {
			uint32_t n = c->len;
			uint8_t *tmp = scratch;
			struct hdr h;

			if (n > TXPAY)
				n = TXPAY;
			if (n > peer_credit(c))
				n = peer_credit(c);
			for (uint32_t k = 0; k < n; k++)
				tmp[k] = echo[i][(c->head + k) % ECHO_BUF];
			c->head = (c->head + n) % ECHO_BUF;
			c->len -= n;
			/* consumed: the host may send more (the greeter's
			 * input was counted when it came) */
			if (c->role == ROLE_ECHO)
				c->fwd_cnt += n;
			h = make_hdr(c, OP_RW, n);
			c->fwd_told = c->fwd_cnt;
			if (!send_raw(&h, tmp, HDR + n))
				return;
			c->tx_cnt += n;
			if (c->role == ROLE_ECHO)
				stats->echoed += n;
		}
		while (c->role == ROLE_SOURCE && c->source_left &&
		       peer_credit(c)) {
			uint32_t n = TXPAY;
			uint8_t *tmp = scratch;
			struct hdr h;

			if (n > c->source_left)
				n = (uint32_t)c->source_left;
			if (n > peer_credit(c))
				n = peer_credit(c);
			/* A pattern the host checks: byte k of the stream. */
			for (uint32_t k = 0; k < n; k++)
				tmp[k] = (uint8_t)((c->tx_cnt + k) * 7 + 1);
			h = make_hdr(c, OP_RW, n);
			if (!send_raw(&h, tmp, HDR + n))
				return;
			c->tx_cnt += n;
			c->source_left -= n;
			stats->sourced += n;
			if (!c->source_left)
				c->closing = true;
		}
		/*
		 * As Linux's close(): SHUTDOWN both ways, and the device
		 * answers with an RST once the host has all the data.
		 */
		if (c->closing && !c->len && !c->shut_sent &&
		    !(c->role == ROLE_SOURCE && c->source_left)) {
			send_ctl(c, OP_SHUTDOWN, 3);
			c->shut_sent = true;
		}
	}
	kick(TXQ);
}

/*
 * The event queue: TRANSPORT_RESET (virtio 1.x 5.10.6.4, event id 0) says
 * every connection is gone and the guest CID may have changed (a VM
 * restored from a snapshot, a clone): forget the connections and read the
 * CID again, as Linux's driver does.
 */
static void poll_events(void)
{
	uint32_t id, len;
	bool reposted = false;

	while (vq_used(EVQ, &id, &len)) {
		if (id >= 4)
			continue;
		if (len >= 4 && evbuf[id] == 0) {
			for (unsigned int i = 0; i < MAX_CONNS; i++)
				if (conns[i].used)
					conn_free(&conns[i]);
			if (ops->guest_cid)
				cid = ops->guest_cid();
			stats->resets++;
			printk("vsock: transport reset, cid %u",
			       (unsigned int)cid);
		}
		evbuf[id] = 0xffffffff;
		vq_add(EVQ, (uint16_t)id, (uint64_t)(uintptr_t)&evbuf[id], 4,
		       true);
		reposted = true;
	}
	if (reposted)
		kick(EVQ);
}

static void serve_once(void)
{
	poll_events();
	reclaim_tx();
	poll_rx();
	pump();
}

/* ---- the hostile phase ---- */

static struct hdr client_hdr(unsigned int slot, uint16_t op, uint32_t port)
{
	return (struct hdr){ .src_cid = cid,
			     .dst_cid = HOST_CID,
			     .src_port = FIRST_LOCAL_PORT + slot,
			     .dst_port = port,
			     .type = 1,
			     .op = op,
			     .buf_alloc = ECHO_BUF };
}

/* Serve until the device answers SLOT with OP; false on timeout. */
static bool wait_for(unsigned int slot, uint8_t op)
{
	uint64_t deadline = ops->now_us() + HOSTILE_WAIT_US;

	while (ops->now_us() < deadline) {
		kick(TXQ);
		serve_once();
		if (seen_op[slot] == op)
			return true;
	}
	return false;
}

static void claim(bool ok, const char *what)
{
	stats->hostile_cases++;
	if (ok)
		stats->hostile_passed++;
	else
		printk("vsock_hostile: %s: not refused as expected", what);
}

/* Send H over a chain of CHAIN_LEN bytes; the device must reset it. */
static void expect_rst(unsigned int slot, struct hdr h, uint32_t chain_len,
		       const char *what)
{
	static const uint8_t junk[64];

	send_raw(&h, junk, chain_len);
	claim(wait_for(slot, OP_RST), what);
}

/* A connection from the guest to the kvm test's listener. */
static struct conn *client_connect(unsigned int slot)
{
	struct hdr h = client_hdr(slot, OP_REQUEST, VSOCK_HOST_LISTEN_PORT);
	struct conn *c = conn_new(VSOCK_HOST_LISTEN_PORT,
				  FIRST_LOCAL_PORT + slot, ROLE_CLIENT);

	if (!c)
		return 0;
	send_raw(&h, 0, HDR);
	if (!wait_for(slot, OP_RESPONSE)) {
		if (c->used)
			conn_free(c);
		return 0;
	}
	return c;
}

static void hostile_phase(void)
{
	struct hdr h;
	struct conn *c;

	h = client_hdr(0, OP_REQUEST, VSOCK_HOST_ABSENT_PORT);
	expect_rst(0, h, HDR, "connect to a port nobody listens on");
	h = client_hdr(1, OP_REQUEST, VSOCK_HOST_LISTEN_PORT);
	h.dst_cid = 77;
	expect_rst(1, h, HDR, "destination CID 77");
	claim(seen_src_cid[1] == 77, "RST from the CID asked for");
	h = client_hdr(2, OP_REQUEST, VSOCK_HOST_LISTEN_PORT);
	h.type = 2;
	expect_rst(2, h, HDR, "seqpacket type");
	h = client_hdr(3, 42, VSOCK_HOST_LISTEN_PORT);
	expect_rst(3, h, HDR, "unknown op 42");
	h = client_hdr(4, 0, VSOCK_HOST_LISTEN_PORT);
	expect_rst(4, h, HDR, "op 0 (INVALID)");
	h = client_hdr(5, OP_RW, VSOCK_HOST_LISTEN_PORT);
	h.len = 100; /* the chain carries only the header */
	expect_rst(5, h, HDR, "len beyond the chain");
	h = client_hdr(6, OP_REQUEST, VSOCK_HOST_LISTEN_PORT);
	h.len = 8;
	expect_rst(6, h, HDR + 8, "payload on a REQUEST");
	/* Spoofed source: no answer; the next packet's RST proves it. */
	h = client_hdr(7, OP_REQUEST, VSOCK_HOST_LISTEN_PORT);
	h.src_cid = cid + 1;
	send_raw(&h, 0, HDR);
	h = client_hdr(8, OP_CREDIT_REQUEST, VSOCK_HOST_LISTEN_PORT);
	expect_rst(8, h, HDR, "credit request for no connection");
	claim(seen_op[7] == 0, "spoofed source CID ignored");

	/* Credit overrun: the host does not read, the guest ignores credit. */
	c = client_connect(9);
	if (c) {
		static uint8_t chunk[TXPAY];
		bool reset = false;

		for (unsigned int i = 0; i < 256 && !reset; i++) {
			h = make_hdr(c, OP_RW, TXPAY);
			send_raw(&h, chunk, HDR + TXPAY);
			kick(TXQ);
			serve_once();
			reset = seen_op[9] == OP_RST;
		}
		claim(reset || wait_for(9, OP_RST), "credit overrun");
	} else {
		claim(false, "credit overrun (no connection)");
	}
	/* fwd_cnt past what the device sent. */
	c = client_connect(10);
	if (c) {
		h = make_hdr(c, OP_CREDIT_UPDATE, 0);
		h.fwd_cnt = 1000;
		expect_rst(10, h, HDR, "fwd_cnt beyond what was sent");
	} else {
		claim(false, "fwd_cnt lie (no connection)");
	}
	/* A second REQUEST on a live connection. */
	c = client_connect(11);
	if (c) {
		h = make_hdr(c, OP_REQUEST, 0);
		expect_rst(11, h, HDR, "second REQUEST");
	} else {
		claim(false, "second REQUEST (no connection)");
	}
	claim(!(ops->status() & 0x40), "device never needed a reset");
}

void vsock_guest_run(const struct vsock_guest_ops *o, uint64_t guest_cid,
		     uint64_t timeout_ms, uint64_t source_kb, bool hostile,
		     struct vsock_guest_stats *st)
{
	uint64_t deadline;

	ops = o;
	cid = guest_cid;
	stats = st;
	source_bytes = source_kb * 1024;
	for (uint16_t i = 0; i < QSIZE; i++) {
		vq_add(RXQ, i, (uint64_t)(uintptr_t)rxbuf[i], RXBUF, true);
		tx_free[nr_tx_free++] = i;
	}
	for (uint16_t i = 0; i < 4; i++) {
		evbuf[i] = 0xffffffff;
		vq_add(EVQ, i, (uint64_t)(uintptr_t)&evbuf[i], 4, true);
	}
	kick(RXQ);
	kick(EVQ);
	if (hostile)
		hostile_phase();
	deadline = ops->now_us() + timeout_ms * 1000;
	while (!st->quit) {
		serve_once();
		if (ops->now_us() > deadline) {
			st->timed_out = true;
			break;
		}
	}
	/* Let the last answers (the quit RST) reach the device. */
	for (unsigned int i = 0; i < 1000; i++)
		serve_once();
	st->device_ok = !(ops->status() & 0x40);
}
