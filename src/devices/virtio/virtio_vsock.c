// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-vsock, the guest end (see virtio_vsock.h for the promises; the
 * host end, sockets and their epoll set, is vsock_host.c). How it is put
 * together:
 *
 * - All of it runs on the VM's event loop thread under the device lock:
 *   queue kicks come here, host socket readiness comes through the epoll
 *   set vsock_host.c keeps, which the loop watches.
 * - Guest to host: tx packets are judged by vsock_check_tx(), then RW
 *   payload goes straight to the host fd (sendmsg, MSG_DONTWAIT); what the
 *   host does not take waits in the connection's ring (at most the credit
 *   granted, VSOCK_BUF_ALLOC) and leaves on EPOLLOUT.
 * - Host to guest: connections with something to say (a control packet, or
 *   host data and guest credit) wait in a FIFO "ready" list; the rx pump
 *   takes one packet per connection per turn, so one busy connection cannot
 *   starve the others, and stops when the guest has no rx buffers (its next
 *   rx kick resumes). Host data is read with readv straight into the guest
 *   buffer, never more than the guest's credit. Connection-less RSTs (the
 *   answers to packets for no connection) wait in a small ring; beyond it
 *   they are dropped (the guest's connect times out instead).
 * - A connection is freed only at the end of an entry point (epoll turn,
 *   queue kick): earlier code in the same turn may still hold it.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/iov.h"
#include "devices/virtio/vsock_device.h"
#include "devices/virtio/vsock_host.h"

/* epoll events handled per wake-up before the device re-kicks itself. */
#define EPOLL_BUDGET 512

static void queue_rst(struct virtio_vsock *vs, const struct vsock_hdr *h)
{
	if (vs->rst_count == PENDING_RSTS)
		return; /* the guest's connect times out instead */
	vsock_hdr_reset_reply(
		h, &vs->rsts[(vs->rst_head + vs->rst_count++) % PENDING_RSTS]);
}

/* ---- host to guest: the rx pump ---- */

enum emit_result { EMIT_MORE, EMIT_DONE, EMIT_NO_BUFFER };

/*
 * The next usable rx chain, or NULL when the guest has none (then the
 * queue asks for a kick when it adds some). Chains too small for a header
 * are handed back empty. Locked.
 */
static struct virtq_chain *rx_chain(struct virtio_vsock *vs, bool *pushed)
{
	struct virtq *vq = &vs->vdev.vqs[RX_QUEUE];

	for (unsigned int tries = 0; tries <= vq->size; tries++) {
		int r = virtq_pop(vq, vs->rx_chain);

		if (r < 0) {
			virtio_queue_failed(&vs->vdev, RX_QUEUE);
			return NULL;
		}
		if (r == 0) {
			if (virtq_enable_notify(vq)) {
				virtq_disable_notify(vq);
				continue;
			}
			return NULL;
		}
		if (vs->rx_chain->in_len >= VSOCK_HDR_LEN)
			return vs->rx_chain;
		virtq_push(vq, vs->rx_chain->head, 0);
		*pushed = true;
	}
	return NULL;
}

static void fill_hdr(struct virtio_vsock *vs, struct vsock_conn *c,
		     struct vsock_hdr *h, uint16_t op, uint32_t len)
{
	*h = (struct vsock_hdr){
		.src_cid = VSOCK_HOST_CID,
		.dst_cid = vs->guest_cid,
		.src_port = c->host_port,
		.dst_port = c->guest_port,
		.len = len,
		.type = VIRTIO_VSOCK_TYPE_STREAM,
		.op = op,
		.buf_alloc = VSOCK_BUF_ALLOC,
		.fwd_cnt = c->fwd_cnt,
	};
	c->fwd_cnt_told = c->fwd_cnt; /* every header carries our credit */
	c->send &= (uint8_t)~SEND_CREDIT;
}

static void push_packet(struct virtio_vsock *vs, struct virtq_chain *chain,
			const struct vsock_hdr *h)
{
	uint8_t raw[VSOCK_HDR_LEN];

	vsock_hdr_encode(h, raw);
	buf_to_iov(virtq_chain_in(chain), chain->nr_in, raw, sizeof(raw));
	virtq_push(&vs->vdev.vqs[RX_QUEUE], chain->head,
		   VSOCK_HDR_LEN + h->len);
}

/* The iovecs of CHAIN's writable part after the header, at most MAX bytes. */
static unsigned int payload_iov(struct virtq_chain *chain, struct iovec *out,
				size_t max)
{
	struct iovec *in = virtq_chain_in(chain);
	unsigned int nr = chain->nr_in, n = 0;
	size_t skip = VSOCK_HDR_LEN;

	for (unsigned int i = 0; i < nr && max; i++) {
		size_t len = in[i].iov_len;
		char *base = in[i].iov_base;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		base += skip;
		len -= skip;
		skip = 0;
		if (len > max)
			len = max;
		out[n++] = (struct iovec){ base, len };
		max -= len;
	}
	return n;
}

static bool conn_has_work(const struct vsock_conn *c)
{
	return c->send || vsock_can_send_data(c);
}

/* Host data (or EOF) into one rx chain. */
static enum emit_result emit_data(struct virtio_vsock *vs, struct vsock_conn *c,
				  bool *pushed)
{
	struct virtq_chain *chain = rx_chain(vs, pushed);
	struct iovec iov[VSOCK_QUEUE_SIZE];
	struct vsock_hdr h;
	size_t max = vsock_conn_credit(c);
	unsigned int nr;
	ssize_t n;

	if (!chain)
		return EMIT_NO_BUFFER;
	if (max > VSOCK_MAX_PKT_PAYLOAD)
		max = VSOCK_MAX_PKT_PAYLOAD;
	nr = payload_iov(chain, iov, max);
	n = nr ? readv(c->fd, iov, (int)nr) : -1;
	if (nr == 0) {
		/* A header-sized buffer: nothing to read into. */
		fill_hdr(vs, c, &h, VIRTIO_VSOCK_OP_CREDIT_UPDATE, 0);
		push_packet(vs, chain, &h);
		*pushed = true;
		return EMIT_MORE;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		virtq_unpop(&vs->vdev.vqs[RX_QUEUE]);
		c->want_read = false; /* epoll says when there is more */
		vsock_update_events(vs, c);
		return EMIT_DONE;
	}
	if (n <= 0) {
		/* EOF, or the host end failed: no more data from there. */
		virtq_unpop(&vs->vdev.vqs[RX_QUEUE]);
		if (n < 0) {
			vsock_conn_reset(vs, c);
			return EMIT_MORE;
		}
		c->host_eof = true;
		c->want_read = false;
		c->send |= SEND_SHUTDOWN;
		c->shutdown_to_send |= VIRTIO_VSOCK_SHUTDOWN_SEND;
		if (c->host_hup)
			c->shutdown_to_send |= VIRTIO_VSOCK_SHUTDOWN_RCV;
		vsock_update_events(vs, c);
		return EMIT_MORE;
	}
	fill_hdr(vs, c, &h, VIRTIO_VSOCK_OP_RW, (uint32_t)n);
	push_packet(vs, chain, &h);
	*pushed = true;
	c->tx_cnt += (uint32_t)n;
	return EMIT_MORE;
}

/* One packet for C: the first control packet it owes, else data. */
static enum emit_result conn_emit(struct virtio_vsock *vs, struct vsock_conn *c,
				  bool *pushed)
{
	static const struct {
		uint8_t bit;
		uint16_t op;
	} order[] = {
		{ SEND_RST, VIRTIO_VSOCK_OP_RST },
		{ SEND_REQUEST, VIRTIO_VSOCK_OP_REQUEST },
		{ SEND_RESPONSE, VIRTIO_VSOCK_OP_RESPONSE },
		{ SEND_CREDIT, VIRTIO_VSOCK_OP_CREDIT_UPDATE },
		{ SEND_SHUTDOWN, VIRTIO_VSOCK_OP_SHUTDOWN },
	};
	struct virtq_chain *chain;
	struct vsock_hdr h;

	for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(c->send & order[i].bit))
			continue;
		chain = rx_chain(vs, pushed);
		if (!chain)
			return EMIT_NO_BUFFER;
		fill_hdr(vs, c, &h, order[i].op, 0);
		if (order[i].op == VIRTIO_VSOCK_OP_SHUTDOWN)
			h.flags = c->shutdown_to_send;
		push_packet(vs, chain, &h);
		*pushed = true;
		c->send &= (uint8_t)~order[i].bit;
		if (order[i].op == VIRTIO_VSOCK_OP_RST) {
			vsock_conn_release(vs, c);
			return EMIT_DONE;
		}
		return EMIT_MORE;
	}
	if (vsock_can_send_data(c))
		return emit_data(vs, c, pushed);
	return EMIT_DONE;
}

