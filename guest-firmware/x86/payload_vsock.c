/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vsock: the virtio-vsock device (run hintvm with --vsock) through the
 * common polling driver (common/vsock_guest.c): the hostile cases, then
 * the echo/sink/source servers the kvm test drives through the hybrid
 * socket until it connects to port 1. This file finds the PCI function
 * (0x1af4:0x1053), negotiates VERSION_1 only and programs the three
 * queues; the whole driver runs at CPL3 (native speed here; the notify
 * writes are ioeventfds). Parameters: vsock.ms=N (60000) how long to
 * serve, vsock.source_kb=N (1024) what port 1236 sends, vsock.hostile=0
 * skips the hostile cases (benchmarks).
 * RESULT: hostile=passed/cases, conns= (total), conns_max= (at once),
 * echoed=, sunk=, sourced= (bytes), quit=, device_ok=.
 */
#include "cmdline.h"
#include "lib.h"
#include "payload.h"
#include "timing.h"
#include "vsock_guest.h"
#include "virtio_pci_guest.h"
#include "x86.h"

#define VIRTIO_VSOCK_DEVICE 0x1053

/* virtio 1.x common configuration offsets */

static uint64_t common, notify_base, device_cfg;
static uint32_t notify_mult;
static uint64_t notify_addr[3];
static uint64_t run_ms, source_kb, hostile;
static bool found;
static struct vsock_guest_stats stats;

static bool find_device(void)
{
	struct virtio_pci_func f;

	if (!virtio_pci_find(VIRTIO_VSOCK_DEVICE, &f))
		return false;
	common = f.common;
	notify_base = f.notify;
	notify_mult = f.notify_mult;
	device_cfg = f.device_cfg;
	return notify_base && device_cfg;
}

static bool init_device(void)
{
	mmio_write8(common + STATUS, 0);
	mmio_write8(common + STATUS, S_ACK | S_DRIVER);
	mmio_write32(common + GFSELECT, 0);
	mmio_write32(common + GF, 0);
	mmio_write32(common + GFSELECT, 1);
	mmio_write32(common + GF, 1); /* VERSION_1 */
	mmio_write8(common + STATUS, S_ACK | S_DRIVER | S_FEATURES_OK);
	if (!(mmio_read8(common + STATUS) & S_FEATURES_OK))
		return false;
	for (uint16_t q = 0; q < 3; q++) {
		struct vsock_guest_ring r;

		vsock_guest_ring(q, &r);
		mmio_write16(common + Q_SELECT, q);
		if (mmio_read16(common + Q_SIZE) < VSOCK_GUEST_QSIZE)
			return false;
		mmio_write16(common + Q_SIZE, VSOCK_GUEST_QSIZE);
		mmio_write64(common + Q_DESC, r.desc);
		mmio_write64(common + Q_AVAIL, r.avail);
		mmio_write64(common + Q_USED, r.used);
		notify_addr[q] =
			notify_base +
			mmio_read16(common + Q_NOTIFY_OFF) * notify_mult;
		mmio_write16(common + Q_ENABLE, 1);
	}
	mmio_write8(common + STATUS,
		    S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK);
	return true;
}

static void notify(unsigned int q)
{
	mmio_write16(notify_addr[q], (uint16_t)q);
}

static uint8_t status(void)
{
	return mmio_read8(common + STATUS);
}

static uint64_t now_us(void)
{
	return tsc_to_us(rdtsc());
}

static uint64_t guest_cid(void)
{
	return mmio_read32(device_cfg) | (uint64_t)mmio_read32(device_cfg + 4)
						 << 32;
}

static const struct vsock_guest_ops x86_ops = {
	.notify = notify,
	.status = status,
	.now_us = now_us,
	.guest_cid = guest_cid,
};

static uint64_t driver(void *arg)
{
	uint64_t cid;

	if (!find_device()) {
		printk("vsock: no virtio-vsock on PCI bus 0 (run hintvm with --vsock)");
		return 0;
	}
	if (!init_device()) {
		printk("vsock: the device refused VERSION_1 or its queues");
		return 0;
	}
	cid = guest_cid();
	found = true;
	printk("vsock: cid %u, serving", (unsigned int)cid);
	vsock_guest_run(&x86_ops, cid, run_ms, source_kb, hostile != 0, &stats);
	return 0;
}

static bool vsock_setup(void)
{
	return cmdline_get_u64("vsock.ms", 60000, 1, 3600000, &run_ms) &&
	       cmdline_get_u64("vsock.source_kb", 1024, 0, 1 << 22,
			       &source_kb) &&
	       cmdline_get_u64("vsock.hostile", 1, 0, 1, &hostile);
}

static void vsock_run(struct cpu *cpu)
{
	if (cpu->nr == 0)
		run_at_cpl3(driver, 0);
}

static bool vsock_report(struct result *r)
{
	result_add(r, "device", "%s", found ? "present" : "absent");
	result_add(r, "hostile", "%u/%u", stats.hostile_passed,
		   stats.hostile_cases);
	result_add(r, "conns", "%u", stats.conns);
	result_add(r, "conns_max", "%u", stats.conns_max);
	result_add(r, "echoed", "%llu", (unsigned long long)stats.echoed);
	result_add(r, "sunk", "%llu", (unsigned long long)stats.sunk);
	result_add(r, "sourced", "%llu", (unsigned long long)stats.sourced);
	result_add(r, "resets", "%u", stats.resets);
	result_add(r, "agent_hellos", "%u", stats.agent_hellos);
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
