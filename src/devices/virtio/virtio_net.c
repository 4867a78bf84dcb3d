// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <linux/if_tun.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "core/config.h"
#include "devices/virtio/rate_limiter.h"
#include "devices/virtio/virtio_net.h"

#define NET_QUEUE_SIZE 256
#define RX_QUEUE 0
#define TX_QUEUE 1
#define VNET_HDR_LEN 12 /* struct virtio_net_hdr_v1 */

#define GUEST_OFFLOADS                         \
	(VIRTIO_BIT(VIRTIO_NET_F_GUEST_CSUM) | \
	 VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4) | \
	 VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6))
#define HOST_OFFLOADS                                                         \
	(VIRTIO_BIT(VIRTIO_NET_F_CSUM) | VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO4) | \
	 VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO6))

struct virtio_net {
	struct virtio_device vdev;
	struct virtio_net_config config;
	struct event_watch tap_watch;
	struct virtq_chain *rx_chain, *tx_chain;
	int tap_fd;
	struct event_loop *loop;
	/* bw=: each way its own bucket; a deferred frame stops its queue. */
	struct rate_limiter rx_limit, tx_limit;
	bool tx_deferred; /* tx_chain holds a frame waiting for tokens */
	bool is_tap; /* else a datagram socket (tests, fuzzing): no offloads */
	char name[24];
	char tap[IFNAMSIZ];
};

static struct virtio_net *to_net(struct virtio_device *vdev)
{
	return (struct virtio_net *)vdev;
}

/* Move packets from tap into guest receive buffers (locked). */
static void try_receive(struct virtio_net *net)
{
	struct virtio_device *vdev = &net->vdev;
	struct virtq *vq = &vdev->vqs[RX_QUEUE];
	unsigned int budget = vq->size;
	bool pushed = false;

	if (!virtio_device_live(vdev) || !vq->enabled || vq->broken)
		return;
	/*
	 * A snapshot is being taken: no frame moves into guest memory. The
	 * tap keeps them; the kick thawing sends reads them (the tap's poll
	 * fires on arrival only, so without it they would wait for the next).
	 */
	if (vdev->frozen) {
		vdev->frozen_kicks |= 1ull << RX_QUEUE;
		return;
	}
	virtq_disable_notify(vq);
	while (budget) {
		struct virtq_chain *chain = net->rx_chain;
		ssize_t n;
		int r = virtq_pop(vq, chain);

		if (r < 0) {
			virtio_queue_failed(vdev, RX_QUEUE);
			break;
		}
		if (r == 0) {
			/* Out of buffers: ask for a kick when more arrive. */
			if (virtq_enable_notify(vq)) {
				virtq_disable_notify(vq);
				continue;
			}
			break;
		}
		if (chain->nr_in == 0) {
			/*
			 * Useless, but it costs a turn: a guest refilling
			 * such buffers from another vCPU must not keep the
			 * event loop here.
			 */
			virtq_push(vq, chain->head, 0);
			pushed = true;
			budget--;
			continue;
		}
		/* Over the limit: the timer calls us again (rx_resume). */
		if (!rate_limiter_admit(&net->rx_limit, 0)) {
			virtq_unpop(vq);
			break;
		}
		n = readv(net->tap_fd, virtq_chain_in(chain), chain->nr_in);
		if (n < 0) {
			/* No packet after all (EAGAIN): keep the buffer. */
			virtq_unpop(vq);
			virtq_enable_notify(vq);
			break;
		}
		rate_limiter_charge(&net->rx_limit, (uint64_t)n);
		virtq_push(vq, chain->head, (uint32_t)n);
		pushed = true;
		budget--;
	}
	if (!budget)
		virtio_device_kick(vdev, RX_QUEUE); /* more later, fairly */
	if (pushed)
		virtio_queue_notify_driver(vdev, RX_QUEUE);
}

static void tap_readable(struct event_watch *w)
{
	struct virtio_net *net =
		(struct virtio_net *)((char *)w -
				      offsetof(struct virtio_net, tap_watch));

	pthread_mutex_lock(&net->vdev.lock);
	try_receive(net);
	pthread_mutex_unlock(&net->vdev.lock);
}

static struct virtq_chain *get_tx_chain(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_net *net = to_net(vdev);

	return net->tx_deferred ? NULL : net->tx_chain;
}

