/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio_hostile: a hostile virtio-pci driver (run hintvm with --rng). The
 * BSP finds the virtio-rng function on PCI bus 0, and for each scenario
 * resets it, sets up a queue and breaks one rule: buffers outside RAM,
 * wrapping 2^64 or inside the device's own BAR, out-of-range head and next
 * indices, a descriptor loop, an avail index far ahead, a nested indirect
 * table, a readable buffer after a writable one, ring areas outside RAM.
 * Claims: each time the device sets NEEDS_RESET and returns no used buffer
 * (it read and wrote nothing it should not); after all of that a valid
 * request still gets random bytes, and only inside its buffer (guard bytes
 * around it stay intact). hintvm must of course still be running to hear
 * the final power-off. Port I/O and MMIO at CPL0; no interrupts (polling).
 */
#include "console.h"
#include "payload.h"
#include "timing.h"
#include "virtio_pci_guest.h"
#include "x86.h"

#define VIRTIO_RNG_DEVICE 0x1044

/* virtio 1.x common configuration offsets */

#define QSIZE 8
/*
 * How long the device may take to answer, in time rather than loop turns:
 * its thread may wait for a host CPU the spinning vCPU holds (in a TCG L1
 * 200000 turns were over before the device thread ran).
 */
#define POLL_MS 2000

static struct desc ring_desc[QSIZE] __attribute__((aligned(16)));
static volatile uint16_t ring_avail[3 + QSIZE] __attribute__((aligned(2)));
static volatile uint32_t ring_used[2 + 2 * QSIZE]
	__attribute__((aligned(4096)));
static struct desc indirect[4] __attribute__((aligned(16)));
static volatile uint8_t buffer[3 * 64] __attribute__((aligned(64)));

static uint64_t bar, common, notify;
static unsigned int scenarios, passed;
static bool valid_ok, guards_ok;

/* Find the rng function and its common/notify structures. */
static bool find_device(void)
{
	struct virtio_pci_func f;

	if (!virtio_pci_find(VIRTIO_RNG_DEVICE, &f) || !f.notify_mult)
		return false;
	bar = f.bar;
	common = f.common;
	/* Queue 0's queue_notify_off is 0: the first slot. */
	notify = f.notify;
	return true;
}

static uint8_t status(void)
{
	return mmio_read8(common + STATUS);
}

/* Reset, negotiate VERSION_1 (+ INDIRECT_DESC), set up queue 0. */
static bool init_device(uint64_t desc, uint64_t avail, uint64_t used)
{
	mmio_write8(common + STATUS, 0);
	if (status() != 0)
		return false;
	mmio_write8(common + STATUS, S_ACK | S_DRIVER);
	mmio_write32(common + GFSELECT, 0);
	mmio_write32(common + GF, 1u << 28); /* INDIRECT_DESC */
	mmio_write32(common + GFSELECT, 1);
	mmio_write32(common + GF, 1); /* VERSION_1 */
	mmio_write8(common + STATUS, S_ACK | S_DRIVER | S_FEATURES_OK);
	if (!(status() & S_FEATURES_OK))
		return false;
	mmio_write16(common + Q_SELECT, 0);
	mmio_write16(common + Q_SIZE, QSIZE);
	mmio_write64(common + Q_DESC, desc);
	mmio_write64(common + Q_AVAIL, avail);
	mmio_write64(common + Q_USED, used);
	memset((void *)ring_avail, 0, sizeof(ring_avail));
	memset((void *)ring_used, 0, sizeof(ring_used));
	memset(ring_desc, 0, sizeof(ring_desc));
	mmio_write16(common + Q_ENABLE, 1);
	mmio_write8(common + STATUS,
		    S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK);
	return true;
}

static bool init_default(void)
{
	return init_device((uint64_t)ring_desc, (uint64_t)ring_avail,
			   (uint64_t)ring_used);
}

static void make_avail(uint16_t head, uint16_t new_idx)
{
	ring_avail[2 + 0] = head;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ring_avail[1] = new_idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mmio_write16(notify, 0);
}

static bool wait_needs_reset(void)
{
	for (uint64_t end = rdtsc() + ms_to_tsc(POLL_MS); rdtsc() < end;)
		if (status() & S_NEEDS_RESET)
			return true;
	return false;
}

/* Count a scenario: the device must refuse and use nothing. */
static void expect_refused(const char *what)
{
	bool ok = wait_needs_reset() &&
		  __atomic_load_n(&ring_used[0], __ATOMIC_ACQUIRE) >> 16 == 0;

	scenarios++;
	if (ok)
		passed++;
	else
		printk("virtio_hostile: %s: not refused (status 0x%x)", what,
		       status());
}

