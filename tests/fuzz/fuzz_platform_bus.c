// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for everything a guest reaches through port and MMIO
 * exits besides virtio: the x86 platform devices (8250 UART, CMOS RTC,
 * i8042, debug-exit, ACPI PM1a and RESET_REG through port 0xcf9), the
 * scheduling-hint channel and the PCI host (config mechanism #1 and its
 * BAR window), all on real struct bus tables with fake interrupt lines and
 * a fake power sink, as x86.c and arm64.c lay them out. No KVM.
 *
 * The input is a sequence of records; most are guest accesses (PIO or MMIO
 * space, read or write, any width 1-8, at an address picked near a region
 * edge, at 0 / UINT64_MAX, or given raw). The others are what the host side
 * does meanwhile: console input, clock steps, which vCPU thread is calling.
 *
 * Beyond "no sanitizer report", the harness checks cheap invariants:
 *  - the bus hands a device exactly the region a linear scan finds, and
 *    never an access that crosses the region's end;
 *  - a read's buffer ends where the access ends, so an overrun hits the
 *    redzone; a read nobody claims is all-ones;
 *  - the UART drives its line only on a change, never reads IIR "no
 *    interrupt" while its line is high, and drops the line once IIR says
 *    nothing is pending;
 *  - reads never power off, reset or exit the VM;
 *  - each hint write from a vCPU thread is counted exactly once (accepted,
 *    dropped or invalid), and delivered events name a valid other vCPU;
 *  - a PCI BAR handler never sees an access beyond its BAR, a config write
 *    callback never a range beyond config space.
 * At the end every register of every device is read and written once more,
 * so a state a sequence left behind cannot break a later access.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/bus.h"
#include "core/console_out.h"
#include "core/irq.h"
#include "core/power.h"
#include "devices/acpi_pm.h"
#include "devices/cmos_rtc.h"
#include "devices/debug_exit.h"
#include "devices/i8042.h"
#include "devices/pci/pci.h"
#include "devices/uart8250.h"
#include "fuzz.h"
#include "sched/hint_channel.h"

#define NR_VCPUS 4
#define ARM_UART_GPA 0x09000000ull /* a UART on the MMIO bus, as on arm64 */
#define HINT_MMIO_GPA 0xfe000000ull
#define EDGE_LEN 0x10
#define TEST_BAR0_SIZE 0x1000ull
#define TEST_BAR2_SIZE 0x4000ull

/* ---- fakes ---- */

struct strict_irq {
	bool level;
	unsigned long changes;
};

static int strict_irq_set_level(void *ctx, uint32_t gsi, bool level)
{
	struct strict_irq *irq = ctx;

	/* Devices promise to drive the line only on a change (an ioctl). */
	check(level != irq->level);
	irq->level = level;
	irq->changes++;
	return 0;
}

struct power_log {
	unsigned long events;
};

static void power_log_event(void *ctx, enum power_event event, uint32_t code)
{
	struct power_log *log = ctx;

	check(event == POWER_OFF || event == POWER_RESET ||
	      event == POWER_DEBUG_EXIT);
	log->events++;
}

static time_t fake_wall_clock;

static time_t fake_time(void)
{
	return fake_wall_clock;
}

struct hint_host {
	int current; /* what current_vcpu returns */
	uint64_t now_ns;
	unsigned long delivered;
};

static int hint_current(void *ctx)
{
	return ((struct hint_host *)ctx)->current;
}

static uint64_t hint_now(void *ctx)
{
	return ((struct hint_host *)ctx)->now_ns;
}

static void hint_deliver(void *ctx, const struct hint_event *ev)
{
	struct hint_host *h = ctx;

	check(ev->from < NR_VCPUS);
	check((int)ev->from == h->current);
	if (ev->kind == HINT_KIND_SPIN_ON_HOLDER ||
	    ev->kind == HINT_KIND_RELEASED)
		check(ev->target < NR_VCPUS && ev->target != ev->from);
	else
		check(ev->kind == HINT_KIND_IDLE_POLL && ev->target == 0);
	h->delivered++;
}

