// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-vsock as a guest driver and host programs see it, in one thread:
 * the test is the guest (rings in fake RAM, on virtio-mmio) and the host
 * clients (Unix sockets), and turns the device's event loop by hand, so
 * every step is deterministic. Covered: the hybrid handshake both ways,
 * data and credit both ways (back-pressure from a stalled reader on
 * either side), shutdown and RST propagation, every hostile packet kind
 * answered with an RST (or dropped when spoofed), a credit overrun
 * resetting only its own connection, 1024 connections at once, the
 * in-process host listener, device reset and TRANSPORT_RESET.
 * Skips without io_uring.
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
#include <poll.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <cmocka.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_vsock.h"
#include "devices/virtio/vsock_proto.h"
#include "mmio_access.h"

#define GUEST_CID 42
#define RAM_SIZE 0x200000u
#define QSIZE 64
#define QAREA(q) (0x1000u + (q)*0x1000u) /* desc; avail +0x400; used +0x800 */
#define RXBUF(i) (0x10000u + (i)*0x1000u) /* 64 buffers of 4 KiB */
#define RXBUF_SIZE 0x1000u
#define EVBUF 0x50000u
#define TXHDR 0x60000u
#define TXDATA 0x70000u /* up to 128 KiB */

enum { RXQ, TXQ, EVQ };

static uint8_t *ram;

struct pkt {
	struct vsock_hdr h;
	uint8_t data[RXBUF_SIZE];
};

struct fixture {
	struct guest_memory mem;
	struct event_loop *loop;
	struct virtio_host host;
	struct virtio_device *vdev;
	struct virtio_mmio mmio;
	char dir[64];
	char uds[96];
	uint16_t avail_idx[3], used_seen[3];
	/* packets the guest received, not yet taken by the test */
	struct pkt *rx;
	unsigned int nr_rx, cap_rx;
	int service_fd; /* from the in-process listener */
	unsigned int services;
	struct budget budget; /* setup_budget: the VM's guest objects */
};

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	return 0;
}

static void set_desc(unsigned int q, unsigned int i, uint64_t addr,
		     uint32_t len, uint16_t flags, uint16_t next)
{
	struct vring_desc d = { addr, len, flags, next };

	memcpy(ram + QAREA(q) + 16 * i, &d, sizeof(d));
}

static void make_avail(struct fixture *f, unsigned int q, uint16_t head)
{
	uint8_t *avail = ram + QAREA(q) + 0x400;
	uint16_t idx = f->avail_idx[q]++;

	memcpy(avail + 4 + 2 * (idx % QSIZE), &head, 2);
	__atomic_store_n((uint16_t *)(avail + 2), (uint16_t)(idx + 1),
			 __ATOMIC_RELEASE);
	mmio_wr(&f->mmio, 0x050, q);
}

/* Run the device's event loop until nothing is left to do. */
static void turn(struct fixture *f)
{
	for (int quiet = 0; quiet < 2;) {
		if (event_loop_run_ready(f->loop) > 0) {
			quiet = 0;
			continue;
		}
		quiet++;
		usleep(100);
	}
}

/* Collect what the device put on the rx queue, reposting the buffers. */
static void collect_rx(struct fixture *f)
{
	uint8_t *used = ram + QAREA(RXQ) + 0x800;
	uint16_t idx =
		__atomic_load_n((uint16_t *)(used + 2), __ATOMIC_ACQUIRE);

	while (f->used_seen[RXQ] != idx) {
		uint32_t id, len;
		struct pkt *p;

		memcpy(&id, used + 4 + 8 * (f->used_seen[RXQ] % QSIZE), 4);
		memcpy(&len, used + 8 + 8 * (f->used_seen[RXQ] % QSIZE), 4);
		f->used_seen[RXQ]++;
		assert_true(id < QSIZE);
		assert_true(len >= VSOCK_HDR_LEN && len <= RXBUF_SIZE);
		if (f->nr_rx == f->cap_rx) {
			f->cap_rx = f->cap_rx ? 2 * f->cap_rx : 64;
			f->rx = realloc(f->rx, f->cap_rx * sizeof(*f->rx));
		}
		p = &f->rx[f->nr_rx++];
		vsock_hdr_decode(ram + RXBUF(id), &p->h);
		assert_int_equal(p->h.len + VSOCK_HDR_LEN, len);
		memcpy(p->data, ram + RXBUF(id) + VSOCK_HDR_LEN, p->h.len);
		make_avail(f, RXQ, (uint16_t)id);
	}
}

/* Turn the loop and gather rx until quiet. */
static void settle(struct fixture *f)
{
	for (int i = 0; i < 2; i++) {
		turn(f);
		collect_rx(f);
	}
}

