// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-pci end to end without KVM: this test is the guest driver. It
 * finds a virtio-blk function through PCI config space, sizes its BAR,
 * programs MSI-X, negotiates features, sets up a queue in fake guest RAM
 * and does I/O against a temporary image through the real event loop.
 * Then it misbehaves and checks the device fails safe (NEEDS_RESET plus a
 * config interrupt) and recovers after a reset. Skips without io_uring.
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
#include <semaphore.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_net.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio_blk.h"
#include "devices/virtio/virtio_net.h"
#include "devices/virtio/virtio_pci.h"
#include "devices/virtio/virtio_rng.h"

#define WINDOW 0xe0000000ull
#define RAM_SIZE (1u << 20)
#define DISK_SIZE (1u << 20)
#define QSIZE 16
#define DESC 0x10000ull
#define AVAIL 0x11000ull
#define USED 0x12000ull
#define HDR 0x20000ull
#define DATA 0x21000ull
#define STATUS 0x23000ull
#define MSI_ADDR 0xfee00000u

static uint8_t *ram;

struct fixture {
	struct guest_memory mem;
	struct event_loop *loop;
	struct pci_host *host;
	struct virtio_host vhost;
	struct virtio_device *vdev;
	struct virtio_pci vp;
	char path[64];
	int peer; /* virtio-net: the "tap"'s other end, or -1 */
	uint64_t bar;
	uint16_t avail_idx, used_seen;
	sem_t msi;
	uint32_t last_msi_data;
	int msi_count;
};

static struct fixture *fx;

/* A fake KVM_IOEVENTFD: which (address, eventfd) pairs are registered. */
struct fake_ioeventfds {
	uint64_t addr[16];
	int fd[16];
	unsigned int nr;
	unsigned int bad_deassigns;
};
static struct fake_ioeventfds ioev;
static bool with_ioeventfds;

static int fake_ioeventfd(void *ctx, uint64_t addr, uint32_t len,
			  bool datamatch, uint64_t data, int fd, bool assign)
{
	for (unsigned int i = 0; i < ioev.nr; i++) {
		if (ioev.addr[i] != addr)
			continue;
		if (assign)
			return -EEXIST;
		ioev.addr[i] = ioev.addr[--ioev.nr];
		ioev.fd[i] = ioev.fd[ioev.nr];
		return 0;
	}
	if (!assign) {
		ioev.bad_deassigns++;
		return -ENOENT;
	}
	assert_true(ioev.nr < 16);
	ioev.addr[ioev.nr] = addr;
	ioev.fd[ioev.nr++] = fd;
	return 0;
}

/* Whether the only registered notify ioeventfd is at ADDR. */
static bool only_ioeventfd_at(uint64_t addr)
{
	return ioev.nr == 1 && ioev.addr[0] == addr;
}

static int record_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct fixture *f = ctx;

	assert_int_equal(addr, MSI_ADDR);
	f->last_msi_data = data;
	f->msi_count++;
	sem_post(&f->msi);
	return 0;
}

static void wait_msi(struct fixture *f, uint32_t data)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 30;
	assert_int_equal(sem_timedwait(&f->msi, &deadline), 0);
	assert_int_equal(f->last_msi_data, data);
}

/* ---- the "driver": config space and BAR accessors ---- */

static uint32_t cfg_read(struct fixture *f, uint32_t off, uint32_t len)
{
	uint32_t v = 0;

	pci_host_config_read(f->host, (unsigned int)f->vp.pdev.slot, off,
			     (uint8_t *)&v, len);
	return v;
}

static void cfg_write(struct fixture *f, uint32_t off, uint32_t v, uint32_t len)
{
	pci_host_config_write(f->host, (unsigned int)f->vp.pdev.slot, off,
			      (uint8_t *)&v, len);
}

static uint64_t bar_read(struct fixture *f, uint64_t off, uint32_t len)
{
	uint64_t v = 0;

	pci_host_mmio_ops.read(f->host, f->bar + off - WINDOW, (uint8_t *)&v,
			       len);
	return v;
}

static void bar_write(struct fixture *f, uint64_t off, uint64_t v, uint32_t len)
{
	pci_host_mmio_ops.write(f->host, f->bar + off - WINDOW, (uint8_t *)&v,
				len);
}

static uint8_t status(struct fixture *f)
{
	return (uint8_t)bar_read(f, VIRTIO_PCI_COMMON_STATUS, 1);
}

static void set_status(struct fixture *f, uint8_t s)
{
	bar_write(f, VIRTIO_PCI_COMMON_STATUS, s, 1);
}

static struct fixture *make(struct virtio_device *(*create)(struct fixture *))
{
	struct fixture *f = calloc(1, sizeof(*f));
	int r;

	assert_non_null(f);
	fx = f;
	f->peer = -1;
	memset(ram, 0, RAM_SIZE);
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, ram), 0);
	r = event_loop_create(&f->loop, 64);
	assert_int_equal(r, 0);
	sem_init(&f->msi, 0, 0);
	f->host = pci_host_create(WINDOW, 0x10000000);
	f->vhost = (struct virtio_host){
		.mem = &f->mem,
		.loop = f->loop,
		.msi = { .send = record_msi, .ctx = f },
	};
	if (with_ioeventfds) {
		memset(&ioev, 0, sizeof(ioev));
		f->vhost.ioeventfd = fake_ioeventfd;
	}
	f->vdev = create(f);
	assert_non_null(f->vdev);
	assert_int_equal(virtio_device_attach_loop(f->vdev, f->loop), 0);
	assert_int_equal(virtio_pci_init(&f->vp, f->vdev, f->host, &f->vhost),
			 0);
	f->bar = pci_device_bar_addr(&f->vp.pdev, VIRTIO_PCI_BAR);
	assert_int_equal(event_loop_start(f->loop, "test-virtio"), 0);
	return f;
}