/* Send what the guest is owed while it has rx buffers. Locked. */
static void vsock_rx_pump(struct virtio_vsock *vs)
{
	struct virtio_device *vdev = &vs->vdev;
	struct virtq *vq = &vdev->vqs[RX_QUEUE];
	unsigned int budget = 4u * vq->size;
	bool pushed = false;

	if (!virtio_device_live(vdev) || !vq->enabled || vq->broken)
		return;
	virtq_disable_notify(vq);
	while (vs->rst_count && budget) {
		struct virtq_chain *chain = rx_chain(vs, &pushed);

		if (!chain)
			goto out;
		push_packet(vs, chain, &vs->rsts[vs->rst_head]);
		pushed = true;
		vs->rst_head = (vs->rst_head + 1) % PENDING_RSTS;
		vs->rst_count--;
		budget--;
	}
	while (!link_empty(&vs->ready) && budget) {
		struct vsock_conn *c =
			container_of(vs->ready.next, struct vsock_conn, ready);
		enum emit_result r;

		vsock_ready_del(c);
		r = conn_emit(vs, c, &pushed);
		budget--;
		if (r == EMIT_NO_BUFFER) {
			/* First in line again when buffers come. */
			c->ready.next = vs->ready.next;
			c->ready.prev = &vs->ready;
			vs->ready.next->prev = &c->ready;
			vs->ready.next = &c->ready;
			c->on_ready = true;
			break;
		}
		if (c->state != CONN_DEAD && conn_has_work(c))
			vsock_ready_add(vs,
					c); /* to the back: one packet a turn */
	}
	if (!budget && (!link_empty(&vs->ready) || vs->rst_count))
		virtio_device_kick(vdev, RX_QUEUE); /* more later, fairly */
out:
	if (pushed)
		virtio_queue_notify_driver(vdev, RX_QUEUE);
}