/* Take the first received packet with OP for GUEST_PORT (any: ~0u). */
static bool take_now(struct fixture *f, uint16_t op, uint32_t guest_port,
		     struct pkt *out)
{
	for (unsigned int i = 0; i < f->nr_rx; i++) {
		struct pkt *p = &f->rx[i];

		if (p->h.op != op ||
		    (guest_port != ~0u && p->h.dst_port != guest_port))
			continue;
		if (out)
			*out = *p;
		memmove(p, p + 1, (f->nr_rx - i - 1) * sizeof(*p));
		f->nr_rx--;
		return true;
	}
	return false;
}

/* ... giving a loaded host a few more turns before saying no. */
static bool take(struct fixture *f, uint16_t op, uint32_t guest_port,
		 struct pkt *out)
{
	for (int tries = 0; tries < 10; tries++) {
		if (take_now(f, op, guest_port, out))
			return true;
		settle(f);
	}
	return false;
}

static void send_pkt(struct fixture *f, struct vsock_hdr h, const void *data)
{
	uint8_t raw[VSOCK_HDR_LEN];

	vsock_hdr_encode(&h, raw);
	memcpy(ram + TXHDR, raw, sizeof(raw));
	if (h.len && data) {
		memcpy(ram + TXDATA, data, h.len);
		set_desc(TXQ, 0, TXHDR, VSOCK_HDR_LEN, VRING_DESC_F_NEXT, 1);
		set_desc(TXQ, 1, TXDATA, h.len, 0, 0);
	} else {
		set_desc(TXQ, 0, TXHDR, VSOCK_HDR_LEN, 0, 0);
	}
	make_avail(f, TXQ, 0);
	settle(f);
}

static struct vsock_hdr hdr(uint16_t op, uint32_t guest_port,
			    uint32_t host_port)
{
	return (struct vsock_hdr){
		.src_cid = GUEST_CID,
		.dst_cid = VSOCK_HOST_CID,
		.src_port = guest_port,
		.dst_port = host_port,
		.type = VIRTIO_VSOCK_TYPE_STREAM,
		.op = op,
		.buf_alloc = 256 * 1024,
	};
}

static void setup_queue(struct fixture *f, unsigned int q)
{
	mmio_wr(&f->mmio, 0x030, q);
	mmio_wr(&f->mmio, 0x038, QSIZE);
	mmio_wr(&f->mmio, 0x080, QAREA(q));
	mmio_wr(&f->mmio, 0x084, 0);
	mmio_wr(&f->mmio, 0x090, QAREA(q) + 0x400);
	mmio_wr(&f->mmio, 0x094, 0);
	mmio_wr(&f->mmio, 0x0a0, QAREA(q) + 0x800);
	mmio_wr(&f->mmio, 0x0a4, 0);
	mmio_wr(&f->mmio, 0x044, 1);
}

/* The driver's bring-up: VERSION_1 only, three queues, rx buffers posted. */
static void driver_init(struct fixture *f)
{
	const uint8_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	memset(ram, 0, 0x60000);
	memset(f->avail_idx, 0, sizeof(f->avail_idx));
	memset(f->used_seen, 0, sizeof(f->used_seen));
	f->nr_rx = 0;
	mmio_wr(&f->mmio, 0x070, 0);
	mmio_wr(&f->mmio, 0x070, s);
	mmio_wr(&f->mmio, 0x024, 1);
	mmio_wr(&f->mmio, 0x020, 1); /* VERSION_1 */
	mmio_wr(&f->mmio, 0x070, s | VIRTIO_CONFIG_S_FEATURES_OK);
	assert_true(mmio_rd(&f->mmio, 0x070) & VIRTIO_CONFIG_S_FEATURES_OK);
	for (unsigned int q = 0; q < 3; q++)
		setup_queue(f, q);
	mmio_wr(&f->mmio, 0x070,
		s | VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	for (unsigned int i = 0; i < QSIZE; i++) {
		set_desc(RXQ, i, RXBUF(i), RXBUF_SIZE, VRING_DESC_F_WRITE, 0);
		make_avail(f, RXQ, (uint16_t)i);
	}
	settle(f);
}

static int setup_with(void **state, uint64_t budget)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int r;

	log_set_level(LOG_ERROR);
	memset(ram, 0, RAM_SIZE);
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, ram), 0);
	r = event_loop_create(&f->loop, 256);
	assert_int_equal(r, 0);
	snprintf(f->dir, sizeof(f->dir), "/tmp/hvm-vsock-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->uds, sizeof(f->uds), "%s/v.sock", f->dir);
	f->budget.limit = budget;
	f->host = (struct virtio_host){
		.mem = &f->mem,
		.loop = f->loop,
		.guest_objects = budget ? &f->budget : NULL,
	};
	f->vdev = virtio_vsock_create(&f->host, GUEST_CID, f->uds);
	assert_non_null(f->vdev);
	assert_int_equal(virtio_device_attach_loop(f->vdev, f->loop), 0);
	virtio_mmio_init(&f->mmio, f->vdev, 0x0a000000,
			 (struct irq_line){ .set_level = set_level, .ctx = f },
			 &f->host);
	f->service_fd = -1;
	driver_init(f);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 0);
}

