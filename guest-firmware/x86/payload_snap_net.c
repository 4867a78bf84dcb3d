/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snap-net: a NIC whose queues must survive a snapshot and restore
 * (docs/snapshot.md, tests/kvm/test_snapshot.c). Run hintvm with one
 * --net tap=T whose host side echoes (the kvm test's AF_PACKET thread):
 * a frame of ethertype 0x88b5 holding "HVMSNAPN" and a sequence number
 * comes back as ethertype 0x88b6 holding "HVMSNAPE" and the same number.
 *
 * The BSP drives virtio-net by polling: it posts RX_BUFS receive buffers
 * once (and each again after its frame is read), then for seq = 1 .. N
 * sends frame seq, waits for its echo (frames of other kinds, such as
 * the host's IPv6 neighbour discovery, are counted and skipped), prints
 * "snap-net seq=S", then counts `chunk` increments in user mode (a window
 * for the host's snapshot). An echo not back in 500 ms is asked for
 * again by sending the frame again, as a real protocol retransmits: a
 * frame answered while the VM was being snapshotted is answered into the
 * old VM's tap and lost with it (docs/snapshot.md, "Taps"). A VM restored anywhere in this must go on
 * from seq S+1: its posted receive buffers, ring positions and transmit
 * queue came back with the guest's memory and the device's state, and
 * the restored device was attached to the tap again.
 *
 * Parameters: frames=N (20), chunk=N (20000000), wait_ms=N (5000) for
 * each echo, filler=N (0) frames of a type nobody answers sent before
 * each numbered one (transmit load, so that a bw= limit holds frames). RESULT: sent=, echoed=, resent= (frames sent again),
 * skipped=.
 */
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "payload_arch.h"
#include "timing.h"
#include "virtio_pci_guest.h"
#include "x86.h"

#define VIRTIO_NET_DEVICE 0x1041
#define NET_F_MAC 5
#define QSIZE 4
#define RX_BUFS QSIZE
#define BUF_LEN 1536
#define HDR_LEN 12 /* struct virtio_net_hdr_v1 */
#define FRAME_LEN 60
#define TYPE_PING 0x88b5
#define TYPE_FILLER 0x88b7 /* not echoed: load for the bw= limit */
#define TYPE_ECHO 0x88b6
#define RESEND_MS 500

struct ring {
	struct desc desc[QSIZE] __attribute__((aligned(16)));
	volatile uint16_t avail[3 + QSIZE] __attribute__((aligned(2)));
	volatile uint32_t used[2 + 2 * QSIZE] __attribute__((aligned(4096)));
};

static struct ring rx __attribute__((aligned(4096)));
static struct ring tx __attribute__((aligned(4096)));
static uint8_t rx_buf[RX_BUFS][BUF_LEN] __attribute__((aligned(64)));
static uint8_t tx_buf[HDR_LEN + FRAME_LEN] __attribute__((aligned(64)));
static uint64_t common, notify_addr[2];
static uint16_t rx_avail, rx_used_seen, tx_avail;
static uint8_t mac[6];
static uint64_t frames, chunk, wait_ms, filler, sent, echoed, resent, skipped;
static volatile uint64_t counter;
static bool failed;

static bool open_device(void)
{
	struct virtio_pci_func f;
	struct ring *rings[2] = { &rx, &tx };

	if (!virtio_pci_find(VIRTIO_NET_DEVICE, &f) || !f.notify ||
	    !f.device_cfg) {
		printk("snap-net: no virtio-net on PCI bus 0 (run hintvm with --net tap=T)");
		return false;
	}
	common = f.common;
	mmio_write8(common + STATUS, 0);
	mmio_write8(common + STATUS, S_ACK | S_DRIVER);
	mmio_write32(common + GFSELECT, 0);
	mmio_write32(common + GF, 1u << NET_F_MAC);
	mmio_write32(common + GFSELECT, 1);
	mmio_write32(common + GF, 1); /* VERSION_1 */
	mmio_write8(common + STATUS, S_ACK | S_DRIVER | S_FEATURES_OK);
	if (!(mmio_read8(common + STATUS) & S_FEATURES_OK))
		return false;
	for (uint16_t q = 0; q < 2; q++) {
		mmio_write16(common + Q_SELECT, q);
		mmio_write16(common + Q_SIZE, QSIZE);
		mmio_write64(common + Q_DESC, (uint64_t)rings[q]->desc);
		mmio_write64(common + Q_AVAIL, (uint64_t)rings[q]->avail);
		mmio_write64(common + Q_USED, (uint64_t)rings[q]->used);
		notify_addr[q] = f.notify + mmio_read16(common + Q_NOTIFY_OFF) *
						    f.notify_mult;
		mmio_write16(common + Q_ENABLE, 1);
	}
	for (unsigned int i = 0; i < 6; i++)
		mac[i] = mmio_read8(f.device_cfg + i);
	mmio_write8(common + STATUS,
		    S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK);
	return !(mmio_read8(common + STATUS) & S_NEEDS_RESET);
}

/* Make receive buffer I available (again) and tell the device. */
static void post_rx(uint16_t i)
{
	rx.desc[i] = (struct desc){ (uint64_t)rx_buf[i], BUF_LEN, D_WRITE, 0 };
	rx.avail[2 + rx_avail % QSIZE] = i;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	rx.avail[1] = ++rx_avail;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mmio_write16(notify_addr[0], 0);
}

static void put16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A frame of TYPE numbered SEQ, on the transmit queue until it is taken. */
static bool send(uint16_t type, uint64_t seq)
{
	uint64_t deadline = rdtsc() + ms_to_tsc(wait_ms);
	uint8_t *frame = tx_buf + HDR_LEN;
	uint16_t want;

	memset(tx_buf, 0, sizeof(tx_buf));
	memset(frame, 0xff, 6); /* broadcast */
	memcpy(frame + 6, mac, 6);
	put16be(frame + 12, type);
	memcpy(frame + 14, "HVMSNAPN", 8);
	memcpy(frame + 22, &seq, sizeof(seq));
	tx.desc[0] = (struct desc){ (uint64_t)tx_buf, sizeof(tx_buf), 0, 0 };
	tx.avail[2 + tx_avail % QSIZE] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	want = ++tx_avail;
	tx.avail[1] = want;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mmio_write16(notify_addr[1], 1);
	/* In time, not turns: the bw= limit may hold it a while. */
	while (rdtsc() < deadline)
		if ((uint16_t)(__atomic_load_n(&tx.used[0], __ATOMIC_ACQUIRE) >>
			       16) == want)
			return true;
	printk("snap-net: frame %llu was not sent", (unsigned long long)seq);
	return false;
}

/* The echo of SEQ arrived (others skipped); false after MS. */
static bool receive(uint64_t seq, uint64_t ms)
{
	uint64_t deadline = rdtsc() + ms_to_tsc(ms);

	while (rdtsc() < deadline) {
		uint16_t used_idx =
			(uint16_t)(__atomic_load_n(&rx.used[0],
						   __ATOMIC_ACQUIRE) >>
				   16);

		while (rx_used_seen != used_idx) {
			unsigned int slot = rx_used_seen % QSIZE;
			/* used[0]: flags and idx; then {id, len} each. */
			uint16_t id = (uint16_t)rx.used[1 + 2 * slot];
			uint32_t len = rx.used[2 + 2 * slot];
			const uint8_t *frame = rx_buf[id % RX_BUFS] + HDR_LEN;
			uint64_t got = 0;
			bool echo = len >= HDR_LEN + 30 &&
				    frame[12] == TYPE_ECHO >> 8 &&
				    frame[13] == (TYPE_ECHO & 0xff) &&
				    !memcmp(frame + 14, "HVMSNAPE", 8);

			if (echo)
				memcpy(&got, frame + 22, sizeof(got));
			rx_used_seen++;
			post_rx(id % RX_BUFS);
			if (echo && got == seq)
				return true;
			skipped++;
		}
	}
	return false;
}

/* Frame SEQ sent, again every RESEND_MS, until its echo or wait_ms. */
static bool exchange(uint64_t seq)
{
	for (uint64_t waited = 0; waited < wait_ms; waited += RESEND_MS) {
		for (uint64_t i = 0; i < filler; i++)
			if (!send(TYPE_FILLER, seq))
				return false;
		if (!send(TYPE_PING, seq))
			return false;
		sent = seq;
		if (waited)
			resent++;
		if (receive(seq, RESEND_MS))
			return true;
	}
	printk("snap-net: no echo of frame %llu in %llu ms",
	       (unsigned long long)seq, (unsigned long long)wait_ms);
	return false;
}

static bool snap_net_setup(void)
{
	return cmdline_get_u64("frames", 20, 1, 1ull << 20, &frames) &&
	       cmdline_get_u64("chunk", 20000000, 0, UINT64_MAX, &chunk) &&
	       cmdline_get_u64("wait_ms", 5000, 1, 3600000, &wait_ms) &&
	       cmdline_get_u64("filler", 0, 0, 1000, &filler);
}

static uint64_t spin(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < chunk; i++)
		counter = counter + 1;
	return 0;
}

static void snap_net_run(struct cpu *cpu)
{
	if (cpu->nr != 0)
		return;
	if (!open_device()) {
		failed = true;
		return;
	}
	for (uint16_t i = 0; i < RX_BUFS; i++)
		post_rx(i);
	for (uint64_t seq = 1; seq <= frames; seq++) {
		if (!exchange(seq)) {
			failed = true;
			return;
		}
		echoed = seq;
		printk("snap-net seq=%llu", (unsigned long long)seq);
		run_user(spin, 0);
	}
}

static bool snap_net_report(struct result *r)
{
	result_add(r, "sent", "%llu", (unsigned long long)sent);
	result_add(r, "echoed", "%llu", (unsigned long long)echoed);
	result_add(r, "resent", "%llu", (unsigned long long)resent);
	result_add(r, "skipped", "%llu", (unsigned long long)skipped);
	return !failed && echoed == frames;
}

const struct payload payload_snap_net = {
	.name = "snap-net",
	.setup = snap_net_setup,
	.run = snap_net_run,
	.report = snap_net_report,
};
