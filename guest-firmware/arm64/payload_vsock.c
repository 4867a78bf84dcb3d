// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vsock: the virtio-vsock device through the common polling driver
 * (common/vsock_guest.c; the x86 payload_vsock.c says what it claims).
 * This file finds the device among the device tree's "virtio,mmio"
 * windows (DeviceID 19), negotiates VERSION_1 only and programs the three
 * queues over virtio-mmio version 2; the driver runs at EL1. Under QEMU
 * virt there is no userspace vsock device (QEMU's needs vhost), so there
 * the payload reports device=absent. Parameters as on x86.
 */
#include "arm64.h"
#include "cmdline.h"
#include "cpu.h"
#include "lib.h"
#include "machine.h"
#include "payload.h"
#include "vsock_guest.h"

/* virtio-mmio version 2 registers */
#define MAGIC 0x000
#define VERSION 0x004
#define DEVICE_ID 0x008
#define DRV_FEATURES 0x020
#define DRV_FEATURES_SEL 0x024
#define Q_SEL 0x030
#define Q_NUM_MAX 0x034
#define Q_NUM 0x038
#define Q_READY 0x044
#define Q_NOTIFY 0x050
#define STATUS 0x070
#define Q_DESC 0x080
#define Q_DRIVER 0x090
#define Q_DEVICE 0x0a0
#define CONFIG 0x100

#define S_ACK 1
#define S_DRIVER 2
#define S_DRIVER_OK 4
#define S_FEATURES_OK 8

static uint64_t base;
static uint64_t run_ms, source_kb, hostile;
static bool found;
static struct vsock_guest_stats stats;

static uint32_t rd(uint64_t off)
{
	return *(volatile uint32_t *)(base + off);
}

static void wr(uint64_t off, uint32_t v)
{
	*(volatile uint32_t *)(base + off) = v;
}

static void wr64(uint64_t off, uint64_t v)
{
	wr(off, (uint32_t)v);
	wr(off + 4, (uint32_t)(v >> 32));
}

static bool find_device(void)
{
	for (unsigned int i = 0; i < machine.nr_virtio_mmio; i++) {
		base = machine.virtio_mmio[i];
		if (rd(MAGIC) == 0x74726976 && rd(VERSION) == 2 &&
		    rd(DEVICE_ID) == 19)
			return true;
	}
	base = 0;
	return false;
}

static bool init_device(void)
{
	wr(STATUS, 0);
	wr(STATUS, S_ACK | S_DRIVER);
	wr(DRV_FEATURES_SEL, 0);
	wr(DRV_FEATURES, 0);
	wr(DRV_FEATURES_SEL, 1);
	wr(DRV_FEATURES, 1); /* VERSION_1 */
	wr(STATUS, S_ACK | S_DRIVER | S_FEATURES_OK);
	if (!(rd(STATUS) & S_FEATURES_OK))
		return false;
	for (uint32_t q = 0; q < 3; q++) {
		struct vsock_guest_ring r;

		vsock_guest_ring(q, &r);
		wr(Q_SEL, q);
		if (rd(Q_NUM_MAX) < VSOCK_GUEST_QSIZE)
			return false;
		wr(Q_NUM, VSOCK_GUEST_QSIZE);
		wr64(Q_DESC, r.desc);
		wr64(Q_DRIVER, r.avail);
		wr64(Q_DEVICE, r.used);
		wr(Q_READY, 1);
	}
	wr(STATUS, S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK);
	return true;
}

static void notify(unsigned int q)
{
	dsb(sy); /* the ring writes before the doorbell */
	wr(Q_NOTIFY, q);
}

static uint8_t status(void)
{
	return (uint8_t)rd(STATUS);
}

static uint64_t now_us(void)
{
	return now_ticks() / (read_sysreg(cntfrq_el0) / 1000000);
}

static const struct vsock_guest_ops mmio_ops = {
	.notify = notify,
	.status = status,
	.now_us = now_us,
};

static bool vsock_setup(void)
{
	return cmdline_get_u64("vsock.ms", 60000, 1, 3600000, &run_ms) &&
	       cmdline_get_u64("vsock.source_kb", 1024, 0, 1 << 22,
			       &source_kb) &&
	       cmdline_get_u64("vsock.hostile", 1, 0, 1, &hostile);
}

static void vsock_run(struct cpu *cpu)
{
	uint64_t cid;

	if (cpu->nr != 0)
		return;
	if (!find_device()) {
		printk("vsock: no virtio-vsock among %u virtio-mmio windows (run hintvm with --vsock)",
		       machine.nr_virtio_mmio);
		return;
	}
	if (!init_device()) {
		printk("vsock: the device refused VERSION_1 or its queues");
		return;
	}
	cid = rd(CONFIG) | (uint64_t)rd(CONFIG + 4) << 32;
	found = true;
	printk("vsock: cid %lu, serving", (unsigned long)cid);
	vsock_guest_run(&mmio_ops, cid, run_ms, source_kb, hostile != 0,
			&stats);
}

static bool vsock_report(struct result *r)
{
	result_add(r, "device", "%s", found ? "present" : "absent");
	result_add(r, "hostile", "%u/%u", stats.hostile_passed,
		   stats.hostile_cases);
	result_add(r, "conns", "%u", stats.conns);
	result_add(r, "conns_max", "%u", stats.conns_max);
	result_add(r, "quit", "%u", stats.quit);
	result_add(r, "device_ok", "%u", stats.device_ok);
	return found && stats.quit && stats.device_ok &&
	       (!hostile || (stats.hostile_cases &&
			     stats.hostile_passed == stats.hostile_cases));
}

const struct payload payload_vsock = {
	.name = "vsock",
	.setup = vsock_setup,
	.run = vsock_run,
	.report = vsock_report,
};