static void send_frame(struct virtio_net *net, struct virtq_chain *chain)
{
	/* Header and frame go to tap as one datagram; tap drops bad ones. */
	if (chain->out_len >= VNET_HDR_LEN &&
	    writev(net->tap_fd, chain->iov, chain->nr_out) < 0 &&
	    errno != EAGAIN)
		pr_debug_ratelimited("%s: tap write: %s", net->name,
				     strerror(errno));
}

static int handle_tx(struct virtio_device *vdev, uint16_t q,
		     struct virtq_chain *chain)
{
	struct virtio_net *net = to_net(vdev);

	if (!rate_limiter_admit(&net->tx_limit, chain->out_len)) {
		net->tx_deferred = true; /* tx_resume sends it */
		return -EINPROGRESS;
	}
	send_frame(net, chain);
	return 0;
}

/* The limits' timers: send the deferred frame, then serve the queues. */
static void tx_resume(struct rate_limiter *rl)
{
	struct virtio_net *net =
		(struct virtio_net *)((char *)rl -
				      offsetof(struct virtio_net, tx_limit));
	struct virtio_device *vdev = &net->vdev;

	pthread_mutex_lock(&vdev->lock);
	if (net->tx_deferred &&
	    rate_limiter_admit(&net->tx_limit, net->tx_chain->out_len)) {
		net->tx_deferred = false;
		if (virtio_device_live(vdev)) {
			send_frame(net, net->tx_chain);
			virtq_push(&vdev->vqs[TX_QUEUE], net->tx_chain->head,
				   0);
			virtio_queue_notify_driver(vdev, TX_QUEUE);
		}
		virtio_device_kick(vdev, TX_QUEUE);
	}
	pthread_mutex_unlock(&vdev->lock);
}

static void rx_resume(struct rate_limiter *rl)
{
	struct virtio_net *net =
		(struct virtio_net *)((char *)rl -
				      offsetof(struct virtio_net, rx_limit));

	pthread_mutex_lock(&net->vdev.lock);
	try_receive(net);
	pthread_mutex_unlock(&net->vdev.lock);
}

int virtio_net_set_limit(struct virtio_device *vdev, uint64_t bytes_per_s)
{
	struct virtio_net *net = to_net(vdev);
	int r;

	rate_limiter_destroy(&net->rx_limit);
	rate_limiter_destroy(&net->tx_limit);
	r = rate_limiter_init(&net->rx_limit, 0, bytes_per_s, net->loop,
			      rx_resume);
	if (r == 0)
		r = rate_limiter_init(&net->tx_limit, 0, bytes_per_s, net->loop,
				      tx_resume);
	if (r < 0)
		return hvm_set_error(r, "%s: %s", net->name,
				     hvm_error_message());
	if (bytes_per_s)
		pr_info("%s: at most %llu bytes/s each way", net->name,
			(unsigned long long)bytes_per_s);
	return 0;
}

static const struct virtio_queue_handler tx_queue = {
	.get_chain = get_tx_chain,
	.handle = handle_tx,
};

static void net_queue_notify(struct virtio_device *vdev, uint16_t q)
{
	if (q == TX_QUEUE)
		virtio_queue_drain(vdev, q, &tx_queue);
	else
		try_receive(to_net(vdev));
}

/* Tell tap which offloads the guest accepted for packets it receives. */
static int net_activate(struct virtio_device *vdev)
{
	struct virtio_net *net = to_net(vdev);
	uint64_t f = vdev->driver_features;
	unsigned int offload = 0;

	if (!net->is_tap)
		return 0; /* nothing offered, nothing to tell */
	if (f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_CSUM)) {
		offload |= TUN_F_CSUM;
		if (f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4))
			offload |= TUN_F_TSO4;
		if (f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6))
			offload |= TUN_F_TSO6;
	}
	if (ioctl(net->tap_fd, TUNSETOFFLOAD, offload) < 0)
		return hvm_set_errno_error("%s: TUNSETOFFLOAD 0x%x", net->name,
					   offload);
	return 0;
}

static int net_validate_features(struct virtio_device *vdev, uint64_t f)
{
	/* TSO without checksum offload is meaningless (virtio 1.x 5.1.3.1). */
	if ((f & (VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4) |
		  VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6))) &&
	    !(f & VIRTIO_BIT(VIRTIO_NET_F_GUEST_CSUM)))
		return hvm_set_error(-EINVAL, "GUEST_TSO without GUEST_CSUM");
	if ((f & (VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO4) |
		  VIRTIO_BIT(VIRTIO_NET_F_HOST_TSO6))) &&
	    !(f & VIRTIO_BIT(VIRTIO_NET_F_CSUM)))
		return hvm_set_error(-EINVAL, "HOST_TSO without CSUM");
	return 0;
}