static void vsock_event_pump(struct virtio_vsock *vs)
{
	struct virtio_device *vdev = &vs->vdev;
	struct virtq *vq = &vdev->vqs[EVENT_QUEUE];
	bool pushed = false;

	if (!vs->event_pending || !virtio_device_live(vdev) || !vq->enabled ||
	    vq->broken)
		return;
	for (unsigned int tries = 0; vs->event_pending && tries < vq->size;
	     tries++) {
		struct virtq_chain *chain = vs->event_chain;
		int r = virtq_pop(vq, chain);
		uint8_t id[4] = { VIRTIO_VSOCK_EVENT_TRANSPORT_RESET, 0, 0, 0 };

		if (r < 0)
			virtio_queue_failed(vdev, EVENT_QUEUE);
		if (r <= 0)
			break;
		if (chain->in_len >= sizeof(id)) {
			buf_to_iov(virtq_chain_in(chain), chain->nr_in, id,
				   sizeof(id));
			virtq_push(vq, chain->head, sizeof(id));
			vs->event_pending = false;
		} else {
			virtq_push(vq, chain->head, 0);
		}
		pushed = true;
	}
	if (vs->event_pending)
		virtq_enable_notify(vq);
	if (pushed)
		virtio_queue_notify_driver(vdev, EVENT_QUEUE);
}

/*
 * The epoll set of the host end is ready: let it handle its events, then
 * send the guest what they made ready, until the set is quiet or the
 * budget is spent.
 */
