// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-9p device-side cost without KVM (`meson test --benchmark --suite
 * virtio`): an in-process driver sends 9P requests through virtio-mmio to
 * a share in a temporary directory and waits for each reply, one at a
 * time: Tgetattr round trips (the request path alone: kick, event loop,
 * worker handoff, fstat, reply, interrupt) and 128 KiB Treads of a file in
 * the page cache. It measures hintvm's share of a request, not guest exits
 * or the disk. For information only.
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_9p.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/p9_proto.h"
#include "devices/virtio/virtio_9p.h"
#include "devices/virtio/virtio_mmio.h"

#define RAM_SIZE (4u << 20)
#define QSIZE 16
#define RING 0x10000u
#define TMSG 0x20000u
#define RMSG 0x100000u
#define READ_SIZE (128u << 10)
#define FILE_SIZE (64u << 20)

static uint8_t *ram;
static struct virtio_mmio mmio;
static sem_t irq;
static uint16_t avail_idx;

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	if (level)
		sem_post(&irq);
	return 0;
}

static void wr(uint64_t off, uint32_t v)
{
	virtio_mmio_ops.write(&mmio, off, (uint8_t *)&v, 4);
}

static uint16_t used_idx(void)
{
	return __atomic_load_n((uint16_t *)(ram + RING + 0x1000 + 2),
			       __ATOMIC_ACQUIRE);
}

/* Send the T-message at TMSG (LEN bytes), wait for the reply at RMSG. */
static void rpc(size_t len)
{
	struct vring_desc d[2] = {
		{ TMSG, (uint32_t)len, VRING_DESC_F_NEXT, 1 },
		{ RMSG, READ_SIZE + 4096, VRING_DESC_F_WRITE, 0 },
	};
	uint8_t *avail = ram + RING + 0x800;
	uint16_t head = 0;

	memcpy(ram + RING, d, sizeof(d));
	memcpy(avail + 4 + 2 * (avail_idx % QSIZE), &head, 2);
	avail_idx++;
	__atomic_store_n((uint16_t *)(avail + 2), avail_idx, __ATOMIC_RELEASE);
	wr(0x050, 0);
	while (used_idx() != avail_idx)
		sem_wait(&irq);
	if (ram[RMSG + 4] == P9_RLERROR) {
		fprintf(stderr, "bench_virtio_9p: Rlerror %u\n", ram[RMSG + 7]);
		exit(1);
	}
}

static struct p9_writer msg(uint8_t type)
{
	struct p9_writer w;

	p9_writer_init(&w, ram + TMSG, 0x10000, type, 1);
	return w;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	static const uint8_t chunk[65536];
	struct guest_memory mem = { 0 };
	struct event_loop *loop;
	struct virtio_host vhost;
	struct virtio_device *vdev;
	char dir[] = "/tmp/hvm-bench-9p-XXXXXX", path[64], cmd[96];
	struct p9_writer w;
	unsigned int n;
	double t0, dt;
	int fd;

	log_set_level(LOG_ERROR);
	if (event_loop_create(&loop, 64) < 0) {
		printf("SKIP: no io_uring\n");
		return 77;
	}
	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/data", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	for (unsigned int i = 0; fd >= 0 && i < FILE_SIZE / sizeof(chunk); i++)
		if (write(fd, chunk, sizeof(chunk)) != sizeof(chunk))
			return 1;
	close(fd);
	memset(ram, 0, RAM_SIZE);
	guest_memory_add_region(&mem, 0, RAM_SIZE, ram);
	sem_init(&irq, 0, 0);
	vhost = (struct virtio_host){ .mem = &mem, .loop = loop };
	vdev = virtio_9p_create(
		&vhost, &(struct virtio_9p_share){ .dir = dir, .tag = "bench" },
		0);
	if (!vdev || virtio_device_attach_loop(vdev, loop) < 0)
		return 1;
	virtio_mmio_init(&mmio, vdev, 0,
			 (struct irq_line){ .set_level = set_level }, &vhost);
	event_loop_start(loop, "bench-9p");
	wr(0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(0x024, 1);
	wr(0x020, 1);
	wr(0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			  VIRTIO_CONFIG_S_FEATURES_OK);
	wr(0x030, 0);
	wr(0x038, QSIZE);
	wr(0x080, RING);
	wr(0x090, RING + 0x800);
	wr(0x0a0, RING + 0x1000);
	wr(0x044, 1);
	wr(0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			  VIRTIO_CONFIG_S_FEATURES_OK |
			  VIRTIO_CONFIG_S_DRIVER_OK);

	w = msg(P9_TVERSION);
	p9_put_u32(&w, READ_SIZE + 4096);
	p9_put_str(&w, P9_VERSION_L, strlen(P9_VERSION_L));
	rpc(p9_writer_finish(&w));
	w = msg(P9_TATTACH);
	p9_put_u32(&w, 0);
	p9_put_u32(&w, P9_NOFID);
	p9_put_str(&w, "", 0);
	p9_put_str(&w, "", 0);
	p9_put_u32(&w, 0);
	rpc(p9_writer_finish(&w));
	w = msg(P9_TWALK);
	p9_put_u32(&w, 0);
	p9_put_u32(&w, 1);
	p9_put_u16(&w, 1);
	p9_put_str(&w, "data", 4);
	rpc(p9_writer_finish(&w));
	w = msg(P9_TLOPEN);
	p9_put_u32(&w, 1);
	p9_put_u32(&w, 0);
	rpc(p9_writer_finish(&w));

	n = 20000;
	t0 = now_s();
	for (unsigned int i = 0; i < n; i++) {
		w = msg(P9_TGETATTR);
		p9_put_u32(&w, 1);
		p9_put_u64(&w, P9_GETATTR_BASIC);
		rpc(p9_writer_finish(&w));
	}
	dt = now_s() - t0;
	printf("Tgetattr     qd 1: %9.0f req/s %6.1f us/req\n", n / dt,
	       dt * 1e6 / n);
	n = FILE_SIZE / READ_SIZE;
	t0 = now_s();
	for (unsigned int i = 0; i < n; i++) {
		w = msg(P9_TREAD);
		p9_put_u32(&w, 1);
		p9_put_u64(&w, (uint64_t)i * READ_SIZE);
		p9_put_u32(&w, READ_SIZE);
		rpc(p9_writer_finish(&w));
	}
	dt = now_s() - t0;
	printf("Tread %3u KiB qd 1: %8.0f MiB/s %9.0f req/s %6.1f us/req\n",
	       READ_SIZE >> 10, FILE_SIZE / dt / (1 << 20), n / dt,
	       dt * 1e6 / n);
	event_loop_destroy(loop);
	vdev->ops->destroy(vdev);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) != 0;
}