static struct virtio_device *create_blk(struct fixture *f)
{
	int fd;

	snprintf(f->path, sizeof(f->path), "/tmp/hvm-blk-XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	return virtio_blk_create(&f->vhost, f->path, false, false, true, 0);
}

static int setup_blk(void **state)
{
	*state = make(create_blk);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	event_loop_destroy(f->loop);
	f->vdev->ops->destroy(f->vdev);
	pci_host_destroy(f->host);
	if (f->path[0])
		unlink(f->path);
	if (f->peer >= 0)
		close(f->peer);
	sem_destroy(&f->msi);
	free(f);
	return 0;
}

/* Find the virtio capability of TYPE; returns its config offset. */
static uint8_t find_virtio_cap(struct fixture *f, uint8_t type)
{
	uint8_t pos = (uint8_t)cfg_read(f, PCI_CAPABILITY_LIST, 1);

	for (int guard = 0; pos && guard < 48; guard++) {
		if (cfg_read(f, pos, 1) == PCI_CAP_ID_VNDR &&
		    cfg_read(f, pos + 3u, 1) == type)
			return pos;
		pos = (uint8_t)cfg_read(f, pos + 1u, 1);
	}
	return 0;
}

static uint8_t find_cap(struct fixture *f, uint8_t id)
{
	uint8_t pos = (uint8_t)cfg_read(f, PCI_CAPABILITY_LIST, 1);

	for (int guard = 0; pos && guard < 48; guard++) {
		if (cfg_read(f, pos, 1) == id)
			return pos;
		pos = (uint8_t)cfg_read(f, pos + 1u, 1);
	}
	return 0;
}

/* Enable MSI-X with vector 0 = config (data 0x40), 1 = queue (0x41). */
static void setup_msix(struct fixture *f)
{
	uint8_t cap = find_cap(f, PCI_CAP_ID_MSIX);
	uint32_t table = cfg_read(f, cap + 4u, 4);

	assert_int_equal(table & 7, VIRTIO_PCI_BAR);
	for (uint32_t v = 0; v < 2; v++) {
		uint64_t e = (table & ~7u) + 16 * v;

		bar_write(f, e, MSI_ADDR, 4);
		bar_write(f, e + 4, 0, 4);
		bar_write(f, e + 8, 0x40 + v, 4);
		bar_write(f, e + 12, 0, 4); /* unmask */
	}
	cfg_write(f, cap + 2u, 0x8000 | (cfg_read(f, cap + 2u, 2) & 0x7ff), 2);
}

static void driver_init(struct fixture *f, uint64_t features)
{
	/* Fresh rings before the queue is enabled, as a driver has them. */
	f->avail_idx = 0;
	f->used_seen = 0;
	memset(ram + DESC, 0, 0x3000);
	set_status(f, 0);
	assert_int_equal(status(f), 0);
	set_status(f, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	set_status(f, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	bar_write(f, VIRTIO_PCI_COMMON_GFSELECT, 0, 4);
	bar_write(f, VIRTIO_PCI_COMMON_GF, (uint32_t)features, 4);
	bar_write(f, VIRTIO_PCI_COMMON_GFSELECT, 1, 4);
	bar_write(f, VIRTIO_PCI_COMMON_GF, (uint32_t)(features >> 32), 4);
	set_status(f, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			      VIRTIO_CONFIG_S_FEATURES_OK);
	assert_true(status(f) & VIRTIO_CONFIG_S_FEATURES_OK);
	bar_write(f, VIRTIO_PCI_COMMON_MSIX, 0, 2);
	bar_write(f, VIRTIO_PCI_COMMON_Q_SELECT, 0, 2);
	bar_write(f, VIRTIO_PCI_COMMON_Q_SIZE, QSIZE, 2);
	bar_write(f, VIRTIO_PCI_COMMON_Q_MSIX, 1, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_Q_MSIX, 2), 1);
	/* 64-bit fields as Linux writes them: two 32-bit halves. */
	bar_write(f, VIRTIO_PCI_COMMON_Q_DESCLO, DESC, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_DESCHI, 0, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_AVAILLO, AVAIL, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_AVAILHI, 0, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_USEDLO, USED, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_USEDHI, 0, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_ENABLE, 1, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_Q_ENABLE, 2), 1);
	set_status(f, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			      VIRTIO_CONFIG_S_FEATURES_OK |
			      VIRTIO_CONFIG_S_DRIVER_OK);
	assert_int_equal(status(f) & VIRTIO_CONFIG_S_NEEDS_RESET, 0);
}

static void set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct vring_desc d = { addr, len, flags, next };

	memcpy(ram + DESC + 16 * i, &d, sizeof(d));
}

static void kick(struct fixture *f, uint16_t head)
{
	uint16_t idx = f->avail_idx;

	memcpy(ram + AVAIL + 4 + 2 * (idx % QSIZE), &head, 2);
	f->avail_idx++;
	__atomic_store_n((uint16_t *)(ram + AVAIL + 2), f->avail_idx,
			 __ATOMIC_RELEASE);
	bar_write(f, VIRTIO_PCI_NOTIFY_OFF + 0, 0, 2);
}