static void epoll_ready(struct event_watch *w)
{
	struct virtio_vsock *vs =
		container_of(w, struct virtio_vsock, epoll_watch);
	unsigned int handled = 0;
	int n;

	pthread_mutex_lock(&vs->vdev.lock);
	if (vs->vdev.frozen) {
		/* A snapshot is being taken: nothing moves. The kick that
		 * thawing sends brings the events back (vsock_queue_notify). */
		vs->missed_epoll = true;
		vs->vdev.frozen_kicks |= 1ull << RX_QUEUE;
		pthread_mutex_unlock(&vs->vdev.lock);
		return;
	}
	do {
		n = vsock_host_poll(vs);
		handled += (unsigned int)n;
		vsock_rx_pump(vs);
		vsock_event_pump(vs);
	} while (n > 0 && handled < EPOLL_BUDGET);
	if (n > 0)
		vsock_wake(vs); /* let the rest of the loop run first */
	vsock_reap(vs);
	pthread_mutex_unlock(&vs->vdev.lock);
	vsock_host_run_deferred(vs);
}

/* ---- guest to host ---- */

/* RW payload of a tx chain to the host, the rest into the ring. */
static void guest_data(struct virtio_vsock *vs, struct vsock_conn *c,
		       struct virtq_chain *chain, uint32_t len)
{
	struct iovec iov[VSOCK_QUEUE_SIZE];
	unsigned int nr = chain->nr_out;
	struct iovec *p = iov;
	ssize_t n = 0;

	if (!vsock_rx_fits(VSOCK_BUF_ALLOC, c->rx_cnt, c->fwd_cnt, len) ||
	    (c->guest_shut & VIRTIO_VSOCK_SHUTDOWN_SEND)) {
		virtio_device_log_guest_error(
			&vs->vdev, "port %u->%u: %s, connection reset",
			c->guest_port, c->host_port,
			(c->guest_shut & VIRTIO_VSOCK_SHUTDOWN_SEND)
				? "data after SHUTDOWN(SEND)"
				: "data beyond the credit granted");
		vsock_conn_reset(vs, c);
		return;
	}
	c->rx_cnt += len;
	if (c->fd < 0) {
		vsock_forwarded(vs, c, len); /* nobody to give it to: dropped */
		return;
	}
	memcpy(iov, chain->iov, nr * sizeof(iov[0]));
	iov_drop_front(&p, &nr, VSOCK_HDR_LEN);
	if (!c->buf_len && len) {
		n = vsock_send_iov(c->fd, p, nr);
		if (n < 0) {
			vsock_conn_reset(vs, c);
			return;
		}
		iov_drop_front(&p, &nr, (size_t)n);
		vsock_forwarded(vs, c, (uint32_t)n);
	}
	if ((uint32_t)n < len) {
		uint32_t rest = len - (uint32_t)n;

		/* Over the VM's budget (or out of memory): an RST. */
		if (!vsock_conn_alloc_buf(vs, c)) {
			vsock_conn_reset(vs, c);
			return;
		}
		/* Fits: buf_len + rest = rx_cnt - fwd_cnt <= VSOCK_BUF_ALLOC. */
		for (unsigned int i = 0; i < nr && rest; i++) {
			const uint8_t *src = p[i].iov_base;
			size_t take = p[i].iov_len < rest ? p[i].iov_len : rest;

			for (size_t done = 0; done < take;) {
				uint32_t at = (c->buf_start + c->buf_len) %
					      VSOCK_BUF_ALLOC;
				size_t room = VSOCK_BUF_ALLOC - at;
				size_t k =
					take - done < room ? take - done : room;

				memcpy(c->buf + at, src + done, k);
				done += k;
				c->buf_len += (uint32_t)k;
			}
			rest -= (uint32_t)take;
		}
	}
	vsock_after_flush(vs, c);
	vsock_update_events(vs, c);
}

