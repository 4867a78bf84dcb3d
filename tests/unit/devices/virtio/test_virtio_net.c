// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-net on a real tap, in a private network namespace: a frame the
 * driver transmits comes out of the tap (seen by a packet socket), and a
 * frame sent into the tap lands in a receive buffer behind a virtio-net
 * header. Driven over virtio-mmio (simplest registers; the transport does
 * not matter to the device). Skips without root (CAP_NET_ADMIN for the
 * namespace and tap) or io_uring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <cmocka.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_net.h"
#include "mmio_access.h"

#define ETHERTYPE 0x88b5 /* IEEE local experimental */
#define RAM_SIZE 0x100000u
#define QSIZE 16
#define VNET_HDR 12
/* queue q: desc at RING(q), avail +0x800, used +0x1000 */
#define RING(q) (0x10000u + 0x4000u * (q))
#define RX_BUF 0x20000u
#define TX_BUF 0x30000u
#define FRAME_LEN 64

static uint8_t *ram;
static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc };

struct fixture {
	struct guest_memory mem;
	struct event_loop *loop;
	struct virtio_host host;
	struct virtio_device *vdev;
	struct virtio_mmio mmio;
	sem_t irq;
	int pkt; /* AF_PACKET socket on the tap */
	int ifindex;
	uint16_t avail[2];
	char tap[IFNAMSIZ];
};

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	struct fixture *f = ctx;

	if (level)
		sem_post(&f->irq);
	return 0;
}

static void setup_queue(struct fixture *f, uint32_t q)
{
	mmio_queue(&f->mmio, q, QSIZE, RING(q));
}

static void post(struct fixture *f, uint16_t q, uint16_t head, uint64_t addr,
		 uint32_t len, uint16_t flags)
{
	struct vring_desc d = { addr, len, flags, 0 };
	uint8_t *avail = ram + RING(q) + 0x800;

	memcpy(ram + RING(q) + 16 * head, &d, sizeof(d));
	memcpy(avail + 4 + 2 * (f->avail[q] % QSIZE), &head, 2);
	f->avail[q]++;
	__atomic_store_n((uint16_t *)(avail + 2), f->avail[q],
			 __ATOMIC_RELEASE);
	mmio_wr(&f->mmio, 0x050, q);
}

static uint16_t used_idx(uint16_t q)
{
	return __atomic_load_n((uint16_t *)(ram + RING(q) + 0x1000 + 2),
			       __ATOMIC_ACQUIRE);
}

static bool wait_used(struct fixture *f, uint16_t q, uint16_t idx)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	while (used_idx(q) < idx)
		if (sem_timedwait(&f->irq, &deadline) < 0)
			return false;
	return true;
}

/* A persistent tap NAME (hintvm attaches only to existing ones), or gone. */
static void tap_persist(const char *name, bool keep)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	assert_int_equal(ioctl(fd, TUNSETIFF, &ifr), 0);
	assert_int_equal(ioctl(fd, TUNSETPERSIST, keep ? 1 : 0), 0);
	close(fd);
}

static void bring_up(const char *name)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	assert_int_equal(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	assert_int_equal(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
	close(s);
}

static int setup(void **state)
{
	/*
	 * A fresh tap per test: io_uring drops its reference to the last
	 * one's fd asynchronously, so the name may still be busy.
	 */
	static int instance;
	struct fixture *f = calloc(1, sizeof(*f));
	char tap[IFNAMSIZ];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };

	memset(ram, 0, RAM_SIZE);
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, ram), 0);
	assert_int_equal(event_loop_create(&f->loop, 32), 0);
	sem_init(&f->irq, 0, 0);
	f->host = (struct virtio_host){ .mem = &f->mem, .loop = f->loop };
	snprintf(tap, sizeof(tap), "hvmtest%d", instance++);
	snprintf(f->tap, sizeof(f->tap), "%s", tap);
	tap_persist(tap, true);
	f->vdev = virtio_net_create(&f->host, tap, mac, 0);
	if (!f->vdev)
		fail_msg("%s", hvm_error_message());
	assert_int_equal(virtio_device_attach_loop(f->vdev, f->loop), 0);
	virtio_mmio_init(&f->mmio, f->vdev, 0,
			 (struct irq_line){ .set_level = set_level, .ctx = f },
			 &f->host);
	assert_int_equal(event_loop_start(f->loop, "test-net"), 0);
	bring_up(tap);
	f->ifindex = (int)if_nametoindex(tap);
	f->pkt = socket(AF_PACKET, SOCK_RAW, htons(ETHERTYPE));
	assert_true(f->pkt >= 0);
	sll.sll_protocol = htons(ETHERTYPE);
	sll.sll_ifindex = f->ifindex;
	assert_int_equal(bind(f->pkt, (struct sockaddr *)&sll, sizeof(sll)), 0);

	/* Driver: VERSION_1 and MAC only (no offloads). */
	mmio_negotiate(&f->mmio, 1u << VIRTIO_NET_F_MAC);
	setup_queue(f, 0);
	setup_queue(f, 1);
	mmio_wr(&f->mmio, 0x070,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK |
			VIRTIO_CONFIG_S_DRIVER_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->pkt);
	event_loop_destroy(f->loop);
	f->vdev->ops->destroy(f->vdev);
	tap_persist(f->tap, false);
	sem_destroy(&f->irq);
	free(f);
	return 0;
}

