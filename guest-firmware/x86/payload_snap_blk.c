/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snap-blk: a disk whose contents must survive a snapshot and restore
 * (docs/snapshot.md, tests/kvm/test_snapshot.c). Run hintvm with one -d
 * disk of at least N + 1 sectors. The BSP drives virtio-blk by polling
 * (virtio_blk_poll.c): for seq = 1 .. N it writes record seq to sector
 * seq, flushes, reads sector seq and sector seq - 1 back and compares,
 * prints "snap-blk seq=S", then counts `chunk` increments in user mode (a
 * window for the host's snapshot). At the end it reads every sector 1..N
 * back (`verified=`). A VM restored anywhere in this, on the snapshot's
 * image or on a copy of it, must go on from seq S+1 with every record
 * before it intact: the queue's positions came back with the guest's
 * memory and the device's state.
 *
 * A record: "HVMSNAPB", seq, ~seq, then bytes that are a function of seq
 * and offset. Parameters: records=N (20), chunk=N (20000000).
 */
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "payload_arch.h"
#include "virtio_blk_poll.h"

#define SECTOR VBLK_SECTOR

static uint8_t want[SECTOR] __attribute__((aligned(512)));
static uint8_t got[SECTOR] __attribute__((aligned(512)));
static uint64_t records, chunk, written, verified;
static volatile uint64_t counter;
static bool failed;

static void fill(uint8_t *buf, uint64_t seq)
{
	uint64_t *words = (uint64_t *)buf;

	memcpy(buf, "HVMSNAPB", 8);
	words[1] = seq;
	words[2] = ~seq;
	for (unsigned int i = 24; i < SECTOR; i++)
		buf[i] = (uint8_t)(seq * 151 + i * 3);
}

/* Sector SEQ holds record SEQ; false (and a line) otherwise. */
static bool check(uint64_t seq)
{
	if (!vblk_request(VBLK_T_IN, seq, got, SECTOR)) {
		printk("snap-blk: read of sector %llu failed (status %u)",
		       (unsigned long long)seq, vblk_last_status());
		return false;
	}
	fill(want, seq);
	if (memcmp(want, got, SECTOR)) {
		printk("snap-blk: sector %llu does not hold its record",
		       (unsigned long long)seq);
		return false;
	}
	return true;
}

static bool snap_blk_setup(void)
{
	return cmdline_get_u64("records", 20, 1, 1ull << 20, &records) &&
	       cmdline_get_u64("chunk", 20000000, 0, UINT64_MAX, &chunk);
}

static uint64_t spin(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < chunk; i++)
		counter = counter + 1;
	return 0;
}

static void snap_blk_run(struct cpu *cpu)
{
	if (cpu->nr != 0)
		return;
	if (!vblk_open()) {
		failed = true;
		return;
	}
	for (uint64_t seq = 1; seq <= records; seq++) {
		fill(want, seq);
		if (!vblk_request(VBLK_T_OUT, seq, want, SECTOR) ||
		    !vblk_request(VBLK_T_FLUSH, 0, 0, 0)) {
			printk("snap-blk: record %llu: write failed (status %u)",
			       (unsigned long long)seq, vblk_last_status());
			failed = true;
			return;
		}
		if (!check(seq) || (seq > 1 && !check(seq - 1))) {
			failed = true;
			return;
		}
		written = seq;
		printk("snap-blk seq=%llu", (unsigned long long)seq);
		run_user(spin, 0);
	}
	for (uint64_t seq = 1; seq <= records; seq++) {
		if (!check(seq)) {
			failed = true;
			return;
		}
		verified = seq;
	}
}

static bool snap_blk_report(struct result *r)
{
	result_add(r, "written", "%llu", (unsigned long long)written);
	result_add(r, "verified", "%llu", (unsigned long long)verified);
	return !failed && verified == records;
}

const struct payload payload_snap_blk = {
	.name = "snap-blk",
	.setup = snap_blk_setup,
	.run = snap_blk_run,
	.report = snap_blk_report,
};