static void net_destroy(struct virtio_device *vdev)
{
	struct virtio_net *net = to_net(vdev);

	free(net->rx_chain);
	free(net->tx_chain);
	if (net->tap_fd >= 0)
		close(net->tap_fd);
	rate_limiter_destroy(&net->rx_limit);
	rate_limiter_destroy(&net->tx_limit);
	virtio_device_destroy(vdev);
	free(net);
}

/* A frame deferred by the limit belonged to the rings just reset. */
static void net_reset(struct virtio_device *vdev)
{
	to_net(vdev)->tx_deferred = false;
}

static const struct virtio_device_ops net_ops = {
	.activate = net_activate,
	.reset = net_reset,
	.queue_notify = net_queue_notify,
	.validate_features = net_validate_features,
	.destroy = net_destroy,
};

int virtio_net_attach_tap(const char *tap)
{
	struct ifreq ifr = { 0 };
	int fd;

	/*
	 * TUNSETIFF creates a missing interface (given CAP_NET_ADMIN): a typo
	 * would boot a VM on a new, unconnected tap. It must exist already.
	 */
	if (!if_nametoindex(tap))
		return hvm_set_error(
			-ENODEV,
			"--net tap=%s: there is no network interface %s (create it first: ip tuntap add %s mode tap user $USER)",
			tap, tap, tap);
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return hvm_set_errno_error(
			"--net tap=%s: cannot open /dev/net/tun", tap);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int err = errno, r;

		/* A tap without IFF_MULTI_QUEUE has one reader: two VMs (a
		 * clone and its origin, say) cannot share it. */
		if (err == EBUSY)
			r = hvm_set_error(
				-EBUSY,
				"--net tap=%s: in use by another process (each VM, and each clone of a snapshot, needs a tap of its own)",
				tap);
		else
			r = hvm_set_error(
				-err,
				"--net tap=%s: cannot attach to the tap interface: %s (create it first: ip tuntap add %s mode tap user $USER)",
				tap, strerror(err), tap);
		close(fd);
		return r;
	}
	return fd;
}

/*
 * Taps attached before a jail left the host's network namespace
 * (vmm/jail.c), by name, each taken once by the device created for it.
 * The jailed process is single-threaded when it fills the table.
 */
static struct {
	char name[IFNAMSIZ];
	int fd;
} adopted[HVM_MAX_NETS];

int virtio_net_adopt_tap(const char *tap, int fd)
{
	for (unsigned int i = 0; i < HVM_MAX_NETS; i++) {
		if (adopted[i].name[0])
			continue;
		snprintf(adopted[i].name, sizeof(adopted[i].name), "%s", tap);
		adopted[i].fd = fd;
		return 0;
	}
	close(fd);
	return hvm_set_error(-ENOSPC, "--net tap=%s: more than %d taps", tap,
			     HVM_MAX_NETS);
}

static int take_adopted(const char *tap)
{
	for (unsigned int i = 0; i < HVM_MAX_NETS; i++) {
		if (adopted[i].name[0] && !strcmp(adopted[i].name, tap)) {
			adopted[i].name[0] = '\0';
			return adopted[i].fd;
		}
	}
	return -1;
}

static int open_tap(struct virtio_net *net, const char *tap, uint64_t *features)
{
	int hdr = VNET_HDR_LEN;

	net->tap_fd = take_adopted(tap);
	if (net->tap_fd < 0)
		net->tap_fd = virtio_net_attach_tap(tap);
	if (net->tap_fd < 0)
		return net->tap_fd;
	if (ioctl(net->tap_fd, TUNSETVNETHDRSZ, &hdr) < 0)
		return hvm_set_errno_error("--net tap=%s: TUNSETVNETHDRSZ",
					   tap);
	*features |= HOST_OFFLOADS;
	/* Offer receive offloads only when this tap can produce them. */
	if (ioctl(net->tap_fd, TUNSETOFFLOAD,
		  TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) == 0)
		*features |= GUEST_OFFLOADS;
	ioctl(net->tap_fd, TUNSETOFFLOAD, 0);
	return 0;
}