/* Wait for the next used element; returns its written length. */
static uint32_t wait_used(struct fixture *f)
{
	uint32_t len;

	wait_msi(f, 0x41);
	assert_int_equal(*(volatile uint16_t *)(ram + USED + 2),
			 (uint16_t)(f->used_seen + 1));
	memcpy(&len, ram + USED + 4 + 8 * (f->used_seen % QSIZE) + 4, 4);
	f->used_seen++;
	return len;
}

/* One blk request: header, optional data, status. */
static uint32_t blk_request(struct fixture *f, uint32_t type, uint64_t sector,
			    uint32_t data_len, bool data_writable)
{
	struct virtio_blk_outhdr hdr = { .type = type, .sector = sector };

	memcpy(ram + HDR, &hdr, sizeof(hdr));
	ram[STATUS] = 0xee;
	set_desc(0, HDR, sizeof(hdr), VRING_DESC_F_NEXT, 1);
	if (data_len) {
		set_desc(1, DATA, data_len,
			 VRING_DESC_F_NEXT |
				 (data_writable ? VRING_DESC_F_WRITE : 0),
			 2);
		set_desc(2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	} else {
		set_desc(1, STATUS, 1, VRING_DESC_F_WRITE, 0);
	}
	kick(f, 0);
	return wait_used(f);
}

#define F_V1 (1ull << VIRTIO_F_VERSION_1)

static void test_config_space(void **state)
{
	struct fixture *f = *state;
	uint32_t bar_lo;

	assert_int_equal(cfg_read(f, PCI_VENDOR_ID, 2), 0x1af4);
	assert_int_equal(cfg_read(f, PCI_DEVICE_ID, 2), 0x1042);
	assert_true(cfg_read(f, PCI_REVISION_ID, 1) >= 1);
	assert_int_equal(cfg_read(f, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST,
			 PCI_STATUS_CAP_LIST);
	assert_true(find_virtio_cap(f, VIRTIO_PCI_CAP_COMMON_CFG));
	assert_true(find_virtio_cap(f, VIRTIO_PCI_CAP_NOTIFY_CFG));
	assert_true(find_virtio_cap(f, VIRTIO_PCI_CAP_ISR_CFG));
	assert_true(find_virtio_cap(f, VIRTIO_PCI_CAP_DEVICE_CFG));
	assert_int_equal(
		cfg_read(f, find_virtio_cap(f, VIRTIO_PCI_CAP_NOTIFY_CFG) + 16u,
			 4),
		VIRTIO_PCI_NOTIFY_MULT);
	/* BAR sizing: all ones reads back the size mask and the type. */
	bar_lo = cfg_read(f, PCI_BASE_ADDRESS_0, 4);
	assert_int_equal(bar_lo & 0xf, PCI_BASE_ADDRESS_MEM_TYPE_64);
	assert_true((bar_lo & ~0xfu) >= WINDOW);
	cfg_write(f, PCI_BASE_ADDRESS_0, 0xffffffff, 4);
	assert_int_equal(cfg_read(f, PCI_BASE_ADDRESS_0, 4),
			 (uint32_t) ~(VIRTIO_PCI_BAR_SIZE - 1) |
				 PCI_BASE_ADDRESS_MEM_TYPE_64);
	/* While moved away the BAR decodes nothing. */
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_NUMQ, 2), 0xffff);
	cfg_write(f, PCI_BASE_ADDRESS_0, bar_lo, 4);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_NUMQ, 2), 1);
	/* IDs are read-only. */
	cfg_write(f, PCI_VENDOR_ID, 0x1234, 2);
	assert_int_equal(cfg_read(f, PCI_VENDOR_ID, 2), 0x1af4);
	/* Memory decode off: the BAR goes quiet. */
	cfg_write(f, PCI_COMMAND, 0, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_NUMQ, 2), 0xffff);
	cfg_write(f, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	/* The PCI_CFG window reaches the BAR through config space. */
	{
		uint8_t cap = find_virtio_cap(f, VIRTIO_PCI_CAP_PCI_CFG);

		assert_true(cap);
		cfg_write(f, cap + 4u, VIRTIO_PCI_BAR, 1);
		cfg_write(f, cap + 8u, VIRTIO_PCI_COMMON_NUMQ, 4);
		cfg_write(f, cap + 12u, 2, 4);
		assert_int_equal(cfg_read(f, cap + 16u, 2), 1);
		cfg_write(f, cap + 8u, VIRTIO_PCI_COMMON_STATUS, 4);
		cfg_write(f, cap + 12u, 1, 4);
		cfg_write(f, cap + 16u, VIRTIO_CONFIG_S_ACKNOWLEDGE, 1);
		assert_int_equal(status(f), VIRTIO_CONFIG_S_ACKNOWLEDGE);
		/* Windows the spec forbids do nothing. */
		cfg_write(f, cap + 12u, 3, 4); /* length 3 */
		cfg_write(f, cap + 16u, 0, 1);
		assert_int_equal(status(f), VIRTIO_CONFIG_S_ACKNOWLEDGE);
		cfg_write(f, cap + 12u, 4, 4);
		cfg_write(f, cap + 8u, VIRTIO_PCI_BAR_SIZE - 2, 4); /* past */
		cfg_write(f, cap + 16u, 0, 4);
		cfg_write(f, cap + 8u, 0xfffffffc, 4); /* wraps */
		cfg_write(f, cap + 16u, 0, 4);
		cfg_write(f, cap + 4u, 3, 1); /* another BAR */
		cfg_write(f, cap + 8u, VIRTIO_PCI_COMMON_STATUS, 4);
		cfg_write(f, cap + 12u, 1, 4);
		cfg_write(f, cap + 16u, 0, 1);
		assert_int_equal(status(f), VIRTIO_CONFIG_S_ACKNOWLEDGE);
		/* The cap's type and id stay read-only. */
		cfg_write(f, cap + 3u, 0, 1);
		assert_int_equal(cfg_read(f, cap + 3u, 1),
				 VIRTIO_PCI_CAP_PCI_CFG);
		set_status(f, 0);
	}
	/* Accesses beyond config space or to empty slots read all-ones. */
	assert_int_equal(cfg_read(f, 0xfe, 4), 0xffffffff);
	{
		uint32_t v = 0;

		pci_host_config_read(f->host, 31, 0, (uint8_t *)&v, 4);
		assert_int_equal(v, 0xffffffff);
	}
}

