// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-vsock's connection table and the state of each connection (see
 * vsock_device.h): what both ends change, the guest end (virtio_vsock.c)
 * for packets and the host end (vsock_host.c) for sockets, so that
 * neither calls into the other's half.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/virtio/vsock_device.h"

static unsigned int hash_of(uint32_t host_port, uint32_t guest_port)
{
	uint32_t h = host_port * 0x9e3779b1u ^ guest_port * 0x85ebca6bu;

	return (h ^ (h >> 16)) % HASH_BUCKETS;
}

struct vsock_conn *vsock_conn_lookup(struct virtio_vsock *vs,
				     uint32_t host_port, uint32_t guest_port)
{
	struct vsock_conn *c = vs->hash[hash_of(host_port, guest_port)];

	for (; c; c = c->hash_next)
		if (c->host_port == host_port && c->guest_port == guest_port)
			return c;
	return NULL;
}

void vsock_conn_hash(struct virtio_vsock *vs, struct vsock_conn *c)
{
	unsigned int b = hash_of(c->host_port, c->guest_port);

	c->hash_next = vs->hash[b];
	vs->hash[b] = c;
	c->hashed = true;
}

static void conn_unhash(struct virtio_vsock *vs, struct vsock_conn *c)
{
	struct vsock_conn **p = &vs->hash[hash_of(c->host_port, c->guest_port)];

	if (!c->hashed)
		return;
	while (*p && *p != c)
		p = &(*p)->hash_next;
	if (*p)
		*p = c->hash_next;
	c->hashed = false;
}

struct vsock_conn *vsock_conn_new(struct virtio_vsock *vs, int fd,
				  enum conn_state state)
{
	struct vsock_conn *c;

	if (vs->nr_conns >= VSOCK_MAX_CONNS ||
	    !budget_charge(vs->budget, sizeof(*c)))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		budget_release(vs->budget, sizeof(*c));
		return NULL;
	}
	c->fd = fd;
	c->state = state;
	link_init(&c->ready);
	link_add_tail(&vs->all, &c->all);
	vs->nr_conns++;
	return c;
}

void vsock_ready_add(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (c->on_ready || c->state == CONN_DEAD)
		return;
	link_add_tail(&vs->ready, &c->ready);
	c->on_ready = true;
}

void vsock_ready_del(struct vsock_conn *c)
{
	if (!c->on_ready)
		return;
	link_del(&c->ready);
	c->on_ready = false;
}

static void close_host(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (c->fd >= 0)
		close(c->fd); /* also leaves the epoll set */
	c->fd = -1;
	c->registered = false;
	vsock_conn_free_buf(vs, c);
	c->buf_len = 0;
}

/* Forget the connection; it is freed at the end of this turn. */
void vsock_conn_release(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (c->state == CONN_DEAD)
		return;
	close_host(vs, c);
	conn_unhash(vs, c);
	vsock_ready_del(c);
	link_del(&c->all);
	link_add_tail(&vs->dead, &c->all);
	c->state = CONN_DEAD;
	vs->nr_conns--;
}

/*
 * End the connection with an RST to the guest (a protocol violation, the
 * host side gone): the host end closes now, the entry lives until the
 * RST is on the rx queue.
 */
void vsock_conn_reset(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (c->state == CONN_DEAD)
		return;
	if (c->state == CONN_HANDSHAKE) {
		vsock_conn_release(vs, c); /* the guest never heard of it */
		return;
	}
	close_host(vs, c);
	c->state = CONN_RESETTING;
	c->send = SEND_RST;
	c->deadline_ns = 0;
	vsock_ready_add(vs, c);
}

void vsock_reap(struct virtio_vsock *vs)
{
	while (!link_empty(&vs->dead)) {
		struct vsock_conn *c =
			container_of(vs->dead.next, struct vsock_conn, all);

		link_del(&c->all);
		free(c);
		budget_release(vs->budget, sizeof(*c));
	}
}

bool vsock_conn_alloc_buf(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (c->buf)
		return true;
	if (!budget_charge(vs->budget, VSOCK_BUF_ALLOC))
		return false;
	c->buf = malloc(VSOCK_BUF_ALLOC);
	c->buf_start = 0;
	if (!c->buf)
		budget_release(vs->budget, VSOCK_BUF_ALLOC);
	return c->buf != NULL;
}

void vsock_conn_free_buf(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (!c->buf)
		return;
	free(c->buf);
	c->buf = NULL;
	budget_release(vs->budget, VSOCK_BUF_ALLOC);
}

uint32_t vsock_conn_credit(const struct vsock_conn *c)
{
	return vsock_peer_credit(c->peer_buf_alloc, c->tx_cnt, c->peer_fwd_cnt);
}

bool vsock_can_send_data(const struct vsock_conn *c)
{
	return c->want_read && c->fd >= 0 && c->state == CONN_ESTABLISHED &&
	       !c->host_eof && !(c->guest_shut & VIRTIO_VSOCK_SHUTDOWN_RCV) &&
	       vsock_conn_credit(c) > 0;
}

/* After fwd_cnt moved: tell the guest once it has half its credit back. */
void vsock_forwarded(struct virtio_vsock *vs, struct vsock_conn *c, uint32_t n)
{
	c->fwd_cnt += n;
	if (c->fwd_cnt - c->fwd_cnt_told >= VSOCK_BUF_ALLOC / 2) {
		c->send |= SEND_CREDIT;
		vsock_ready_add(vs, c);
	}
}

/* The guest's SHUTDOWN(SEND) or CLOSING reaches the host once all is out. */
void vsock_after_flush(struct virtio_vsock *vs, struct vsock_conn *c)
{
	if (c->buf_len)
		return;
	vsock_conn_free_buf(vs, c); /* idle connections keep no buffer */
	c->buf_start = 0;
	if (c->state == CONN_CLOSING) {
		vsock_conn_reset(
			vs, c); /* Linux waits for this RST to finish close */
		return;
	}
	if ((c->guest_shut & VIRTIO_VSOCK_SHUTDOWN_SEND) && c->fd >= 0)
		shutdown(c->fd, SHUT_WR);
}