static void guest_connect(struct virtio_vsock *vs, const struct vsock_hdr *h)
{
	struct vsock_conn *c;
	int fd;

	/* Room first (the table, the budget): no host service sees a
	 * connection the guest then cannot have. */
	c = vsock_conn_new(vs, -1, CONN_ESTABLISHED);
	if (!c) {
		queue_rst(vs, h);
		return;
	}
	fd = vsock_open_host_end(vs, h->dst_port);
	if (fd < 0) {
		vsock_conn_release(vs, c);
		queue_rst(vs, h); /* nobody listens: refused */
		return;
	}
	c->fd = fd;
	c->host_port = h->dst_port;
	c->guest_port = h->src_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	vsock_conn_hash(vs, c);
	c->send = SEND_RESPONSE;
	vsock_ready_add(vs, c);
	vsock_update_events(vs, c);
}

static void guest_shutdown(struct virtio_vsock *vs, struct vsock_conn *c,
			   uint32_t flags)
{
	c->guest_shut |= (uint8_t)flags;
	if (c->fd >= 0 && (flags & VIRTIO_VSOCK_SHUTDOWN_RCV))
		shutdown(c->fd, SHUT_RD);
	if ((c->guest_shut & VSOCK_SHUTDOWN_BOTH) == VSOCK_SHUTDOWN_BOTH &&
	    c->state == CONN_ESTABLISHED)
		c->state = CONN_CLOSING;
	vsock_after_flush(vs, c); /* at once when nothing is buffered */
	if (c->state != CONN_DEAD && c->state != CONN_RESETTING)
		vsock_update_events(vs, c);
}

/* Credit fields of a packet for C; false when they cannot be true. */
static bool take_credit(struct virtio_vsock *vs, struct vsock_conn *c,
			const struct vsock_hdr *h)
{
	bool had = vsock_conn_credit(c) > 0;

	if (!vsock_fwd_cnt_valid(c->peer_fwd_cnt, h->fwd_cnt, c->tx_cnt)) {
		virtio_device_log_guest_error(
			&vs->vdev,
			"port %u->%u: fwd_cnt %u outside [%u, %u], connection reset",
			c->guest_port, c->host_port, h->fwd_cnt,
			c->peer_fwd_cnt, c->tx_cnt);
		return false;
	}
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	if (!had && vsock_conn_credit(c) > 0 && vsock_can_send_data(c))
		vsock_ready_add(vs, c);
	return true;
}

/* One well-formed packet from the guest. */
static void guest_packet(struct virtio_vsock *vs, const struct vsock_hdr *h,
			 struct virtq_chain *chain)
{
	struct vsock_conn *c = vsock_conn_lookup(vs, h->dst_port, h->src_port);

	if (c && (c->state == CONN_DEAD || c->state == CONN_RESETTING)) {
		if (h->op == VIRTIO_VSOCK_OP_RST && c->state == CONN_RESETTING)
			vsock_conn_release(vs, c); /* both sides agree: gone */
		return; /* its RST is on the way */
	}
	if (!c) {
		if (h->op == VIRTIO_VSOCK_OP_REQUEST)
			guest_connect(vs, h);
		else if (h->op != VIRTIO_VSOCK_OP_RST)
			queue_rst(vs, h); /* no such connection */
		return;
	}
	if (h->op == VIRTIO_VSOCK_OP_RST) {
		vsock_conn_release(vs, c); /* the host end sees EOF */
		return;
	}
	if (!take_credit(vs, c, h)) {
		vsock_conn_reset(vs, c);
		return;
	}
	switch (h->op) {
	case VIRTIO_VSOCK_OP_RESPONSE:
		if (c->state != CONN_CONNECTING) {
			vsock_conn_reset(vs, c);
			break;
		}
		vsock_host_connected(vs, c);
		break;
	case VIRTIO_VSOCK_OP_REQUEST:
		vsock_conn_reset(vs,
				 c); /* a second REQUEST on a live connection */
		break;
	case VIRTIO_VSOCK_OP_SHUTDOWN:
		if (c->state == CONN_CONNECTING)
			vsock_conn_reset(vs, c);
		else
			guest_shutdown(vs, c, h->flags);
		break;
	case VIRTIO_VSOCK_OP_RW:
		if (c->state != CONN_ESTABLISHED) {
			vsock_conn_reset(vs, c);
			break;
		}
		if (h->len)
			guest_data(vs, c, chain, h->len);
		break;
	case VIRTIO_VSOCK_OP_CREDIT_REQUEST:
		c->send |= SEND_CREDIT;
		vsock_ready_add(vs, c);
		break;
	case VIRTIO_VSOCK_OP_CREDIT_UPDATE:
		break; /* take_credit() did it */
	}
	if (c->state != CONN_DEAD && c->state != CONN_RESETTING)
		vsock_update_events(vs, c);
}