static void test_blk_io(void **state)
{
	struct fixture *f = *state;
	uint8_t back[512];
	int fd;

	setup_msix(f);
	driver_init(f, F_V1 | (1ull << VIRTIO_BLK_F_FLUSH));
	/* capacity in the device config */
	assert_int_equal(bar_read(f, VIRTIO_PCI_DEVCFG_OFF, 8),
			 DISK_SIZE / 512);

	memset(ram + DATA, 0xa5, 1024);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_OUT, 3, 1024, false), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	fd = open(f->path, O_RDONLY);
	assert_int_equal(pread(fd, back, sizeof(back), 3 * 512 + 512),
			 sizeof(back));
	close(fd);
	for (size_t i = 0; i < sizeof(back); i++)
		assert_int_equal(back[i], 0xa5);

	memset(ram + DATA, 0, 1024);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_IN, 3, 512, true), 513);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	assert_int_equal(ram[DATA + 511], 0xa5);

	assert_int_equal(blk_request(f, VIRTIO_BLK_T_GET_ID, 0, 20, true), 21);
	assert_string_equal((char *)ram + DATA, "hintvm-disk0");

	/* Past the end, a partial sector, a bad type: IOERR / UNSUPP. */
	blk_request(f, VIRTIO_BLK_T_IN, DISK_SIZE / 512, 512, true);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	blk_request(f, VIRTIO_BLK_T_IN, UINT64_MAX / 256, 512, true);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	blk_request(f, VIRTIO_BLK_T_OUT, 0, 100, false);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	blk_request(f, 77, 0, 0, false);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_UNSUPP);
	/* A read whose data buffer is device-readable is refused. */
	blk_request(f, VIRTIO_BLK_T_IN, 0, 512, false);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	assert_false(status(f) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void test_hostile_chain_needs_reset(void **state)
{
	struct fixture *f = *state;

	setup_msix(f);
	driver_init(f, F_V1);
	/* The data buffer is the device's own BAR, not RAM. */
	set_desc(0, HDR, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, f->bar, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	kick(f, 0);
	wait_msi(f, 0x40); /* config change: NEEDS_RESET */
	assert_true(status(f) & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_int_equal(*(volatile uint16_t *)(ram + USED + 2), 0);
	/* Reading the ISR acknowledges the config interrupt. */
	assert_int_equal(bar_read(f, VIRTIO_PCI_ISR_OFF, 1) &
				 VIRTIO_PCI_ISR_CONFIG,
			 VIRTIO_PCI_ISR_CONFIG);
	assert_int_equal(bar_read(f, VIRTIO_PCI_ISR_OFF, 1), 0);

	/* After a reset the device works again. */
	driver_init(f, F_V1);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_IN, 0, 512, true), 513);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
}

static void test_bad_ring_address_needs_reset(void **state)
{
	struct fixture *f = *state;

	setup_msix(f);
	set_status(f, 0);
	set_status(f, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	bar_write(f, VIRTIO_PCI_COMMON_GFSELECT, 1, 4);
	bar_write(f, VIRTIO_PCI_COMMON_GF, 1, 4);
	set_status(f, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			      VIRTIO_CONFIG_S_FEATURES_OK);
	bar_write(f, VIRTIO_PCI_COMMON_Q_SELECT, 0, 2);
	/* A size that is not a power of two does not stick. */
	bar_write(f, VIRTIO_PCI_COMMON_Q_SIZE, 12, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_Q_SIZE, 2),
			 VIRTIO_BLK_QUEUE_SIZE);
	bar_write(f, VIRTIO_PCI_COMMON_Q_DESCLO, RAM_SIZE - 16, 4);
	bar_write(f, VIRTIO_PCI_COMMON_Q_ENABLE, 1, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
	assert_true(status(f) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* Selecting a queue that does not exist reads size 0. */
	bar_write(f, VIRTIO_PCI_COMMON_Q_SELECT, 5, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_Q_SIZE, 2), 0);
	bar_write(f, VIRTIO_PCI_COMMON_Q_ENABLE, 1, 2); /* ignored */
	/* A vector beyond the table reads back as NO_VECTOR. */
	bar_write(f, VIRTIO_PCI_COMMON_MSIX, 9, 2);
	assert_int_equal(bar_read(f, VIRTIO_PCI_COMMON_MSIX, 2),
			 VIRTIO_MSI_NO_VECTOR);
	/* Odd widths and offsets in every region are harmless. */
	for (uint64_t off = 0; off < VIRTIO_PCI_BAR_SIZE; off += 0x7f) {
		bar_write(f, off, 0xffffffffffffffffull, 8);
		bar_read(f, off, 3);
	}
}

static void test_msix_masking(void **state)
{
	struct fixture *f = *state;
	uint8_t cap = find_cap(f, PCI_CAP_ID_MSIX);
	uint32_t table, pba;

	setup_msix(f);
	driver_init(f, F_V1);
	table = cfg_read(f, cap + 4u, 4) & ~7u;
	pba = cfg_read(f, cap + 8u, 4) & ~7u;
	bar_write(f, table + 16 + 12, 1, 4); /* mask the queue vector */
	set_desc(0, HDR, 16, VRING_DESC_F_NEXT, 1);
	memset(ram + HDR, 0, 16);
	set_desc(1, STATUS, 1, VRING_DESC_F_WRITE, 0);
	*(uint32_t *)(ram + HDR) = VIRTIO_BLK_T_FLUSH;
	kick(f, 0);
	/* Wait for completion without an interrupt, then see it pending. */
	for (int i = 0; i < 3000 && *(volatile uint16_t *)(ram + USED + 2) == 0;
	     i++)
		usleep(1000);
	for (int i = 0; i < 3000 && !(bar_read(f, pba, 8) & 2); i++)
		usleep(1000);
	assert_int_equal(bar_read(f, pba, 8), 2);
	assert_int_equal(f->msi_count, 0);
	bar_write(f, table + 16 + 12, 0, 4); /* unmask: delivered now */
	wait_msi(f, 0x41);
	assert_int_equal(bar_read(f, pba, 8), 0);
}

static struct virtio_device *create_ro_blk(struct fixture *f)
{
	int fd;

	snprintf(f->path, sizeof(f->path), "/tmp/hvm-blk-XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	return virtio_blk_create(&f->vhost, f->path, true, false, true, 0);
}

static int setup_ro_blk(void **state)
{
	*state = make(create_ro_blk);
	return 0;
}

static void test_readonly_refuses_writes(void **state)
{
	struct fixture *f = *state;

	setup_msix(f);
	assert_true(bar_read(f, VIRTIO_PCI_COMMON_DF, 4) &
		    (1u << VIRTIO_BLK_F_RO));
	driver_init(f, F_V1 | (1ull << VIRTIO_BLK_F_RO));
	memset(ram + DATA, 0x5a, 512);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_OUT, 0, 512, false), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	blk_request(f, VIRTIO_BLK_T_DISCARD, 0, 0, false);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_IN, 0, 512, true), 513);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	assert_int_equal(ram[DATA], 0); /* the image is still zeros */
}