/* A PCI function whose BARs only check what the host decodes for them. */
struct test_bar {
	uint64_t size;
	uint8_t regs[16];
};

static void test_bar_read(void *dev, uint64_t off, uint8_t *data, uint32_t len)
{
	struct test_bar *bar = dev;

	check(len >= 1 && len <= 8 && off < bar->size &&
	      len <= bar->size - off);
	for (uint32_t i = 0; i < len; i++)
		data[i] = bar->regs[(off + i) % sizeof(bar->regs)];
}

static void test_bar_write(void *dev, uint64_t off, const uint8_t *data,
			   uint32_t len)
{
	struct test_bar *bar = dev;

	check(len >= 1 && len <= 8 && off < bar->size &&
	      len <= bar->size - off);
	for (uint32_t i = 0; i < len; i++)
		bar->regs[(off + i) % sizeof(bar->regs)] = data[i];
}

static const struct bus_ops test_bar_ops = { test_bar_read, test_bar_write };

static void test_config_written(struct pci_device *pdev, uint32_t off,
				uint32_t len)
{
	check(len >= 1 && off < PCI_CFG_SIZE && len <= PCI_CFG_SIZE - off);
}

/* Regions at the very ends of the address space: nothing must wrap there. */
static void edge_read(void *dev, uint64_t off, uint8_t *data, uint32_t len)
{
	check(off < EDGE_LEN && len <= EDGE_LEN - off);
	memset(data, 0xee, len);
}

static void edge_write(void *dev, uint64_t off, const uint8_t *data,
		       uint32_t len)
{
	check(off < EDGE_LEN && len <= EDGE_LEN - off);
}

static const struct bus_ops edge_ops = { edge_read, edge_write };

/* ---- the platform ---- */

struct platform {
	struct bus pio, mmio;
	struct strict_irq com1_irq, arm_uart_irq, sci_irq;
	struct power_log power_log;
	struct power_sink power;
	struct uart8250 *com1, *arm_uart;
	struct cmos_rtc *rtc;
	struct i8042 *kbc;
	struct acpi_pm *pm;
	struct hint_host hint_host;
	struct hint_channel hints;
	struct pci_host *pci;
	struct pci_device pdev;
	struct test_bar bar0, bar2;
};

static const struct bus_ops post_port_ops = { 0 };
static struct console_out *null_out;

static void reg(struct bus *bus, uint64_t base, uint64_t len,
		const struct bus_ops *ops, void *dev, const char *name)
{
	if (bus_register(bus, base, len, ops, dev, name))
		abort();
}