/* A guest-object budget of 4 KiB: room for a few connections. */
static int setup_budget(void **state)
{
	return setup_with(state, 4096);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	if (f->loop)
		event_loop_destroy(f->loop);
	f->vdev->ops->destroy(f->vdev);
	/* Every connection gave its bytes back. */
	assert_int_equal(atomic_load(&f->budget.used), 0);
	/* The socket goes with the device. */
	assert_int_equal(access(f->uds, F_OK), -1);
	snprintf(path, sizeof(path), "%s/v.sock_5000", f->dir);
	unlink(path);
	rmdir(f->dir);
	if (f->service_fd >= 0)
		close(f->service_fd);
	free(f->rx);
	free(f);
	return 0;
}

static int client_connect(struct fixture *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, f->uds);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* What a host client can read within 2 s (0: EOF, -1: error). */
static ssize_t read_avail(int fd, void *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	poll(&p, 1, 2000);
	return recv(fd, buf, len, MSG_DONTWAIT);
}

/* EOF, or ECONNRESET when the device closed with our bytes unread. */
static bool closed_by_peer(int fd)
{
	char c;
	ssize_t n = read_avail(fd, &c, 1);

	return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* A host client asks for guest port PORT; the REQUEST the guest got. */
static int host_connect(struct fixture *f, uint32_t port, struct pkt *req)
{
	int fd = client_connect(f);
	char line[32];
	int n = snprintf(line, sizeof(line), "CONNECT %u\n", port);

	assert_int_equal(write(fd, line, (size_t)n), n);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_REQUEST, port, req));
	return fd;
}

/* ... and the guest accepts it: the client reads "OK <port>\n". */
static int host_connect_accepted(struct fixture *f, uint32_t port,
				 struct pkt *req)
{
	int fd = host_connect(f, port, req);
	char line[32] = { 0 }, want[32];

	send_pkt(f, hdr(VIRTIO_VSOCK_OP_RESPONSE, port, req->h.src_port), NULL);
	snprintf(want, sizeof(want), "OK %u\n", req->h.src_port);
	assert_int_equal(read_avail(fd, line, strlen(want)),
			 (ssize_t)strlen(want));
	assert_string_equal(line, want);
	return fd;
}

static void test_config_and_socket(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	assert_int_equal(mmio_rd(&f->mmio, 0x008), 19); /* VIRTIO_ID_VSOCK */
	mmio_wr(&f->mmio, 0x014, 0);
	assert_true(mmio_rd(&f->mmio, 0x010) & 1); /* VIRTIO_VSOCK_F_STREAM */
	assert_int_equal(mmio_rd(&f->mmio, 0x100), GUEST_CID);
	assert_int_equal(mmio_rd(&f->mmio, 0x104), 0);
	mmio_wr(&f->mmio, 0x100, 7); /* read-only */
	assert_int_equal(mmio_rd(&f->mmio, 0x100), GUEST_CID);
	assert_int_equal(stat(f->uds, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_host_to_guest_stream(void **state)
{
	struct fixture *f = *state;
	struct pkt req = { 0 }, p;
	char buf[64] = { 0 };
	int fd = host_connect_accepted(f, 1234, &req);
	uint32_t hp = req.h.src_port;

	assert_int_equal(req.h.src_cid, VSOCK_HOST_CID);
	assert_int_equal(req.h.dst_cid, GUEST_CID);
	assert_true(hp >= 1u << 30);
	assert_int_equal(req.h.buf_alloc, VSOCK_BUF_ALLOC);
	assert_int_equal(req.h.type, VIRTIO_VSOCK_TYPE_STREAM);
	/* Host to guest. */
	assert_int_equal(write(fd, "hello", 5), 5);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_RW, 1234, &p));
	assert_int_equal(p.h.len, 5);
	assert_memory_equal(p.data, "hello", 5);
	assert_int_equal(p.h.src_port, hp);
	/* Guest to host. */
	{
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_RW, 1234, hp);

		h.len = 5;
		h.fwd_cnt = 5;
		send_pkt(f, h, "world");
	}
	assert_int_equal(read_avail(fd, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "world", 5);
	assert_int_equal(virtio_vsock_connections(f->vdev), 1);
	/* The host closes: the guest hears SHUTDOWN both ways, answers RST. */
	close(fd);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_SHUTDOWN, 1234, &p));
	assert_int_equal(p.h.flags, VSOCK_SHUTDOWN_BOTH);
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_RST, 1234, hp), NULL);
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);
	assert_int_equal(f->nr_rx, 0);
}