static void set_desc(unsigned int i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	ring_desc[i] = (struct desc){ addr, len, flags, next };
}

static void hostile_buffer(const char *what, uint64_t addr, uint32_t len)
{
	if (!init_default())
		return;
	set_desc(0, addr, len, D_WRITE, 0);
	make_avail(0, 1);
	expect_refused(what);
}

static void run_scenarios(void)
{
	hostile_buffer("beyond RAM", 1ull << 44, 64);
	hostile_buffer("wrapping 2^64", 0xfffffffffffff000ull, 0x2000);
	hostile_buffer("device BAR", bar, 64);
	hostile_buffer("LAPIC page", 0xfee00000ull, 64);

	if (init_default()) {
		make_avail(QSIZE + 3, 1);
		expect_refused("head out of range");
	}
	if (init_default()) {
		set_desc(0, (uint64_t)buffer, 8, D_WRITE | D_NEXT, 200);
		make_avail(0, 1);
		expect_refused("next out of range");
	}
	if (init_default()) {
		set_desc(0, (uint64_t)buffer, 8, D_WRITE | D_NEXT, 1);
		set_desc(1, (uint64_t)buffer, 8, D_WRITE | D_NEXT, 0);
		make_avail(0, 1);
		expect_refused("descriptor loop");
	}
	if (init_default()) {
		set_desc(0, (uint64_t)buffer, 8, D_WRITE, 0);
		make_avail(0, QSIZE + 5);
		expect_refused("avail idx jump");
	}
	if (init_default()) {
		indirect[0] =
			(struct desc){ (uint64_t)indirect, 16, D_INDIRECT, 0 };
		set_desc(0, (uint64_t)indirect, 16, D_INDIRECT, 0);
		make_avail(0, 1);
		expect_refused("nested indirect");
	}
	if (init_default()) {
		set_desc(0, (uint64_t)buffer, 8, D_WRITE | D_NEXT, 1);
		set_desc(1, (uint64_t)buffer + 8, 8, 0, 0);
		make_avail(0, 1);
		expect_refused("readable after writable");
	}
	/* Ring areas that are not RAM: refused at queue enable. */
	if (init_device(1ull << 44, (uint64_t)ring_avail, (uint64_t)ring_used))
		expect_refused("descriptor table beyond RAM");
	if (init_device((uint64_t)ring_desc, (uint64_t)ring_avail, bar + 0x100))
		expect_refused("used ring in the device BAR");
}

static void run_valid_request(void)
{
	unsigned int nonzero = 0;

	for (unsigned int i = 0; i < sizeof(buffer); i++)
		buffer[i] = 0;
	if (!init_default())
		return;
	/* 64 bytes in the middle; 64 guard bytes on either side. */
	set_desc(0, (uint64_t)buffer + 64, 64, D_WRITE, 0);
	make_avail(0, 1);
	for (uint64_t end = rdtsc() + ms_to_tsc(POLL_MS); rdtsc() < end;) {
		uint32_t idx =
			__atomic_load_n(&ring_used[0], __ATOMIC_ACQUIRE) >> 16;

		if (idx == 1)
			break;
	}
	/* used[0]: flags | idx << 16; used[1], used[2]: id, len */
	if ((ring_used[0] >> 16) != 1 || ring_used[1] != 0 ||
	    ring_used[2] != 64 || (status() & S_NEEDS_RESET))
		return;
	for (unsigned int i = 64; i < 128; i++)
		nonzero += buffer[i] != 0;
	valid_ok = nonzero > 32;
	guards_ok = true;
	for (unsigned int i = 0; i < 64; i++)
		guards_ok &= buffer[i] == 0 && buffer[128 + i] == 0;
}

static void virtio_run(struct cpu *cpu)
{
	if (cpu->nr != 0)
		return;
	if (!find_device()) {
		printk("virtio_hostile: no virtio-rng on PCI bus 0 "
		       "(run hintvm with --rng)");
		return;
	}
	run_scenarios();
	run_valid_request();
}

static bool virtio_report(struct result *r)
{
	result_add(r, "scenarios", "%u", scenarios);
	result_add(r, "refused", "%u", passed);
	result_add(r, "valid", "%u", valid_ok);
	result_add(r, "guards", "%u", guards_ok);
	return scenarios == 12 && passed == scenarios && valid_ok && guards_ok;
}

const struct payload payload_virtio = {
	.name = "virtio_hostile",
	.run = virtio_run,
	.report = virtio_report,
};