static void make_frame(uint8_t *p, const uint8_t *dst, const uint8_t *src)
{
	uint16_t type = htons(ETHERTYPE);

	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	memcpy(p + 12, &type, 2);
	for (int i = 14; i < FRAME_LEN; i++)
		p[i] = (uint8_t)i;
}

static void test_mac_in_config(void **state)
{
	struct fixture *f = *state;
	uint8_t cfg[8];

	for (int i = 0; i < 6; i++)
		virtio_mmio_ops.read(&f->mmio, 0x100 + i, &cfg[i], 1);
	assert_memory_equal(cfg, mac, 6);
}

static void test_transmit(void **state)
{
	struct fixture *f = *state;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t got[256];
	ssize_t n;

	memset(ram + TX_BUF, 0, VNET_HDR);
	make_frame(ram + TX_BUF + VNET_HDR, bcast, mac);
	post(f, 1, 0, TX_BUF, VNET_HDR + FRAME_LEN, 0);
	assert_true(wait_used(f, 1, 1));
	n = recv(f->pkt, got, sizeof(got), 0);
	assert_int_equal(n, FRAME_LEN);
	assert_memory_equal(got, ram + TX_BUF + VNET_HDR, FRAME_LEN);
}

static void test_receive(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETHERTYPE),
				  .sll_halen = 6 };
	static const uint8_t peer[6] = { 0x02, 0, 0, 0, 0, 1 };
	uint8_t frame[FRAME_LEN];
	uint32_t len;

	/* Buffers first, as a driver does at start-up. */
	for (uint16_t i = 0; i < 4; i++)
		post(f, 0, i, RX_BUF + 0x1000u * i, 0x800, VRING_DESC_F_WRITE);
	to.sll_ifindex = f->ifindex;
	memcpy(to.sll_addr, mac, 6);
	make_frame(frame, mac, peer);
	assert_int_equal(sendto(f->pkt, frame, sizeof(frame), 0,
				(struct sockaddr *)&to, sizeof(to)),
			 sizeof(frame));
	/* The host stack may send its own frames first (IPv6 MLD, ...). */
	for (uint16_t i = 0; i < 4; i++) {
		uint32_t id;

		assert_true(wait_used(f, 0, i + 1));
		memcpy(&id, ram + RING(0) + 0x1000 + 4 + 8 * i, 4);
		memcpy(&len, ram + RING(0) + 0x1000 + 8 + 8 * i, 4);
		if (len == VNET_HDR + FRAME_LEN &&
		    !memcmp(ram + RX_BUF + 0x1000u * id + VNET_HDR, frame,
			    FRAME_LEN))
			return;
	}
	fail_msg("our frame never arrived in a receive buffer");
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp) {
		fputs(text, fp);
		fclose(fp);
	}
}

struct loop_probe {
	struct event_op op;
	sem_t ran;
};

static void probe_ran(struct event_op *op, int32_t res)
{
	sem_post(&((struct loop_probe *)op)->ran);
}

#define BIG_QSIZE 256
#define BIG_AVAIL (RING(0) + 0x1000)
#define BIG_USED (RING(0) + 0x2000)

static atomic_bool refilling;