static void test_data_after_connect_line(void **state)
{
	struct fixture *f = *state;
	int fd = client_connect(f);
	struct pkt req = { 0 }, p;

	/* A client that does not wait for OK: its bytes are not lost. */
	assert_int_equal(write(fd, "CONNECT 77\nearly", 16), 16);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_REQUEST, 77, &req));
	assert_false(take(f, VIRTIO_VSOCK_OP_RW, 77, NULL));
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_RESPONSE, 77, req.h.src_port), NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RW, 77, &p));
	assert_int_equal(p.h.len, 5);
	assert_memory_equal(p.data, "early", 5);
	close(fd);
}

static void test_refused_and_bad_requests(void **state)
{
	struct fixture *f = *state;
	struct pkt req = { 0 };
	char c;
	int fd = host_connect(f, 99, &req);

	/* No guest listener: the guest resets, the host sees EOF. */
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_RST, 99, req.h.src_port), NULL);
	assert_int_equal(read_avail(fd, &c, 1), 0);
	close(fd);
	/* Not a CONNECT line: closed, the guest hears nothing. */
	static const char *const bad[] = {
		"HELLO 1\n",	 "CONNECT x\n",
		"CONNECT 012\n", "CONNECT 4294967296\n",
		"CONNECT \n",	 "CONNECT 11111111111111111111111111111\n"
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = client_connect(f);
		assert_int_equal(write(fd, bad[i], strlen(bad[i])),
				 (ssize_t)strlen(bad[i]));
		settle(f);
		if (!closed_by_peer(fd))
			fail_msg("'%s' was not refused", bad[i]);
		close(fd);
	}
	assert_int_equal(f->nr_rx, 0);
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

static void test_guest_to_host(void **state)
{
	struct fixture *f = *state;
	char path[128], buf[16] = { 0 };
	struct pkt p;
	int lfd, fd;

	snprintf(path, sizeof(path), "%s_5000", f->uds);
	lfd = listen_at(path);
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_REQUEST, 3333, 5000), NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RESPONSE, 3333, &p));
	assert_int_equal(p.h.src_port, 5000);
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	{
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_RW, 3333, 5000);

		h.len = 3;
		send_pkt(f, h, "abc");
	}
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	assert_int_equal(write(fd, "xyz", 3), 3);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_RW, 3333, &p));
	assert_memory_equal(p.data, "xyz", 3);
	/* Guest half-close: the host reads EOF but can still write. */
	{
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_SHUTDOWN, 3333, 5000);

		h.flags = VIRTIO_VSOCK_SHUTDOWN_SEND;
		send_pkt(f, h, NULL);
	}
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);
	assert_int_equal(write(fd, "z", 1), 1);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_RW, 3333, &p));
	/* Full close from the guest: RST back, host end closed. */
	{
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_SHUTDOWN, 3333, 5000);

		h.flags = VSOCK_SHUTDOWN_BOTH;
		send_pkt(f, h, NULL);
	}
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 3333, NULL));
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);
	close(fd);
	/* Nobody at PATH_5001: refused. */
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_REQUEST, 3334, 5001), NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 3334, &p));
	assert_int_equal(p.h.src_port, 5001);
	close(lfd);
	unlink(path);
}

/*
 * Guest connections past the VM's guest-object budget: an RST before any
 * host program sees the connection; a closed one makes room again.
 */
static void test_guest_connections_within_the_budget(void **state)
{
	struct fixture *f = *state;
	char path[128];
	unsigned int ok = 0, accepted = 0;
	int lfd, fd;

	int held[100];

	snprintf(path, sizeof(path), "%s_5000", f->uds);
	lfd = listen_at(path);
	for (uint32_t port = 3000; port < 3100; port++) {
		send_pkt(f, hdr(VIRTIO_VSOCK_OP_REQUEST, port, 5000), NULL);
		if (take(f, VIRTIO_VSOCK_OP_RESPONSE, port, NULL)) {
			held[ok++] = accept(lfd, NULL, NULL);
			continue;
		}
		assert_true(take_now(f, VIRTIO_VSOCK_OP_RST, port, NULL));
		break;
	}
	print_message("%u connections in a 4 KiB budget\n", ok);
	assert_true(ok >= 2);
	assert_true(ok < 100);
	assert_int_equal(atomic_load(&f->budget.refused), 1);
	assert_true(atomic_load(&f->budget.peak) <= f->budget.limit);
	/* The host listener saw no connection the guest did not get. */
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	while ((fd = accept(lfd, NULL, NULL)) >= 0) {
		accepted++;
		close(fd);
	}
	assert_int_equal(accepted, 0);
	for (unsigned int i = 0; i < ok; i++)
		close(held[i]);
	/* The guest closes one: the next request fits. */
	{
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_SHUTDOWN, 3000, 5000);

		h.flags = VSOCK_SHUTDOWN_BOTH;
		send_pkt(f, h, NULL);
	}
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 3000, NULL));
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_REQUEST, 4000, 5000), NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RESPONSE, 4000, NULL));
	close(lfd);
	unlink(path);
}