static struct virtio_device *create_rng(struct fixture *f)
{
	return virtio_rng_create(&f->vhost);
}

static int setup_rng(void **state)
{
	*state = make(create_rng);
	return 0;
}

static void test_rng(void **state)
{
	struct fixture *f = *state;
	uint32_t len;
	int nonzero = 0;

	setup_msix(f);
	assert_int_equal(cfg_read(f, PCI_DEVICE_ID, 2), 0x1044);
	driver_init(f, F_V1);
	set_desc(0, DATA, 64, VRING_DESC_F_WRITE, 0);
	kick(f, 0);
	len = wait_used(f);
	assert_int_equal(len, 64);
	for (int i = 0; i < 64; i++)
		nonzero += ram[DATA + i] != 0;
	assert_true(nonzero > 32);
}

static int setup_rng_ioeventfd(void **state)
{
	with_ioeventfds = true;
	*state = make(create_rng);
	with_ioeventfds = false;
	return 0;
}

/*
 * The guest moves the BAR, sizes it, turns memory decode off and on: the
 * queue-notify ioeventfd is always where the BAR decodes and nowhere else,
 * so a write at the old address kicks nothing.
 */
static void test_notify_ioeventfd_follows_the_bar(void **state)
{
	struct fixture *f = *state;
	uint32_t bar_reg = PCI_BASE_ADDRESS_0 + 4 * VIRTIO_PCI_BAR;
	uint64_t moved = f->bar + 0x100000;

	assert_true(only_ioeventfd_at(f->bar + VIRTIO_PCI_NOTIFY_OFF));
	/* Move it (64-bit BAR: low dword, high dword). */
	cfg_write(f, bar_reg, (uint32_t)moved | PCI_BASE_ADDRESS_MEM_TYPE_64,
		  4);
	cfg_write(f, bar_reg + 4, (uint32_t)(moved >> 32), 4);
	assert_int_equal(pci_device_bar_addr(&f->vp.pdev, VIRTIO_PCI_BAR),
			 moved);
	assert_true(only_ioeventfd_at(moved + VIRTIO_PCI_NOTIFY_OFF));
	/* Sizing: all-ones points outside the window, then back. */
	cfg_write(f, bar_reg, 0xffffffff, 4);
	assert_int_equal(ioev.nr, 0);
	cfg_write(f, bar_reg, (uint32_t)moved | PCI_BASE_ADDRESS_MEM_TYPE_64,
		  4);
	assert_true(only_ioeventfd_at(moved + VIRTIO_PCI_NOTIFY_OFF));
	/* No memory decode, no kicks by address. */
	cfg_write(f, PCI_COMMAND, 0, 2);
	assert_int_equal(ioev.nr, 0);
	cfg_write(f, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
	assert_true(only_ioeventfd_at(moved + VIRTIO_PCI_NOTIFY_OFF));
	assert_int_equal(ioev.fd[0], f->vdev->kicks[0].fd);
	assert_int_equal(ioev.bad_deassigns, 0);
}

/* ---- snapshots: the device's, the transport's and the disk's state ---- */

struct saved {
	uint8_t dev[sizeof(struct virtio_device_state) +
		    sizeof(struct virtq_state)];
	struct virtio_pci_state pci;
	struct virtio_blk_state blk;
};

static void save_all(struct fixture *f, struct saved *s)
{
	virtio_device_freeze(f->vdev);
	pthread_mutex_lock(&f->vdev->lock);
	assert_int_equal(virtio_device_state_size(f->vdev), sizeof(s->dev));
	assert_int_equal(virtio_blk_in_flight(f->vdev), 0);
	virtio_device_save(f->vdev, s->dev);
	virtio_pci_save(&f->vp, &s->pci);
	virtio_blk_save(f->vdev, &s->blk);
	pthread_mutex_unlock(&f->vdev->lock);
}

/* 0 or the load's error, with F's device locked as a restore has it. */
static int load_all(struct fixture *f, const struct saved *s)
{
	int r;

	pthread_mutex_lock(&f->vdev->lock);
	r = virtio_device_load(f->vdev, s->dev, sizeof(s->dev));
	if (r == 0)
		r = virtio_pci_load(&f->vp, &s->pci);
	if (r == 0)
		r = virtio_blk_load(f->vdev, &s->blk);
	pthread_mutex_unlock(&f->vdev->lock);
	return r;
}

/* EVENT_IDX: the driver wants an interrupt for the next used entry. */
static void want_next(struct fixture *f)
{
	uint16_t e = f->used_seen;

	memcpy(ram + AVAIL + 4 + 2 * QSIZE, &e, 2);
}

static void test_snapshot_round_trip(void **state)
{
	struct fixture *f = *state, *g;
	uint8_t *image = malloc(RAM_SIZE);
	struct saved s;

	assert_non_null(image);
	setup_msix(f);
	driver_init(f, F_V1 | (1ull << VIRTIO_BLK_F_FLUSH) |
			       (1ull << VIRTIO_RING_F_EVENT_IDX));
	memset(ram + DATA, 0x5a, 512);
	want_next(f);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_OUT, 1, 512, false), 1);
	want_next(f);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_OUT, 2, 512, false), 1);
	save_all(f, &s);
	memcpy(image, ram, RAM_SIZE); /* the snapshot's memory file */

	/* A restore: a fresh device on a copy of the image, the RAM back. */
	g = make(create_blk);
	memcpy(ram, image, RAM_SIZE);
	assert_int_equal(load_all(g, &s), 0);
	assert_int_equal(g->vdev->status, f->vdev->status);
	assert_int_equal(g->vdev->vqs[0].used_idx, 2);
	assert_true(g->vdev->vqs[0].event_idx);
	assert_int_equal(g->vp.queue_vectors[0], 1);
	assert_true(g->vp.msix.enabled);
	/* The driver goes on where it was: the third request, vector 0x41. */
	g->avail_idx = f->avail_idx;
	g->used_seen = f->used_seen;
	memset(ram + DATA, 0x77, 512);
	want_next(g);
	assert_int_equal(blk_request(g, VIRTIO_BLK_T_OUT, 3, 512, false), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	want_next(g);
	assert_int_equal(blk_request(g, VIRTIO_BLK_T_IN, 3, 512, true), 513);
	assert_int_equal(ram[DATA + 100], 0x77);
	teardown((void **)&g);
	virtio_device_thaw(f->vdev);
	free(image);
}