static struct virtq_chain *get_tx_chain(struct virtio_device *vdev, uint16_t q)
{
	return to_vsock(vdev)->tx_chain;
}

static int handle_tx(struct virtio_device *vdev, uint16_t q,
		     struct virtq_chain *chain)
{
	struct virtio_vsock *vs = to_vsock(vdev);
	uint8_t raw[VSOCK_HDR_LEN] = { 0 };
	struct vsock_hdr h;
	const char *why;
	struct vsock_conn *c;

	iov_to_buf(chain->iov, chain->nr_out, 0, raw, sizeof(raw));
	vsock_hdr_decode(raw, &h);
	switch (vsock_check_tx(&h, chain->out_len, vs->guest_cid, &why)) {
	case VSOCK_ACCEPT:
		guest_packet(vs, &h, chain);
		break;
	case VSOCK_RESET:
		virtio_device_log_guest_error(
			vdev, "packet op %u port %u->%u: %s, reset", h.op,
			h.src_port, h.dst_port, why);
		/* A connection it belonged to breaks with it. */
		c = h.dst_cid == VSOCK_HOST_CID
			    ? vsock_conn_lookup(vs, h.dst_port, h.src_port)
			    : NULL;
		if (c)
			vsock_conn_reset(vs, c);
		else
			queue_rst(vs, &h);
		break;
	case VSOCK_DROP:
		virtio_device_log_guest_error(vdev, "packet dropped: %s", why);
		break;
	}
	return 0; /* tx buffers are only read */
}

static const struct virtio_queue_handler tx_queue = {
	.get_chain = get_tx_chain,
	.handle = handle_tx,
};

/* ---- host side: the UDS, handshakes, epoll ---- */

/* ---- virtio_device_ops ---- */

static void vsock_queue_notify(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_vsock *vs = to_vsock(vdev);

	if (vs->missed_epoll) {
		vs->missed_epoll = false;
		vsock_wake(vs);
	}
	if (q == TX_QUEUE)
		virtio_queue_drain(vdev, q, &tx_queue);
	if (q == EVENT_QUEUE)
		vsock_event_pump(vs);
	vsock_rx_pump(vs);
	vsock_reap(vs);
	if (vs->deferred)
		vsock_wake(vs); /* the epoll turn runs them, unlocked */
}

static int vsock_activate(struct virtio_device *vdev)
{
	struct virtio_vsock *vs = to_vsock(vdev);

	/* Anything waiting (connects from the host) goes out on the kick. */
	vsock_wake(vs);
	return 0;
}

static void drop_all(struct virtio_vsock *vs)
{
	while (!link_empty(&vs->all))
		vsock_conn_release(
			vs, container_of(vs->all.next, struct vsock_conn, all));
	vs->rst_count = 0;
	vsock_reap(vs);
}

/*
 * The guest's side of every connection is gone (device or transport
 * reset): established connections end (their host sockets close), but
 * host clients still waiting for an answer keep waiting, and their
 * REQUEST goes to the driver that comes next. A client that connects
 * while the guest is still booting is thus not lost to the driver's
 * first reset.
 */
static void drop_guest_state(struct virtio_vsock *vs)
{
	for (struct link *l = vs->all.next, *next; l != &vs->all; l = next) {
		struct vsock_conn *c = container_of(l, struct vsock_conn, all);

		next = l->next;
		if (c->state == CONN_HANDSHAKE)
			continue;
		if (c->state == CONN_CONNECTING) {
			c->send = SEND_REQUEST;
			vsock_ready_add(vs, c);
			continue;
		}
		vsock_conn_release(vs, c);
	}
	vs->rst_count = 0;
	vsock_reap(vs);
}