/* Each hostile packet gets an RST (or nothing, when spoofed). */
static void test_hostile_packets(void **state)
{
	struct fixture *f = *state;
	struct vsock_hdr h;
	struct pkt p;

	h = hdr(VIRTIO_VSOCK_OP_RW, 10, 5000);
	send_pkt(f, h, NULL); /* RW for no connection */
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 10, NULL));
	h = hdr(9, 11, 5000); /* unknown op */
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 11, NULL));
	h = hdr(0, 12, 5000); /* OP_INVALID */
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 12, NULL));
	h = hdr(VIRTIO_VSOCK_OP_REQUEST, 13, 5000);
	h.dst_cid = 7; /* another VM */
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 13, &p));
	assert_int_equal(p.h.src_cid, 7);
	h = hdr(VIRTIO_VSOCK_OP_REQUEST, 14, 5000);
	h.type = VIRTIO_VSOCK_TYPE_SEQPACKET;
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 14, &p));
	h = hdr(VIRTIO_VSOCK_OP_RW, 15, 5000);
	h.len = 1000; /* the chain carries only the header */
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 15, NULL));
	h = hdr(VIRTIO_VSOCK_OP_REQUEST, 16, 5000);
	h.len = 4; /* payload on a control packet */
	send_pkt(f, h, "abcd");
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 16, NULL));
	h = hdr(VIRTIO_VSOCK_OP_REQUEST, 17, 5000);
	h.src_cid = 43; /* spoofed: dropped, never answered */
	send_pkt(f, h, NULL);
	h = hdr(VIRTIO_VSOCK_OP_RST, 18, 5000);
	h.type = 9; /* a malformed RST: never answered with an RST */
	send_pkt(f, h, NULL);
	/* A header split over descriptors is fine: 2 + 42 bytes. */
	{
		uint8_t raw[VSOCK_HDR_LEN];

		h = hdr(VIRTIO_VSOCK_OP_CREDIT_REQUEST, 19, 5000);
		vsock_hdr_encode(&h, raw);
		memcpy(ram + TXHDR, raw, sizeof(raw));
		set_desc(TXQ, 0, TXHDR, 2, VRING_DESC_F_NEXT, 1);
		set_desc(TXQ, 1, TXHDR + 2, VSOCK_HDR_LEN - 2, 0, 0);
		make_avail(f, TXQ, 0);
		settle(f);
		/* Parsed: a credit request for no connection, so an RST. */
		assert_true(take(f, VIRTIO_VSOCK_OP_RST, 19, NULL));
	}
	/* A chain shorter than a header: dropped. */
	set_desc(TXQ, 0, TXHDR, 10, 0, 0);
	make_avail(f, TXQ, 0);
	settle(f);
	assert_int_equal(f->nr_rx, 0);
	/* The device is fine: still serving, no reset needed. */
	assert_false(mmio_rd(&f->mmio, 0x070) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* A hostile packet on a live connection resets just that connection. */
static void test_violation_resets_only_its_connection(void **state)
{
	struct fixture *f = *state;
	struct pkt a, b, p;
	int fa = host_connect_accepted(f, 2000, &a);
	int fb = host_connect_accepted(f, 2001, &b);
	struct vsock_hdr h;
	char c;

	h = hdr(VIRTIO_VSOCK_OP_RESPONSE, 2000, a.h.src_port); /* again */
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 2000, NULL));
	assert_int_equal(read_avail(fa, &c, 1), 0); /* host end closed */
	/* b still works. */
	assert_int_equal(write(fb, "q", 1), 1);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_RW, 2001, &p));
	/* fwd_cnt beyond what was sent: b reset. */
	h = hdr(VIRTIO_VSOCK_OP_CREDIT_UPDATE, 2001, b.h.src_port);
	h.fwd_cnt = 100;
	send_pkt(f, h, NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 2001, NULL));
	assert_int_equal(read_avail(fb, &c, 1), 0);
	close(fa);
	close(fb);
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);
}