/* Common part: TAP_FD (a tap, or a datagram socket) becomes the device's. */
static struct virtio_device *net_create(const struct virtio_host *host,
					const char *tap, int tap_fd,
					const uint8_t mac[6],
					unsigned int index)
{
	struct virtio_net *net = calloc(1, sizeof(*net));
	uint64_t features = VIRTIO_BIT(VIRTIO_NET_F_MAC) |
			    VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC) |
			    VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX);

	if (!net) {
		if (tap_fd >= 0)
			close(tap_fd);
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	net->tap_fd = tap_fd;
	net->loop = host->loop;
	net->rx_limit.timer_fd = -1;
	net->tx_limit.timer_fd = -1;
	snprintf(net->name, sizeof(net->name), "virtio-net%u", index);
	snprintf(net->tap, sizeof(net->tap), "%s", tap ? tap : "(fd)");
	memcpy(net->config.mac, mac, 6);
	net->rx_chain = virtq_chain_alloc(NET_QUEUE_SIZE);
	net->tx_chain = virtq_chain_alloc(NET_QUEUE_SIZE);
	if (!net->rx_chain || !net->tx_chain) {
		hvm_set_error(-ENOMEM, "out of memory");
		goto fail;
	}
	if (tap && open_tap(net, tap, &features) < 0)
		goto fail;
	net->is_tap = tap != NULL;
	if (virtio_device_init(&net->vdev, net->name, &net_ops, host->mem,
			       VIRTIO_ID_NET, features, 2, NET_QUEUE_SIZE,
			       &net->config, sizeof(net->config)) < 0)
		goto fail;
	if (event_loop_watch(host->loop, &net->tap_watch, net->tap_fd, false,
			     tap_readable) < 0) {
		net_destroy(&net->vdev);
		return NULL;
	}
	return &net->vdev;
fail:
	free(net->rx_chain);
	free(net->tx_chain);
	if (net->tap_fd >= 0)
		close(net->tap_fd);
	free(net);
	return NULL;
}

/* ---- snapshots ---- */

void virtio_net_save(struct virtio_device *vdev, struct virtio_net_state *s)
{
	struct virtio_net *net = to_net(vdev);

	memset(s, 0, sizeof(*s));
	memcpy(s->mac, net->config.mac, sizeof(s->mac));
	snprintf(s->tap, sizeof(s->tap), "%s", net->tap);
}

static void format_mac(char out[18], const uint8_t mac[6])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
}

int virtio_net_load(struct virtio_device *vdev,
		    const struct virtio_net_state *s)
{
	struct virtio_net *net = to_net(vdev);
	char have[18], saved[18];
	size_t n = strnlen(s->tap, sizeof(s->tap));

	if (s->reserved[0] || s->reserved[1])
		return hvm_set_error(
			-EINVAL, "%s: reserved bytes 0x%02x%02x; expected 0",
			net->name, s->reserved[0], s->reserved[1]);
	if (n == 0 || n == sizeof(s->tap))
		return hvm_set_error(
			-EINVAL,
			"%s: the snapshot's tap name is %s; expected 1-15 characters and a NUL",
			net->name, n ? "not terminated" : "empty");
	for (size_t i = 0; i < n; i++)
		if (s->tap[i] <= ' ' || s->tap[i] > '~' || s->tap[i] == '/')
			return hvm_set_error(
				-EINVAL,
				"%s: the snapshot's tap name has byte 0x%02x at %zu; expected a printable interface name",
				net->name, (unsigned char)s->tap[i], i);
	if (memcmp(s->mac, net->config.mac, sizeof(s->mac))) {
		format_mac(have, net->config.mac);
		format_mac(saved, s->mac);
		return hvm_set_error(
			-EINVAL,
			"%s: the MAC is %s, but the snapshot's was %s (on tap %s): the restored guest keeps the MAC it read at boot; restore with --net tap=NAME,mac=%s",
			net->name, have, saved, s->tap, saved);
	}
	if (strcmp(s->tap, net->tap))
		pr_info("%s: restored onto tap %s (the snapshot's was %s)",
			net->name, net->tap, s->tap);
	/* What activate told the old tap, this one must know too. */
	return virtio_device_live(vdev) ? net_activate(vdev) : 0;
}

unsigned int virtio_net_in_flight(struct virtio_device *vdev)
{
	return to_net(vdev)->tx_deferred ? 1 : 0;
}

struct virtio_device *virtio_net_create(const struct virtio_host *host,
					const char *tap, const uint8_t mac[6],
					unsigned int index)
{
	return net_create(host, tap, -1, mac, index);
}

struct virtio_device *virtio_net_create_fd(const struct virtio_host *host,
					   int fd, const uint8_t mac[6],
					   unsigned int index)
{
	return net_create(host, NULL, fd, mac, index);
}