static void vsock_reset(struct virtio_device *vdev)
{
	struct virtio_vsock *vs = to_vsock(vdev);

	drop_guest_state(vs);
	vs->event_pending = false;
}

void virtio_vsock_transport_reset(struct virtio_device *vdev)
{
	struct virtio_vsock *vs = to_vsock(vdev);

	pthread_mutex_lock(&vdev->lock);
	drop_guest_state(vs);
	vs->event_pending = true;
	if (virtio_device_live(vdev))
		virtio_device_kick(vdev, EVENT_QUEUE);
	pthread_mutex_unlock(&vdev->lock);
}

unsigned int virtio_vsock_connections(struct virtio_device *vdev)
{
	struct virtio_vsock *vs = to_vsock(vdev);
	unsigned int n;

	pthread_mutex_lock(&vdev->lock);
	n = vs->nr_conns;
	pthread_mutex_unlock(&vdev->lock);
	return n;
}

int virtio_vsock_connect(struct virtio_device *vdev)
{
	struct virtio_vsock *vs = to_vsock(vdev);
	int sv[2], r = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* The device's end is non-blocking, as an accepted one is. */
	if (fcntl(sv[1], F_SETFL, O_NONBLOCK) < 0)
		r = -errno;
	pthread_mutex_lock(&vdev->lock);
	if (!r && vs->nr_adopt == VSOCK_MAX_ADOPT)
		r = -EAGAIN;
	if (!r)
		vs->adopt[vs->nr_adopt++] = sv[1];
	pthread_mutex_unlock(&vdev->lock);
	if (r) {
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	vsock_wake(vs);
	return sv[0];
}

int virtio_vsock_add_host_listener(struct virtio_device *vdev, uint32_t port,
				   void (*on_connect)(int fd, void *opaque),
				   void *opaque)
{
	struct virtio_vsock *vs = to_vsock(vdev);
	int r = 0;

	pthread_mutex_lock(&vdev->lock);
	for (unsigned int i = 0; i < vs->nr_listeners; i++)
		if (vs->listeners[i].port == port)
			r = hvm_set_error(
				-EEXIST, "vsock host port %u is already served",
				port);
	if (!r && vs->nr_listeners == VSOCK_MAX_HOST_LISTENERS)
		r = hvm_set_error(-ENOSPC, "at most %d vsock host listeners",
				  VSOCK_MAX_HOST_LISTENERS);
	if (!r)
		vs->listeners[vs->nr_listeners++] = (struct host_listener){
			.port = port,
			.on_connect = on_connect,
			.opaque = opaque,
		};
	pthread_mutex_unlock(&vdev->lock);
	return r;
}

int virtio_vsock_remove_host_listener(struct virtio_device *vdev, uint32_t port)
{
	struct virtio_vsock *vs = to_vsock(vdev);
	int r = -ENOENT;

	pthread_mutex_lock(&vdev->lock);
	for (unsigned int i = 0; i < vs->nr_listeners; i++) {
		if (vs->listeners[i].port != port)
			continue;
		vs->listeners[i] = vs->listeners[--vs->nr_listeners];
		r = 0;
		break;
	}
	pthread_mutex_unlock(&vdev->lock);
	return r;
}

static void vsock_destroy(struct virtio_device *vdev)
{
	struct virtio_vsock *vs = to_vsock(vdev);
	struct deferred_connect *d = vs->deferred;

	drop_all(vs);
	while (d) {
		struct deferred_connect *next = d->next;

		close(d->fd);
		free(d);
		d = next;
	}
	vsock_host_fini(vs);
	free(vs->uds_path);
	free(vs->rx_chain);
	free(vs->tx_chain);
	free(vs->event_chain);
	virtio_device_destroy(vdev);
	free(vs);
}

static const struct virtio_device_ops vsock_ops = {
	.activate = vsock_activate,
	.reset = vsock_reset,
	.queue_notify = vsock_queue_notify,
	.destroy = vsock_destroy,
};

struct virtio_device *virtio_vsock_create(const struct virtio_host *host,
					  uint64_t guest_cid,
					  const char *uds_path)
{
	struct virtio_vsock *vs = calloc(1, sizeof(*vs));

	if (!vs) {
		hvm_set_error(-ENOMEM, "virtio-vsock: out of memory");
		return NULL;
	}
	vs->epoll_fd = vs->uds_fd = vs->timer_fd = vs->wake_fd = -1;
	vs->budget = host->guest_objects;
	vs->guest_cid = guest_cid;
	vs->config.guest_cid = htole64(guest_cid);
	vs->next_host_port = EPHEMERAL_PORT_FIRST;
	link_init(&vs->all);
	link_init(&vs->ready);
	link_init(&vs->dead);
	vs->rx_chain = virtq_chain_alloc(VSOCK_QUEUE_SIZE);
	vs->tx_chain = virtq_chain_alloc(VSOCK_QUEUE_SIZE);
	vs->event_chain = virtq_chain_alloc(VSOCK_QUEUE_SIZE);
	if (!vs->rx_chain || !vs->tx_chain || !vs->event_chain ||
	    (uds_path && !(vs->uds_path = strdup(uds_path)))) {
		free(vs->rx_chain);
		free(vs->tx_chain);
		free(vs->event_chain);
		free(vs->uds_path);
		free(vs);
		hvm_set_error(-ENOMEM, "virtio-vsock: out of memory");
		return NULL;
	}
	if (virtio_device_init(&vs->vdev, "virtio-vsock", &vsock_ops, host->mem,
			       VIRTIO_ID_VSOCK,
			       VIRTIO_BIT(VSOCK_F_STREAM) |
				       VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC) |
				       VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX),
			       3, VSOCK_QUEUE_SIZE, &vs->config,
			       sizeof(vs->config)) < 0) {
		free(vs->rx_chain);
		free(vs->tx_chain);
		free(vs->event_chain);
		free(vs->uds_path);
		free(vs);
		hvm_set_error(-ENOMEM, "virtio-vsock: out of memory");
		return NULL;
	}
	if (vsock_host_init(vs, host->loop, uds_path, epoll_ready) < 0)
		goto fail;
	return &vs->vdev;