/* Host data stops at the guest's credit and resumes with its update. */
static void test_guest_credit_holds_host_back(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[100000];
	struct pkt req = { 0 }, p;
	int fd = client_connect(f);
	uint32_t got = 0;
	struct vsock_hdr h;

	assert_int_equal(write(fd, "CONNECT 3000\n", 13), 13);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_REQUEST, 3000, &req));
	h = hdr(VIRTIO_VSOCK_OP_RESPONSE, 3000, req.h.src_port);
	h.buf_alloc = 8192; /* the guest's socket buffer */
	send_pkt(f, h, NULL);
	char ok[32];
	assert_true(read_avail(fd, ok, sizeof(ok)) > 0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
	settle(f);
	while (take_now(f, VIRTIO_VSOCK_OP_RW, 3000, &p)) {
		assert_memory_equal(p.data, data + got, p.h.len);
		got += p.h.len;
	}
	assert_int_equal(got, 8192);
	/* The guest's reader consumed it all. */
	h = hdr(VIRTIO_VSOCK_OP_CREDIT_UPDATE, 3000, req.h.src_port);
	h.buf_alloc = 8192;
	h.fwd_cnt = 8192;
	send_pkt(f, h, NULL);
	while (take_now(f, VIRTIO_VSOCK_OP_RW, 3000, &p)) {
		assert_memory_equal(p.data, data + got, p.h.len);
		got += p.h.len;
	}
	assert_int_equal(got, 16384);
	close(fd);
}

/*
 * A stalled host reader: the device buffers at most the credit it
 * granted, tells the guest so through fwd_cnt, and a guest that ignores
 * it is reset.
 */
static void test_host_stall_and_credit_overrun(void **state)
{
	struct fixture *f = *state;
	static uint8_t chunk[VSOCK_MAX_PKT_PAYLOAD];
	static uint8_t sink[VSOCK_MAX_PKT_PAYLOAD];
	struct pkt req = { 0 }, p;
	int fd = host_connect_accepted(f, 4000, &req);
	uint32_t hp = req.h.src_port, sent = 0;
	int sndbuf = 4096;
	bool reset = false;

	/* A small socket buffer so the stall comes quickly. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf));
	memset(chunk, 'x', sizeof(chunk));
	for (int i = 0; i < 64 && !reset; i++) {
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_RW, 4000, hp);

		h.len = sizeof(chunk);
		send_pkt(f, h, chunk);
		sent += h.len;
		reset = take(f, VIRTIO_VSOCK_OP_RST, 4000, NULL);
	}
	assert_true(reset);
	/* Only the unread part beyond the socket was ever held. */
	assert_true(sent > VSOCK_BUF_ALLOC);
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	close(fd);
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);

	/* A guest that keeps to the credit is never reset. */
	fd = host_connect_accepted(f, 4001, &req);
	hp = req.h.src_port;
	uint32_t fwd = 0, tx = 0, moved = 0;
	for (int round = 0; round < 40; round++) {
		uint32_t credit = VSOCK_BUF_ALLOC - (tx - fwd);
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_RW, 4001, hp);

		if (credit) {
			h.len = credit > 16384 ? 16384 : credit;
			send_pkt(f, h, chunk);
			tx += h.len;
		}
		if (round % 8 == 7) {
			ssize_t n;

			while ((n = recv(fd, sink, sizeof(sink),
					 MSG_DONTWAIT)) > 0)
				moved += (uint32_t)n;
			settle(f);
		}
		while (take_now(f, VIRTIO_VSOCK_OP_CREDIT_UPDATE, 4001, &p))
			fwd = p.h.fwd_cnt;
		assert_false(take(f, VIRTIO_VSOCK_OP_RST, 4001, NULL));
	}
	assert_true(moved > 2 * VSOCK_BUF_ALLOC);
	close(fd);
}

static void on_service(int fd, void *opaque)
{
	struct fixture *f = opaque;

	f->services++;
	f->service_fd = fd;
}

static void test_in_process_listener(void **state)
{
	struct fixture *f = *state;
	char buf[8] = { 0 };
	struct pkt p;

	assert_int_equal(
		virtio_vsock_add_host_listener(f->vdev, 9000, on_service, f),
		0);
	assert_int_equal(
		virtio_vsock_add_host_listener(f->vdev, 9000, on_service, f),
		-EEXIST);
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_REQUEST, 555, 9000), NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RESPONSE, 555, NULL));
	assert_int_equal(f->services, 1);
	{
		struct vsock_hdr h = hdr(VIRTIO_VSOCK_OP_RW, 555, 9000);

		h.len = 6;
		send_pkt(f, h, "exit 3");
	}
	assert_int_equal(read_avail(f->service_fd, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "exit 3", 6);
	assert_int_equal(write(f->service_fd, "ok", 2), 2);
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_RW, 555, &p));
	assert_memory_equal(p.data, "ok", 2);
	close(f->service_fd);
	f->service_fd = -1;
	settle(f);
	assert_true(take(f, VIRTIO_VSOCK_OP_SHUTDOWN, 555, NULL));
	assert_int_equal(virtio_vsock_remove_host_listener(f->vdev, 9000), 0);
	assert_int_equal(virtio_vsock_remove_host_listener(f->vdev, 9000),
			 -ENOENT);
	send_pkt(f, hdr(VIRTIO_VSOCK_OP_REQUEST, 556, 9000), NULL);
	assert_true(take(f, VIRTIO_VSOCK_OP_RST, 556, NULL));
}

