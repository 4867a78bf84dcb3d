/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The payloads' polling virtio-blk driver (virtio_blk_poll.h). */
#include "console.h"
#include "lib.h"
#include "virtio_blk_poll.h"
#include "virtio_pci_guest.h"

#define VIRTIO_BLK_DEVICE 0x1042

/* virtio 1.x common configuration offsets */

#define BLK_F_FLUSH 9

#define QSIZE 4
#define POLL_LIMIT 50000000u

struct blk_header {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

static struct desc ring_desc[QSIZE] __attribute__((aligned(16)));
static volatile uint16_t ring_avail[3 + QSIZE] __attribute__((aligned(2)));
static volatile uint32_t ring_used[2 + 2 * QSIZE]
	__attribute__((aligned(4096)));
static struct blk_header header __attribute__((aligned(16)));
static volatile uint8_t status_byte = 0xff;

static uint64_t common, notify;
static uint16_t avail_idx;

static uint8_t status(void)
{
	return *(volatile uint8_t *)(common + STATUS);
}

/* The virtio-blk function's common and notify structures. */
static bool find_disk(void)
{
	struct virtio_pci_func f;

	if (!virtio_pci_find(VIRTIO_BLK_DEVICE, &f))
		return false;
	common = f.common;
	notify = f.notify; /* queue 0 notifies at offset 0 */
	return true;
}

bool vblk_open(void)
{
	if (!find_disk()) {
		printk("virtio-blk: none on PCI bus 0 (run hintvm with -d IMAGE)");
		return false;
	}
	mmio_write8(common + STATUS, 0);
	mmio_write8(common + STATUS, S_ACK | S_DRIVER);
	mmio_write32(common + GFSELECT, 0);
	mmio_write32(common + GF, 1u << BLK_F_FLUSH);
	mmio_write32(common + GFSELECT, 1);
	mmio_write32(common + GF, 1); /* VERSION_1 */
	mmio_write8(common + STATUS, S_ACK | S_DRIVER | S_FEATURES_OK);
	if (!(status() & S_FEATURES_OK))
		return false;
	mmio_write16(common + Q_SELECT, 0);
	mmio_write16(common + Q_SIZE, QSIZE);
	mmio_write64(common + Q_DESC, (uint64_t)ring_desc);
	mmio_write64(common + Q_AVAIL, (uint64_t)ring_avail);
	mmio_write64(common + Q_USED, (uint64_t)ring_used);
	mmio_write16(common + Q_ENABLE, 1);
	mmio_write8(common + STATUS,
		    S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK);
	return !(status() & S_NEEDS_RESET);
}

bool vblk_request(uint32_t type, uint64_t sector, void *data, uint32_t len)
{
	unsigned int n = 0;
	uint16_t want;

	header = (struct blk_header){ .type = type, .sector = sector };
	status_byte = 0xff;
	ring_desc[n] = (struct desc){ (uint64_t)&header, sizeof(header), D_NEXT,
				      (uint16_t)(n + 1) };
	n++;
	if (len) {
		ring_desc[n] = (struct desc){
			(uint64_t)data, len,
			(uint16_t)(D_NEXT | (type == VBLK_T_IN ? D_WRITE : 0)),
			(uint16_t)(n + 1)
		};
		n++;
	}
	ring_desc[n] = (struct desc){ (uint64_t)&status_byte, 1, D_WRITE, 0 };
	ring_avail[2 + avail_idx % QSIZE] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	want = (uint16_t)(avail_idx + 1);
	ring_avail[1] = want;
	avail_idx = want;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mmio_write16(notify, 0);
	for (uint32_t i = 0; i < POLL_LIMIT; i++) {
		if ((uint16_t)(__atomic_load_n(&ring_used[0],
					       __ATOMIC_ACQUIRE) >>
			       16) == want)
			return status_byte == 0;
	}
	return false;
}

uint8_t vblk_last_status(void)
{
	return status_byte;
}