/* Each field a restore must not take, refused with what and why. */
static void test_snapshot_refusals(void **state)
{
	struct fixture *f = *state, *g;
	struct saved s, bad;
	struct virtio_device_state h;
	struct virtq_state q;

	setup_msix(f);
	driver_init(f, F_V1);
	assert_int_equal(blk_request(f, VIRTIO_BLK_T_GET_ID, 0, 20, true), 21);
	save_all(f, &s);
	g = make(create_blk);

	bad = s;
	memcpy(&q, bad.dev + sizeof(h), sizeof(q));
	q.last_avail++;
	memcpy(bad.dev + sizeof(h), &q, sizeof(q));
	assert_int_equal(load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-blk0: queue 0: 1 requests in flight (last available index 2, used index 1); a snapshot holds none");

	bad = s;
	memcpy(&q, bad.dev + sizeof(h), sizeof(q));
	q.size = 3;
	memcpy(bad.dev + sizeof(h), &q, sizeof(q));
	assert_int_equal(load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-blk0: queue 0 has size 3; expected a power of two up to 256");

	bad = s;
	memcpy(&h, bad.dev, sizeof(h));
	h.driver_features |= 1ull << 40;
	memcpy(bad.dev, &h, sizeof(h));
	assert_int_equal(load_all(g, &bad), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "did not offer"));

	bad = s;
	bad.pci.cfg[PCI_VENDOR_ID] ^= 1;
	assert_int_equal(load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-blk0: PCI config byte 0x00 is 0xf5; this build's is 0xf4 (bits 0xff are read-only)");

	bad = s;
	bad.pci.queue_vectors[0] = 9;
	assert_int_equal(load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-blk0: queue 0 has vector 9; it has 1 queues and 2 vectors");

	bad = s;
	bad.blk.size += 512;
	assert_int_equal(load_all(g, &bad), -EINVAL);
	assert_non_null(strstr(hvm_error_message(),
			       "is 1048576 bytes, but the snapshot's"));
	assert_non_null(strstr(
		hvm_error_message(),
		"was 1049088 bytes: restore with an image of that size"));

	/* The snapshot's own image, written since: refused. */
	{
		struct stat st;

		assert_int_equal(stat(g->path, &st), 0);
		bad = s;
		bad.blk.dev = st.st_dev;
		bad.blk.ino = st.st_ino;
		bad.blk.mtime_s = 1;
		assert_int_equal(load_all(g, &bad), -EINVAL);
		assert_non_null(strstr(hvm_error_message(),
				       "was modified after the snapshot"));
	}
	teardown((void **)&g);
	virtio_device_thaw(f->vdev);
}

/*
 * A device the driver broke (NEEDS_RESET, its bad chain taken and never
 * answered) is saved and restored as it is; the driver's reset then
 * makes the restored device work.
 */
static void test_snapshot_needs_reset(void **state)
{
	struct fixture *f = *state, *g;
	uint8_t *image = malloc(RAM_SIZE);
	struct saved s;

	assert_non_null(image);
	setup_msix(f);
	driver_init(f, F_V1);
	set_desc(0, HDR, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, f->bar, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	kick(f, 0);
	wait_msi(f, 0x40);
	save_all(f, &s);
	memcpy(image, ram, RAM_SIZE);
	g = make(create_blk);
	memcpy(ram, image, RAM_SIZE);
	assert_int_equal(load_all(g, &s), 0);
	assert_true(status(g) & VIRTIO_CONFIG_S_NEEDS_RESET);
	driver_init(g, F_V1);
	assert_int_equal(blk_request(g, VIRTIO_BLK_T_IN, 0, 512, true), 513);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	teardown((void **)&g);
	virtio_device_thaw(f->vdev);
	free(image);
}

/* A kick while frozen is held, and served on thaw. */
static void test_frozen_kick_waits(void **state)
{
	struct fixture *f = *state;
	struct virtio_blk_outhdr hdr = { .type = VIRTIO_BLK_T_GET_ID };

	setup_msix(f);
	driver_init(f, F_V1);
	virtio_device_freeze(f->vdev);
	memcpy(ram + HDR, &hdr, sizeof(hdr));
	set_desc(0, HDR, sizeof(hdr), VRING_DESC_F_NEXT, 1);
	set_desc(1, DATA, 20, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	kick(f, 0);
	usleep(50000);
	assert_int_equal(*(volatile uint16_t *)(ram + USED + 2), 0);
	virtio_device_thaw(f->vdev);
	assert_int_equal(wait_used(f), 21);
}

/* ---- snapshots of virtio-net: receive buffers, the "tap", the MAC ---- */

static const uint8_t net_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

/* A datagram socket in place of the tap: one header + frame per packet. */
static struct virtio_device *create_net(struct fixture *f)
{
	int fds[2];

	assert_int_equal(socketpair(AF_UNIX,
				    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				    0, fds),
			 0);
	f->peer = fds[1];
	return virtio_net_create_fd(&f->vhost, fds[0], net_mac, 0);
}

static int setup_net(void **state)
{
	*state = make(create_net);
	return 0;
}

/* Queue 0 is receive: the driver posts buffer I (2 KiB at DATA + 2 KiB * I). */
static void post_rx(struct fixture *f, uint16_t i)
{
	set_desc(i, DATA + 2048ull * i, 2048, VRING_DESC_F_WRITE, 0);
	kick(f, i);
}

/* The "tap" delivers a 12-byte virtio-net header and a 60-byte frame. */
static void tap_send(struct fixture *f, uint8_t fill)
{
	uint8_t pkt[72];

	memset(pkt, 0, 12);
	memset(pkt + 12, fill, sizeof(pkt) - 12);
	assert_int_equal(write(f->peer, pkt, sizeof(pkt)), sizeof(pkt));
}

struct net_saved {
	uint8_t dev[sizeof(struct virtio_device_state) +
		    2 * sizeof(struct virtq_state)];
	struct virtio_pci_state pci;
	struct virtio_net_state net;
};

static void net_save_all(struct fixture *f, struct net_saved *s)
{
	virtio_device_freeze(f->vdev);
	pthread_mutex_lock(&f->vdev->lock);
	assert_int_equal(virtio_device_state_size(f->vdev), sizeof(s->dev));
	assert_int_equal(virtio_net_in_flight(f->vdev), 0);
	virtio_device_save(f->vdev, s->dev);
	virtio_pci_save(&f->vp, &s->pci);
	virtio_net_save(f->vdev, &s->net);
	pthread_mutex_unlock(&f->vdev->lock);
}

static int net_load_all(struct fixture *f, const struct net_saved *s)
{
	int r;

	pthread_mutex_lock(&f->vdev->lock);
	r = virtio_device_load(f->vdev, s->dev, sizeof(s->dev));
	if (r == 0)
		r = virtio_pci_load(&f->vp, &s->pci);
	if (r == 0)
		r = virtio_net_load(f->vdev, &s->net);
	pthread_mutex_unlock(&f->vdev->lock);
	return r;
}

/*
 * A driver's receive buffers wait in the avail ring until frames come;
 * a snapshot holds them there (none is popped and kept), a frame that
 * arrives while frozen stays in the tap (to the snapshotted VM on thaw),
 * and the restored device fills the buffer the driver still has posted
 * with the first frame of its own tap.
 */
static void test_net_snapshot_round_trip(void **state)
{
	struct fixture *f = *state, *g;
	uint8_t *image = malloc(RAM_SIZE);
	struct net_saved s;

	assert_non_null(image);
	setup_msix(f);
	driver_init(f, F_V1 | (1ull << VIRTIO_NET_F_MAC));
	post_rx(f, 0);
	post_rx(f, 1);
	tap_send(f, 0xa1);
	assert_int_equal(wait_used(f), 72);
	assert_int_equal(ram[DATA + 12], 0xa1);

	virtio_device_freeze(f->vdev);
	tap_send(f, 0xb2); /* while frozen: nothing moves */
	usleep(50000);
	assert_int_equal(*(volatile uint16_t *)(ram + USED + 2), 1);
	net_save_all(f, &s);
	memcpy(image, ram, RAM_SIZE); /* the snapshot's memory file */
	assert_int_equal(memcmp(s.net.mac, net_mac, 6), 0);
	assert_string_equal(s.net.tap, "(fd)");
	{
		struct virtq_state q;

		memcpy(&q, s.dev + sizeof(struct virtio_device_state),
		       sizeof(q));
		assert_int_equal(q.last_avail, 1); /* buffer 1 still posted */
		assert_int_equal(q.used_idx, 1);
	}
	/* The snapshotted VM runs on: the held frame goes to buffer 1. */
	virtio_device_thaw(f->vdev);
	assert_int_equal(wait_used(f), 72);
	assert_int_equal(ram[DATA + 2048 + 12], 0xb2);

	/* A restore: a fresh device on another "tap", the RAM back. */
	g = make(create_net);
	memcpy(ram, image, RAM_SIZE);
	assert_int_equal(net_load_all(g, &s), 0);
	g->avail_idx = 2;
	g->used_seen = 1;
	tap_send(g, 0xc3);
	virtio_device_kick(g->vdev, 0); /* as virtio_vm_restored() does */
	assert_int_equal(wait_used(g), 72);
	assert_int_equal(ram[DATA + 2048 + 12], 0xc3);
	teardown((void **)&g);
	free(image);
}

/* Another MAC, a malformed tap name, reserved bytes: refused, named. */
static void test_net_snapshot_refusals(void **state)
{
	struct fixture *f = *state, *g;
	struct net_saved s, bad;

	setup_msix(f);
	driver_init(f, F_V1 | (1ull << VIRTIO_NET_F_MAC));
	net_save_all(f, &s);
	virtio_device_thaw(f->vdev);
	g = make(create_net);

	bad = s;
	bad.net.mac[5] = 0x99;
	assert_int_equal(net_load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-net0: the MAC is 52:54:00:12:34:56, but the snapshot's was 52:54:00:12:34:99 (on tap (fd)): the restored guest keeps the MAC it read at boot; restore with --net tap=NAME,mac=52:54:00:12:34:99");

	bad = s;
	memset(bad.net.tap, 'x', sizeof(bad.net.tap));
	assert_int_equal(net_load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-net0: the snapshot's tap name is not terminated; expected 1-15 characters and a NUL");

	bad = s;
	memcpy(bad.net.tap, "a/b", 4);
	assert_int_equal(net_load_all(g, &bad), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-net0: the snapshot's tap name has byte 0x2f at 1; expected a printable interface name");

	bad = s;
	bad.net.reserved[1] = 1;
	assert_int_equal(net_load_all(g, &bad), -EINVAL);
	assert_string_equal(hvm_error_message(),
			    "virtio-net0: reserved bytes 0x0001; expected 0");

	assert_int_equal(net_load_all(g, &s), 0);
	teardown((void **)&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_config_space, setup_blk,
						teardown),
		cmocka_unit_test_setup_teardown(test_blk_io, setup_blk,
						teardown),
		cmocka_unit_test_setup_teardown(test_hostile_chain_needs_reset,
						setup_blk, teardown),
		cmocka_unit_test_setup_teardown(
			test_bad_ring_address_needs_reset, setup_blk, teardown),
		cmocka_unit_test_setup_teardown(test_msix_masking, setup_blk,
						teardown),
		cmocka_unit_test_setup_teardown(test_readonly_refuses_writes,
						setup_ro_blk, teardown),
		cmocka_unit_test_setup_teardown(test_rng, setup_rng, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_round_trip,
						setup_blk, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_refusals,
						setup_blk, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_needs_reset,
						setup_blk, teardown),
		cmocka_unit_test_setup_teardown(test_frozen_kick_waits,
						setup_blk, teardown),
		cmocka_unit_test_setup_teardown(test_net_snapshot_round_trip,
						setup_net, teardown),
		cmocka_unit_test_setup_teardown(test_net_snapshot_refusals,
						setup_net, teardown),
		cmocka_unit_test_setup_teardown(
			test_notify_ioeventfd_follows_the_bar,
			setup_rng_ioeventfd, teardown),
	};
	struct event_loop *probe;
	int ret = event_loop_create(&probe, 4);

	if (ret == -ENOSYS || ret == -EPERM) {
		printf("SKIP: io_uring is not available here (%s)\n",
		       strerror(-ret));
		return 77;
	}
	event_loop_destroy(probe);
	log_set_level(LOG_ERROR); /* the hostile tests warn on purpose */
	ram = aligned_alloc(4096, RAM_SIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