static void test_1024_connections(void **state)
{
	struct fixture *f = *state;
	enum { N = 1024 };
	static int fds[N];
	static uint32_t ports[N];
	struct rlimit rl;
	unsigned int echoed = 0;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 2 * N + 64)
		skip(); /* the device raised it as far as it could */
	for (unsigned int i = 0; i < N; i++) {
		char line[32];
		int n = snprintf(line, sizeof(line), "CONNECT %u\n", 10000 + i);

		fds[i] = client_connect(f);
		assert_int_equal(write(fds[i], line, (size_t)n), n);
		if (i % 32 == 31)
			settle(f);
		for (struct pkt p;
		     take_now(f, VIRTIO_VSOCK_OP_REQUEST, ~0u, &p);) {
			ports[p.h.dst_port - 10000] = p.h.src_port;
			send_pkt(f,
				 hdr(VIRTIO_VSOCK_OP_RESPONSE, p.h.dst_port,
				     p.h.src_port),
				 NULL);
		}
	}
	settle(f);
	for (struct pkt p; take_now(f, VIRTIO_VSOCK_OP_REQUEST, ~0u, &p);) {
		ports[p.h.dst_port - 10000] = p.h.src_port;
		send_pkt(f,
			 hdr(VIRTIO_VSOCK_OP_RESPONSE, p.h.dst_port,
			     p.h.src_port),
			 NULL);
	}
	assert_int_equal(virtio_vsock_connections(f->vdev), N);
	/* Every one carries its own byte, in both directions. */
	for (unsigned int i = 0; i < N; i++) {
		uint8_t b = (uint8_t)i;
		char line[32];

		assert_true(read_avail(fds[i], line, sizeof(line)) > 0);
		assert_int_equal(write(fds[i], &b, 1), 1);
	}
	settle(f);
	for (struct pkt p; take_now(f, VIRTIO_VSOCK_OP_RW, ~0u, &p);) {
		unsigned int i = p.h.dst_port - 10000;
		struct vsock_hdr h;

		assert_true(i < N);
		assert_int_equal(p.h.len, 1);
		assert_int_equal(p.data[0], (uint8_t)i);
		h = hdr(VIRTIO_VSOCK_OP_RW, p.h.dst_port, ports[i]);
		h.len = 1;
		h.fwd_cnt = 1;
		send_pkt(f, h, p.data);
		echoed++;
	}
	assert_int_equal(echoed, N);
	for (unsigned int i = 0; i < N; i++) {
		uint8_t b;

		assert_int_equal(read_avail(fds[i], &b, 1), 1);
		assert_int_equal(b, (uint8_t)i);
		close(fds[i]);
	}
	settle(f);
	while (take_now(f, VIRTIO_VSOCK_OP_SHUTDOWN, ~0u, NULL))
		;
}

static void test_device_and_transport_reset(void **state)
{
	struct fixture *f = *state;
	struct pkt req = { 0 };
	uint32_t id = 0xffffffff;
	char c;
	int fd = host_connect_accepted(f, 6000, &req);

	/* TRANSPORT_RESET: an event, and every connection gone. */
	set_desc(EVQ, 0, EVBUF, 4, VRING_DESC_F_WRITE, 0);
	memcpy(ram + EVBUF, &id, 4);
	make_avail(f, EVQ, 0);
	settle(f);
	virtio_vsock_transport_reset(f->vdev);
	settle(f);
	memcpy(&id, ram + EVBUF, 4);
	assert_int_equal(id, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	assert_int_equal(read_avail(fd, &c, 1), 0);
	close(fd);
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);
	/* A driver reset drops connections too. */
	fd = host_connect_accepted(f, 6001, &req);
	mmio_wr(&f->mmio, 0x070, 0);
	assert_int_equal(read_avail(fd, &c, 1), 0);
	close(fd);
	assert_int_equal(virtio_vsock_connections(f->vdev), 0);
	driver_init(f);
	fd = host_connect_accepted(f, 6002, &req);
	close(fd);
}