static void platform_create(struct platform *p)
{
	struct hint_channel_config hcfg = {
		.nr_vcpus = NR_VCPUS,
		.current_vcpu = hint_current,
		.current_vcpu_ctx = &p->hint_host,
		.now_ns = hint_now,
		.now_ctx = &p->hint_host,
		.deliver = hint_deliver,
		.deliver_ctx = &p->hint_host,
	};

	memset(p, 0, sizeof(*p));
	p->power = (struct power_sink){ power_log_event, &p->power_log };
	p->com1 =
		uart8250_create((struct irq_line){ strict_irq_set_level,
						   &p->com1_irq, X86_COM1_IRQ },
				null_out);
	p->arm_uart = uart8250_create(
		(struct irq_line){ strict_irq_set_level, &p->arm_uart_irq, 33 },
		NULL);
	fake_wall_clock = 1700000000;
	p->rtc = cmos_rtc_create(fake_time);
	p->kbc = i8042_create(p->power);
	p->pm = acpi_pm_create(p->power,
			       (struct irq_line){ strict_irq_set_level,
						  &p->sci_irq, ACPI_SCI_IRQ });
	p->hint_host.current = 0;
	p->hint_host.now_ns = 1000000000ull;
	p->pci = pci_host_create(X86_PCI_MMIO_GPA, X86_PCI_MMIO_SIZE);
	if (!p->com1 || !p->arm_uart || !p->rtc || !p->kbc || !p->pm ||
	    !p->pci || hint_channel_init(&p->hints, &hcfg))
		abort();

	pci_device_init(&p->pdev, "fuzz-pci", 0x1af4, 0x10ff, 0xff0000, 0x1af4,
			0x1);
	p->bar0.size = TEST_BAR0_SIZE;
	p->bar2.size = TEST_BAR2_SIZE;
	p->pdev.config_written = test_config_written;
	if (pci_device_set_bar64(&p->pdev, 0, TEST_BAR0_SIZE, &test_bar_ops,
				 &p->bar0) ||
	    pci_device_set_bar64(&p->pdev, 2, TEST_BAR2_SIZE, &test_bar_ops,
				 &p->bar2) ||
	    !pci_device_add_cap(&p->pdev, PCI_CAP_ID_VNDR,
				(uint8_t[16]){ 0, 0, 16 }, 16) ||
	    pci_host_add_device(p->pci, &p->pdev))
		abort();
	pci_host_set_cf9_handler(p->pci, &acpi_reset_bus_ops, p->pm);

	/* The x86 port map (x86.c), plus the edges of the address space. */
	reg(&p->pio, 0, EDGE_LEN, &edge_ops, NULL, "edge-low");
	reg(&p->pio, X86_I8042_DATA_PORT, 1, &i8042_data_bus_ops, p->kbc,
	    "i8042-data");
	reg(&p->pio, X86_I8042_CMD_PORT, 1, &i8042_cmd_bus_ops, p->kbc,
	    "i8042-cmd");
	reg(&p->pio, X86_CMOS_PORT, 2, &cmos_rtc_bus_ops, p->rtc, "cmos-rtc");
	reg(&p->pio, X86_POST_PORT, 1, &post_port_ops, NULL, "post");
	reg(&p->pio, X86_DEBUG_EXIT_PORT, DEBUG_EXIT_LEN, &debug_exit_bus_ops,
	    &p->power, "debug-exit");
	reg(&p->pio, X86_COM1_PORT, UART8250_REGS, &uart8250_bus_ops, p->com1,
	    "ttyS0");
	reg(&p->pio, X86_PM1A_EVT_PORT, ACPI_PM1_EVT_LEN, &acpi_pm1_evt_bus_ops,
	    p->pm, "pm1a-evt");
	reg(&p->pio, X86_PM1A_CNT_PORT, ACPI_PM1_CNT_LEN, &acpi_pm1_cnt_bus_ops,
	    p->pm, "pm1a-cnt");
	reg(&p->pio, X86_GPE0_PORT, ACPI_GPE0_LEN, &acpi_gpe0_bus_ops, p->pm,
	    "gpe0");
	reg(&p->pio, X86_HINT_PORT, HINT_REGION_LEN, &hint_channel_bus_ops,
	    &p->hints, "sched-hint");
	reg(&p->pio, PCI_HOST_CFG_PORT, PCI_HOST_CFG_LEN, &pci_host_cfg_ops,
	    p->pci, "pci-config");
	reg(&p->pio, UINT64_MAX - (EDGE_LEN - 1), EDGE_LEN, &edge_ops, NULL,
	    "edge-high");

	/* MMIO: the PCI window, an arm64-style UART and hint page. */
	reg(&p->mmio, 0, EDGE_LEN, &edge_ops, NULL, "edge-low");
	reg(&p->mmio, ARM_UART_GPA, UART8250_REGS, &uart8250_bus_ops,
	    p->arm_uart, "uart-mmio");
	reg(&p->mmio, X86_PCI_MMIO_GPA, X86_PCI_MMIO_SIZE, &pci_host_mmio_ops,
	    p->pci, "pci-bars");
	reg(&p->mmio, HINT_MMIO_GPA, 0x1000, &hint_channel_bus_ops, &p->hints,
	    "sched-hint-mmio");
	reg(&p->mmio, UINT64_MAX - (EDGE_LEN - 1), EDGE_LEN, &edge_ops, NULL,
	    "edge-high");
}

