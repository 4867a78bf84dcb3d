/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * durable: the guest half of the SIGKILL durability test
 * (tests/kvm/durability.sh, docs/virtio.md). Run hintvm with one -d disk.
 * The BSP drives the virtio-blk function on PCI bus 0 by polling (no
 * interrupts): for seq = 1, 2, ... it writes record `seq` to sector `seq`,
 * waits for the write to complete, sends VIRTIO_BLK_T_FLUSH, waits for
 * that, and only then prints `DURABLE seq=N`. The host kills hintvm with
 * SIGKILL at a random moment and checks that every record up to the last
 * DURABLE line it read is on the image.
 *
 * A record is one 512-byte sector: "HVMDURAB", seq, ~seq, then bytes that
 * are a function of seq and their offset, so a torn, stale or misplaced
 * sector cannot pass for the record.
 *
 * Parameters: records=N (default 200000; the disk must hold N + 1
 * sectors). ok=1 when all N were written and flushed.
 */
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "virtio_blk_poll.h"

#define SECTOR VBLK_SECTOR

static uint8_t record[SECTOR] __attribute__((aligned(512)));
static uint64_t records, durable;
static bool failed;

static void fill_record(uint64_t seq)
{
	uint64_t *words = (uint64_t *)record;

	memcpy(record, "HVMDURAB", 8);
	words[1] = seq;
	words[2] = ~seq;
	for (unsigned int i = 24; i < SECTOR; i++)
		record[i] = (uint8_t)(seq * 131 + i * 7);
}

static bool durable_setup(void)
{
	return cmdline_get_u64("records", 200000, 1, 1ull << 32, &records);
}

static void durable_run(struct cpu *cpu)
{
	if (cpu->nr != 0)
		return;
	if (!vblk_open()) {
		failed = true;
		return;
	}
	for (uint64_t seq = 1; seq <= records; seq++) {
		fill_record(seq);
		if (!vblk_request(VBLK_T_OUT, seq, record, SECTOR) ||
		    !vblk_request(VBLK_T_FLUSH, 0, 0, 0)) {
			printk("durable: record %llu: request failed (status %u)",
			       (unsigned long long)seq, vblk_last_status());
			failed = true;
			return;
		}
		durable = seq;
		printk("DURABLE seq=%llu", (unsigned long long)seq);
	}
}

static bool durable_report(struct result *r)
{
	result_add(r, "durable", "%llu", (unsigned long long)durable);
	return !failed && durable == records;
}

const struct payload payload_durable = {
	.name = "durable",
	.setup = durable_setup,
	.run = durable_run,
	.report = durable_report,
};