/*
 * Snapshot and restore as a clone with its own CID: the guest's
 * connections are stale (no host end exists), so the restored device
 * announces TRANSPORT_RESET on the event queue, and its config space
 * holds the new CID the driver then reads.
 */
static void test_snapshot_restored_with_new_cid(void **state)
{
	struct fixture *f = *state;
	struct pkt req = { 0 };
	uint32_t id = 0xffffffff;
	uint8_t dev[sizeof(struct virtio_device_state) +
		    3 * sizeof(struct virtq_state)];
	struct virtio_vsock_state st, bad;
	struct virtio_device *g;
	struct virtio_mmio mmio;
	uint64_t cid = 0;
	char uds[128];
	int fd = host_connect_accepted(f, 6000, &req);

	set_desc(EVQ, 0, EVBUF, 4, VRING_DESC_F_WRITE, 0);
	memcpy(ram + EVBUF, &id, 4);
	make_avail(f, EVQ, 0);
	settle(f);
	virtio_device_freeze(f->vdev);
	pthread_mutex_lock(&f->vdev->lock);
	assert_int_equal(virtio_device_state_size(f->vdev), sizeof(dev));
	virtio_device_save(f->vdev, dev);
	virtio_vsock_save(f->vdev, &st);
	pthread_mutex_unlock(&f->vdev->lock);
	assert_int_equal(st.guest_cid, GUEST_CID);

	snprintf(uds, sizeof(uds), "%s/clone.sock", f->dir);
	g = virtio_vsock_create(&f->host, GUEST_CID + 7, uds);
	assert_non_null(g);
	assert_int_equal(virtio_device_attach_loop(g, f->loop), 0);
	virtio_mmio_init(&mmio, g, 0x0b000000,
			 (struct irq_line){ .set_level = set_level, .ctx = f },
			 &f->host);
	bad = st;
	bad.guest_cid = 2;
	pthread_mutex_lock(&g->lock);
	assert_int_equal(virtio_vsock_load(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-vsock: guest CID 2 (reserved 0x0); expected 3 to 4294967294 (0)");
	bad = st;
	bad.next_host_port = 7;
	assert_int_equal(virtio_vsock_load(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-vsock: next host port 7; expected 1073741824 to 4294967294");
	assert_int_equal(virtio_device_load(g, dev, sizeof(dev)), 0);
	assert_int_equal(virtio_vsock_load(g, &st), 0);
	pthread_mutex_unlock(&g->lock);
	for (uint16_t q = 0; q < 3; q++)
		virtio_device_kick(g, q);
	settle(f);
	memcpy(&id, ram + EVBUF, 4);
	assert_int_equal(id, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	pthread_mutex_lock(&g->lock);
	assert_int_equal(virtio_config_read(g, 0, (uint8_t *)&cid, 8), 0);
	pthread_mutex_unlock(&g->lock);
	assert_int_equal(cid, GUEST_CID + 7);
	event_loop_destroy(f->loop);
	f->loop = NULL;
	g->ops->destroy(g);
	virtio_device_thaw(f->vdev);
	close(fd);
}

static void test_stale_socket_replaced(void **state)
{
	struct fixture *f = *state;
	struct virtio_host host = f->host;
	struct virtio_device *other;
	char path[128];
	int fd;

	/* Its own loop: a device must outlive the loop that watches it. */
	assert_int_equal(event_loop_create(&host.loop, 16), 0);
	/* A live socket is in use: refused, with its name. */
	other = virtio_vsock_create(&host, 5, f->uds);
	assert_null(other);
	assert_non_null(strstr(hvm_error_message(), f->uds));
	/* A dead one (a killed hintvm) is replaced. */
	snprintf(path, sizeof(path), "%s/stale.sock", f->dir);
	fd = listen_at(path);
	close(fd);
	other = virtio_vsock_create(&host, 5, path);
	assert_non_null(other);
	event_loop_destroy(host.loop);
	other->ops->destroy(other);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_guest_connections_within_the_budget, setup_budget,
			teardown),
		cmocka_unit_test_setup_teardown(test_config_and_socket, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_host_to_guest_stream,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_after_connect_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_and_bad_requests,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_to_host, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hostile_packets, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_violation_resets_only_its_connection, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_guest_credit_holds_host_back, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_host_stall_and_credit_overrun, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_process_listener, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_1024_connections, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_snapshot_restored_with_new_cid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_and_transport_reset,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_socket_replaced,
						setup, teardown),
	};

	struct event_loop *probe;

	int r = event_loop_create(&probe, 4);

	if (r == -ENOSYS || r == -EPERM) {
		printf("SKIP: no io_uring here (qemu-user?)\n");
		return 77;
	}
	if (r < 0)
		return 1;
	event_loop_destroy(probe);
	ram = aligned_alloc(4096, RAM_SIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