fail:
	vsock_destroy(&vs->vdev);
	return NULL;
}

/* ---- snapshots ---- */

void virtio_vsock_save(struct virtio_device *vdev, struct virtio_vsock_state *s)
{
	struct virtio_vsock *vs = to_vsock(vdev);

	memset(s, 0, sizeof(*s));
	s->guest_cid = vs->guest_cid;
	s->next_host_port = vs->next_host_port;
}

int virtio_vsock_load(struct virtio_device *vdev,
		      const struct virtio_vsock_state *s)
{
	struct virtio_vsock *vs = to_vsock(vdev);

	if (s->guest_cid < 3 || s->guest_cid > 0xfffffffeull || s->reserved)
		return hvm_set_error(
			-EINVAL,
			"%s: guest CID %llu (reserved 0x%x); expected 3 to 4294967294 (0)",
			vdev->name, (unsigned long long)s->guest_cid,
			s->reserved);
	if (s->next_host_port < EPHEMERAL_PORT_FIRST ||
	    s->next_host_port > EPHEMERAL_PORT_LAST)
		return hvm_set_error(-EINVAL,
				     "%s: next host port %u; expected %u to %u",
				     vdev->name, s->next_host_port,
				     EPHEMERAL_PORT_FIRST, EPHEMERAL_PORT_LAST);
	if (s->guest_cid != vs->guest_cid) {
		vdev->config_generation++;
		pr_info("%s: restored as guest CID %llu (the snapshot's was %llu)",
			vdev->name, (unsigned long long)vs->guest_cid,
			(unsigned long long)s->guest_cid);
	}
	vs->next_host_port = s->next_host_port;
	/* No host end of any guest connection exists here. */
	vs->event_pending = true;
	return 0;
}