/*
 * The other vCPU of a hostile driver: every receive buffer the device
 * returns is made available again at once, and none has writable space.
 */
static void *refill_empty_buffers(void *arg)
{
	struct fixture *f = arg;
	uint16_t *avail_idx = (uint16_t *)(ram + BIG_AVAIL + 2);
	uint16_t *used = (uint16_t *)(ram + BIG_USED + 2);
	uint16_t seen = 0;

	while (atomic_load(&refilling)) {
		uint16_t u = __atomic_load_n(used, __ATOMIC_ACQUIRE);

		if (u == seen)
			continue;
		seen = u;
		__atomic_store_n(avail_idx, (uint16_t)(u + BIG_QSIZE),
				 __ATOMIC_RELEASE);
		mmio_wr(&f->mmio, 0x050, 0); /* and kicks, as a driver does */
	}
	return NULL;
}

/*
 * With a driver that keeps the receive queue full of buffers without
 * writable space, the receive path must still take turns (its budget
 * counts those buffers): the event loop runs other work meanwhile. (A
 * refilling thread rarely keeps up with the device, so this passes on a
 * build without the budget too; it guards the liveness, not the race.)
 */
static void test_rx_budget_counts_empty_buffers(void **state)
{
	struct fixture *f = *state;
	struct vring_desc d = { RX_BUF, 16, 0, 0 }; /* readable only */
	struct loop_probe probe = { .op.done = probe_ran };
	struct timespec deadline;
	pthread_t refiller;
	int answered = 0;

	mmio_wr(&f->mmio, 0x070,
		0); /* reset, then up again with a big receive queue */
	mmio_negotiate(&f->mmio, 0);
	memset(ram + RING(0), 0, 0x3000);
	memcpy(ram + RING(0), &d, sizeof(d)); /* every entry names head 0 */
	__atomic_store_n((uint16_t *)(ram + BIG_AVAIL + 2), BIG_QSIZE,
			 __ATOMIC_RELEASE);
	mmio_wr(&f->mmio, 0x030, 0);
	mmio_wr(&f->mmio, 0x038, BIG_QSIZE);
	mmio_wr(&f->mmio, 0x080, RING(0));
	mmio_wr(&f->mmio, 0x090, BIG_AVAIL);
	mmio_wr(&f->mmio, 0x0a0, BIG_USED);
	mmio_wr(&f->mmio, 0x044, 1);
	setup_queue(f, 1);
	mmio_wr(&f->mmio, 0x070,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK |
			VIRTIO_CONFIG_S_DRIVER_OK);
	atomic_store(&refilling, true);
	assert_int_equal(
		pthread_create(&refiller, NULL, refill_empty_buffers, f), 0);
	mmio_wr(&f->mmio, 0x050, 0); /* kick the receive queue */
	/* Ten probes of the loop while the flood goes on. */
	sem_init(&probe.ran, 0, 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(event_loop_call(f->loop, &probe.op), 0);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 2;
		if (sem_timedwait(&probe.ran, &deadline) == 0)
			answered++;
		else
			break;
	}
	atomic_store(&refilling, false);
	pthread_join(refiller, NULL);
	mmio_wr(&f->mmio, 0x070,
		0); /* the driver gives up: the reset gets through */
	/* A probe still queued must run before teardown frees it. */
	if (answered < 10) {
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 10;
		sem_timedwait(&probe.ran, &deadline);
	}
	sem_destroy(&probe.ran);
	assert_int_equal(answered, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mac_in_config, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_transmit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_receive, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_rx_budget_counts_empty_buffers, setup, teardown),
	};
	struct event_loop *probe;
	int ret = event_loop_create(&probe, 4);

	if (ret == -ENOSYS || ret == -EPERM) {
		printf("SKIP: io_uring is not available here (%s)\n",
		       strerror(-ret));
		return 77;
	}
	event_loop_destroy(probe);
	/* A private network namespace: the tap never shows on the host. */
	if (unshare(CLONE_NEWNET) < 0 || access("/dev/net/tun", R_OK | W_OK)) {
		printf("SKIP: needs CAP_NET_ADMIN (a network namespace) and /dev/net/tun: %s\n",
		       strerror(errno));
		return 77;
	}
	/* Keep the namespace's IPv6 from chatting on the tap. */
	write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	write_file("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, RAM_SIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
