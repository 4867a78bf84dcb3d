// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-blk device-side throughput without KVM (`meson test --benchmark
 * --suite virtio`): an in-process driver submits batches of QD read or
 * write requests through virtio-pci to a temporary image (page cache warm)
 * and waits for each batch's completions. It measures hintvm's share of
 * the I/O path (ring handling, io_uring submission and completion, MSI-X
 * decisions), not guest exits or the disk. For information only.
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio_blk.h"
#include "devices/virtio/virtio_pci.h"

#define WINDOW 0xe0000000ull
#define RAM_SIZE (64u << 20)
#define IMAGE_SIZE (64u << 20)
#define QSIZE 256
#define DESC 0x10000ull
#define AVAIL 0x20000ull
#define USED 0x30000ull
#define HDRS 0x40000ull /* 16 bytes + status per request slot, 32 apart */
#define DATA 0x100000ull /* request slot i's data at DATA + i * MAX_IO */
#define MAX_IO (128u << 10)

static uint8_t *ram;
static struct pci_host *host;
static uint64_t bar;
static sem_t msi;
static uint16_t avail_idx, used_seen;

static int count_msi(void *ctx, uint64_t addr, uint32_t data)
{
	sem_post(&msi);
	return 0;
}

static void bar_write(uint64_t off, uint64_t v, uint32_t len)
{
	pci_host_mmio_ops.write(host, bar + off - WINDOW, (uint8_t *)&v, len);
}

static void cfg_write(int slot, uint32_t off, uint32_t v, uint32_t len)
{
	pci_host_config_write(host, (unsigned int)slot, off, (uint8_t *)&v,
			      len);
}

static void driver_init(struct virtio_pci *vp)
{
	uint8_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;
	uint64_t table = VIRTIO_PCI_MSIX_TABLE_OFF;

	/* MSI-X vector 1 for the queue, enabled. */
	bar_write(table + 16 + 0, 0xfee00000, 4);
	bar_write(table + 16 + 8, 0x41, 4);
	bar_write(table + 16 + 12, 0, 4);
	cfg_write(vp->pdev.slot, vp->msix.cap + 2u, 0x8000, 2);
	bar_write(VIRTIO_PCI_COMMON_STATUS, s, 1);
	bar_write(VIRTIO_PCI_COMMON_GFSELECT, 0, 4);
	bar_write(VIRTIO_PCI_COMMON_GF,
		  (1u << VIRTIO_BLK_F_SEG_MAX) | (1u << VIRTIO_BLK_F_FLUSH) |
			  (1u << VIRTIO_RING_F_EVENT_IDX),
		  4);
	bar_write(VIRTIO_PCI_COMMON_GFSELECT, 1, 4);
	bar_write(VIRTIO_PCI_COMMON_GF, 1, 4);
	bar_write(VIRTIO_PCI_COMMON_STATUS, s |= VIRTIO_CONFIG_S_FEATURES_OK,
		  1);
	bar_write(VIRTIO_PCI_COMMON_Q_SELECT, 0, 2);
	bar_write(VIRTIO_PCI_COMMON_Q_SIZE, QSIZE, 2);
	bar_write(VIRTIO_PCI_COMMON_Q_MSIX, 1, 2);
	bar_write(VIRTIO_PCI_COMMON_Q_DESCLO, DESC, 8);
	bar_write(VIRTIO_PCI_COMMON_Q_AVAILLO, AVAIL, 8);
	bar_write(VIRTIO_PCI_COMMON_Q_USEDLO, USED, 8);
	bar_write(VIRTIO_PCI_COMMON_Q_ENABLE, 1, 2);
	bar_write(VIRTIO_PCI_COMMON_STATUS, s | VIRTIO_CONFIG_S_DRIVER_OK, 1);
}

static void set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct vring_desc d = { addr, len, flags, next };

	memcpy(ram + DESC + 16 * i, &d, sizeof(d));
}

/* Request slot SLOT uses descriptors 3 * SLOT .. 3 * SLOT + 2. */
static void queue_request(unsigned int slot, uint32_t type, uint64_t sector,
			  uint32_t len)
{
	uint16_t d = (uint16_t)(3 * slot);
	uint64_t hdr = HDRS + 32ull * slot;
	struct virtio_blk_outhdr h = { .type = type, .sector = sector };

	memcpy(ram + hdr, &h, sizeof(h));
	set_desc(d, hdr, 16, VRING_DESC_F_NEXT, d + 1);
	set_desc(d + 1, DATA + (uint64_t)slot * MAX_IO, len,
		 VRING_DESC_F_NEXT |
			 (type == VIRTIO_BLK_T_IN ? VRING_DESC_F_WRITE : 0),
		 d + 2);
	set_desc(d + 2, hdr + 16, 1, VRING_DESC_F_WRITE, 0);
	memcpy(ram + AVAIL + 4 + 2 * (avail_idx % QSIZE), &d, 2);
	avail_idx++;
}

static void kick_and_wait(uint16_t n)
{
	__atomic_store_n((uint16_t *)(ram + AVAIL + 2), avail_idx,
			 __ATOMIC_RELEASE);
	/* EVENT_IDX: ask for one interrupt, when the last one completes. */
	*(volatile uint16_t *)(ram + AVAIL + 4 + 2 * QSIZE) =
		(uint16_t)(used_seen + n - 1);
	bar_write(VIRTIO_PCI_NOTIFY_OFF, 0, 2);
	used_seen = (uint16_t)(used_seen + n);
	while ((uint16_t)(__atomic_load_n((uint16_t *)(ram + USED + 2),
					  __ATOMIC_ACQUIRE) -
			  used_seen) != 0)
		sem_wait(&msi);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(const char *what, uint32_t type, uint32_t io, unsigned int qd)
{
	uint64_t sectors = IMAGE_SIZE / 512, sector = 0, bytes = 0, reqs = 0;
	double start = now(), elapsed;

	do {
		for (unsigned int s = 0; s < qd; s++) {
			queue_request(s, type, sector, io);
			sector = (sector + io / 512) % sectors;
		}
		kick_and_wait((uint16_t)qd);
		bytes += (uint64_t)qd * io;
		reqs += qd;
		elapsed = now() - start;
	} while (elapsed < 2.0);
	printf("%-6s %4u KiB qd %2u: %8.0f MiB/s %9.0f req/s %6.1f us/req\n",
	       what, io >> 10, qd, bytes / elapsed / (1 << 20), reqs / elapsed,
	       elapsed / reqs * 1e6);
}

int main(void)
{
	struct guest_memory mem = { 0 };
	struct event_loop *loop;
	struct virtio_host vhost;
	struct virtio_device *vdev;
	static struct virtio_pci vp;
	char path[] = "/tmp/hvm-blkbench-XXXXXX";
	int fd;

	if (event_loop_create(&loop, 256) < 0) {
		printf("SKIP: no io_uring\n");
		return 77;
	}
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, RAM_SIZE);
	memset(ram, 0, RAM_SIZE);
	guest_memory_add_region(&mem, 0, RAM_SIZE, ram);
	sem_init(&msi, 0, 0);
	host = pci_host_create(WINDOW, 0x10000000);
	vhost = (struct virtio_host){ .mem = &mem,
				      .loop = loop,
				      .msi = { count_msi, NULL } };
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, IMAGE_SIZE) < 0)
		return 1;
	/* Fill the image so reads come from the page cache, not holes. */
	for (uint64_t off = 0; off < IMAGE_SIZE; off += MAX_IO)
		if (pwrite(fd, ram + DATA, MAX_IO, (off_t)off) != MAX_IO)
			return 1;
	close(fd);
	vdev = virtio_blk_create(&vhost, path, false, false, true, 0);
	if (!vdev || virtio_device_attach_loop(vdev, loop) ||
	    virtio_pci_init(&vp, vdev, host, &vhost) ||
	    event_loop_start(loop, "bench-blk"))
		return 1;
	bar = pci_device_bar_addr(&vp.pdev, VIRTIO_PCI_BAR);
	driver_init(&vp);
	run("read", VIRTIO_BLK_T_IN, 4096, 1);
	run("read", VIRTIO_BLK_T_IN, 4096, 32);
	run("read", VIRTIO_BLK_T_IN, 64 << 10, 1);
	run("read", VIRTIO_BLK_T_IN, 64 << 10, 32);
	run("write", VIRTIO_BLK_T_OUT, 4096, 32);
	run("write", VIRTIO_BLK_T_OUT, 64 << 10, 32);
	event_loop_destroy(loop);
	vdev->ops->destroy(vdev);
	pci_host_destroy(host);
	unlink(path);
	return 0;
}