static void platform_destroy(struct platform *p)
{
	bus_destroy(&p->pio);
	bus_destroy(&p->mmio);
	uart8250_destroy(p->com1);
	uart8250_destroy(p->arm_uart);
	cmos_rtc_destroy(p->rtc);
	i8042_destroy(p->kbc);
	acpi_pm_destroy(p->pm);
	hint_channel_destroy(&p->hints);
	pci_host_destroy(p->pci);
}

/* ---- one access, with its checks ---- */

static const struct bus_region *oracle_lookup(const struct bus *bus,
					      uint64_t addr, uint32_t len)
{
	uint64_t last = addr + len - 1;

	if (last < addr)
		return NULL;
	for (size_t i = 0; i < bus->nr; i++) {
		const struct bus_region *r = &bus->regions[i];

		if (addr >= r->base && last <= r->base + (r->len - 1))
			return r;
	}
	return NULL;
}

static uint64_t hint_events(const struct hint_channel *hc, unsigned int vcpu)
{
	struct hint_vcpu_stats s;

	hint_channel_stats(hc, vcpu, &s);
	return s.accepted + s.dropped + s.invalid;
}

static bool hint_caller_is_vcpu(const struct platform *p)
{
	return p->hint_host.current >= 0 && p->hint_host.current < NR_VCPUS;
}

static void uart_check_iir(const struct strict_irq *irq, bool level_before,
			   uint8_t iir)
{
	/* Line high means a cause is pending, and IIR must name it. */
	if (level_before)
		check(!(iir & 0x01));
	/* IIR says nothing is pending: the line must now be low. */
	if (iir & 0x01)
		check(!irq->level);
}

static void guest_access(struct platform *p, bool mmio, uint64_t addr,
			 uint32_t len, bool is_write, const uint8_t value[8])
{
	const struct bus *bus = mmio ? &p->mmio : &p->pio;
	const struct bus_region *r = bus_lookup(bus, addr, len);
	uint8_t storage[8];
	/* The buffer ends where the access does: overruns hit the redzone. */
	uint8_t *buf = storage + sizeof(storage) - len;
	unsigned long power_before = p->power_log.events;
	bool hint_hit = r && r->dev == &p->hints && hint_caller_is_vcpu(p);
	bool com1_iir = r && r->dev == p->com1 && addr - r->base == 2;
	bool arm_iir = r && r->dev == p->arm_uart && addr - r->base == 2;
	bool com1_level = p->com1_irq.level, arm_level = p->arm_uart_irq.level;
	uint64_t hint_before = 0;
	bool claimed;

	check(r == oracle_lookup(bus, addr, len));
	if (hint_hit)
		hint_before = hint_events(&p->hints, p->hint_host.current);

	memcpy(buf, value, len);
	claimed = bus_access(bus, addr, buf, len, is_write);
	check(claimed == (r != NULL));

	if (!is_write) {
		check(p->power_log.events == power_before);
		if (!r)
			for (uint32_t i = 0; i < len; i++)
				check(buf[i] == 0xff);
		if (com1_iir)
			uart_check_iir(&p->com1_irq, com1_level, buf[0]);
		if (arm_iir)
			uart_check_iir(&p->arm_uart_irq, arm_level, buf[0]);
	} else if (hint_hit) {
		check(hint_events(&p->hints, p->hint_host.current) ==
		      hint_before + 1);
	}
}

/* ---- input decoding ---- */

struct input {
	const uint8_t *data;
	size_t size;
};

static uint8_t take8(struct input *in)
{
	uint8_t v;

	if (!in->size)
		return 0;
	v = *in->data++;
	in->size--;
	return v;
}

static uint64_t take64(struct input *in)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)take8(in) << (8 * i);
	return v;
}

