/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * blkload: benchmark load for the disk rate limits (bench/run ratelimit,
 * `-d IMAGE,iops=N,bw=BYTES`). The BSP issues one virtio-blk request after
 * another for ms=N milliseconds (TSC), each of size=BYTES (a multiple of
 * 512, at most 64 KiB), writes or reads (op=write|read), walking the first
 * span=MIB mebibytes of the disk; the RESULT line says how many requests
 * and bytes completed and over how many microseconds, from which the
 * bench computes IOPS and MB/s to set against the limit.
 */
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "timing.h"
#include "virtio_blk_poll.h"
#include "x86.h"

#define MAX_SIZE (64u << 10)

static uint8_t buffer[MAX_SIZE] __attribute__((aligned(4096)));
static uint64_t duration_ms, size, span_mib, op_read;
static uint64_t requests, elapsed_us;
static bool failed;

static bool blkload_setup(void)
{
	const char *op;

	if (!cmdline_get_u64("ms", 2000, 1, 600000, &duration_ms) ||
	    !cmdline_get_u64("size", 4096, VBLK_SECTOR, MAX_SIZE, &size) ||
	    !cmdline_get_u64("span", 16, 1, 1 << 20, &span_mib))
		return false;
	if (size % VBLK_SECTOR) {
		printk("blkload: size=%lu is not a multiple of 512", size);
		return false;
	}
	op = cmdline_get("op");
	op_read = op && !strcmp(op, "read");
	return true;
}

static void blkload_run(struct cpu *cpu)
{
	uint64_t sectors = size / VBLK_SECTOR;
	uint64_t span = (span_mib << 20) / VBLK_SECTOR;
	uint64_t start, deadline, sector = 0;

	if (cpu->nr != 0)
		return;
	if (!vblk_open()) {
		failed = true;
		return;
	}
	for (uint64_t i = 0; i < size; i++)
		buffer[i] = (uint8_t)i;
	start = rdtsc();
	deadline = start + ms_to_tsc(duration_ms);
	while (rdtsc() < deadline) {
		if (!vblk_request(op_read ? VBLK_T_IN : VBLK_T_OUT, sector,
				  buffer, (uint32_t)size)) {
			printk("blkload: request %lu failed (status %u)",
			       requests, vblk_last_status());
			failed = true;
			break;
		}
		requests++;
		sector += sectors;
		if (sector + sectors > span)
			sector = 0;
	}
	elapsed_us = tsc_to_us(rdtsc() - start);
}

static bool blkload_report(struct result *r)
{
	result_add(r, "requests", "%lu", requests);
	result_add(r, "bytes", "%lu", requests * size);
	result_add(r, "us", "%lu", elapsed_us);
	return !failed && requests > 0;
}

const struct payload payload_blkload = {
	.name = "blkload",
	.setup = blkload_setup,
	.run = blkload_run,
	.report = blkload_report,
};