/* Interesting addresses: every region's first byte, last byte and end. */
static uint64_t pick_address(const struct platform *p, bool mmio, uint8_t sel,
			     int8_t delta)
{
	const struct bus *bus = mmio ? &p->mmio : &p->pio;
	size_t nr_points = bus->nr * 3 + 4;
	size_t i = sel % nr_points;
	uint64_t base;

	if (i < bus->nr * 3) {
		const struct bus_region *r = &bus->regions[i / 3];

		base = i % 3 == 0   ? r->base
		       : i % 3 == 1 ? r->base + (r->len - 1)
				    : r->base + r->len; /* may wrap to 0 */
	} else if (mmio && i == bus->nr * 3) {
		base = pci_device_bar_addr(&p->pdev, 0);
	} else if (mmio && i == bus->nr * 3 + 1) {
		base = pci_device_bar_addr(&p->pdev, 2);
	} else if (i == bus->nr * 3 + 2) {
		base = X86_RESET_PORT;
	} else {
		base = UINT64_MAX;
	}
	return base + (uint64_t)(int64_t)delta; /* wraps on purpose */
}

/* Each register once more, so that no state left behind breaks later. */
static void final_sweep(struct platform *p)
{
	static const uint8_t zeros[8] = { 0 };

	for (int space = 0; space < 2; space++) {
		const struct bus *bus = space ? &p->mmio : &p->pio;

		for (size_t i = 0; i < bus->nr; i++) {
			uint64_t base = bus->regions[i].base;
			uint64_t n = bus->regions[i].len < 8
					     ? bus->regions[i].len
					     : 8;

			/* Reads first: they must not end the VM. */
			for (uint64_t off = 0; off < n; off++) {
				guest_access(p, space, base + off, 1, false,
					     zeros);
				guest_access(p, space, base + off, 4, false,
					     zeros);
			}
			for (uint64_t off = 0; off < n; off++)
				guest_access(p, space, base + off, 1, true,
					     zeros);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_ERROR);
	/* The UART's output really is written somewhere. */
	null_out = console_out_create(open("/dev/null", O_WRONLY | O_CLOEXEC));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct platform p;

	platform_create(&p);
	while (in.size) {
		uint8_t op = take8(&in);

		switch (op % 8) {
		case 0: /* console input for one of the UARTs */
		{
			static uint8_t flood[4096];
			uint8_t buf[64];
			size_t n = take8(&in);

			/* A paste as large as the UART's queue: overruns. */
			if (n >= 0xf0) {
				memset(flood, n, sizeof(flood));
				uart8250_receive(op & 0x80 ? p.arm_uart
							   : p.com1,
						 flood, sizeof(flood));
				break;
			}
			n %= sizeof(buf);
			for (size_t i = 0; i < n; i++)
				buf[i] = take8(&in);
			uart8250_receive(op & 0x80 ? p.arm_uart : p.com1, buf,
					 n);
			break;
		}
		case 1: /* time passes: hint bucket refill, RTC seconds */
		{
			uint32_t step = (uint32_t)take64(&in);

			p.hint_host.now_ns += (uint64_t)step << (op >> 5);
			/* Sometimes back, which must refill nothing. */
			if (op & 0x10)
				p.hint_host.now_ns -= step;
			fake_wall_clock += (op >> 3) & 3;
			break;
		}
		case 2: /* the calling thread: a vCPU, none, or out of range */
		{
			static const int threads[] = {
				0, 1, 2, 3, -1, NR_VCPUS, 1000, -1000
			};

			p.hint_host.current = threads[take8(&in) % 8];
			break;
		}
		default: /* a guest access */
		{
			uint8_t how = take8(&in);
			bool mmio = how & 1, is_write = how & 2;
			uint32_t len = ((how >> 2) & 7) + 1;
			uint8_t sel = take8(&in);
			int8_t delta = (int8_t)take8(&in);
			uint64_t addr =
				how & 0x20 ? take64(&in)
					   : pick_address(&p, mmio, sel, delta);
			uint8_t value[8];

			for (int i = 0; i < 8; i++)
				value[i] = take8(&in);
			guest_access(&p, mmio, addr, len, is_write, value);
			break;
		}
		}
	}
	final_sweep(&p);
	platform_destroy(&p);
	return 0;
}
