// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <string.h>

#include "abi/pvpanic_regs.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/platform.h"
#include "base/log.h"

#define GIC_PHANDLE 1
/* Interrupt specifier cells for "arm,gic-v3" (dt-bindings/interrupt-controller). */
#define GIC_FDT_SPI 0
#define GIC_FDT_PPI 1
#define IRQ_TYPE_EDGE_RISING 1
#define IRQ_TYPE_LEVEL_HIGH 4
/* MPIDR_EL1 Aff2..Aff0: what the cpu nodes' reg holds with one cell. */
#define MPIDR_AFF_MASK 0xffffffULL

/*
 * The sequential-write API: the first failing call records its error and
 * every later call does nothing, so the builder reads as a plain list.
 */
struct fdt_writer {
	void *fdt;
	int err;
};

static void begin(struct fdt_writer *w, const char *name)
{
	if (!w->err)
		w->err = fdt_begin_node(w->fdt, name);
}

static void end(struct fdt_writer *w)
{
	if (!w->err)
		w->err = fdt_end_node(w->fdt);
}

static void prop(struct fdt_writer *w, const char *name, const void *val,
		 int len)
{
	if (!w->err)
		w->err = fdt_property(w->fdt, name, val, len);
}

static void prop_str(struct fdt_writer *w, const char *name, const char *s)
{
	prop(w, name, s, (int)strlen(s) + 1);
}

static void prop_u32(struct fdt_writer *w, const char *name, uint32_t v)
{
	fdt32_t be = cpu_to_fdt32(v);

	prop(w, name, &be, sizeof(be));
}

static void prop_u64(struct fdt_writer *w, const char *name, uint64_t v)
{
	fdt64_t be = cpu_to_fdt64(v);

	prop(w, name, &be, sizeof(be));
}

/* A "reg" of up to two (address, size) pairs, two cells each. */
static void prop_reg(struct fdt_writer *w, uint64_t a0, uint64_t s0,
		     uint64_t a1, uint64_t s1, int pairs)
{
	fdt64_t cells[4] = { cpu_to_fdt64(a0), cpu_to_fdt64(s0),
			     cpu_to_fdt64(a1), cpu_to_fdt64(s1) };

	prop(w, "reg", cells, pairs * 2 * (int)sizeof(fdt64_t));
}

static void prop_spi(struct fdt_writer *w, uint32_t spi, uint32_t type)
{
	fdt32_t cells[3] = { cpu_to_fdt32(GIC_FDT_SPI), cpu_to_fdt32(spi),
			     cpu_to_fdt32(type) };

	prop(w, "interrupts", cells, sizeof(cells));
}

static void node_name(char *buf, size_t len, const char *base, uint64_t addr)
{
	snprintf(buf, len, "%s@%llx", base, (unsigned long long)addr);
}

static void add_cpus(struct fdt_writer *w, const struct arm64_fdt_params *p)
{
	char name[32];

	begin(w, "cpus");
	prop_u32(w, "#address-cells", 1);
	prop_u32(w, "#size-cells", 0);
	for (unsigned int i = 0; i < p->nr_cpus; i++) {
		uint32_t reg = (uint32_t)(p->mpidr[i] & MPIDR_AFF_MASK);

		node_name(name, sizeof(name), "cpu", reg);
		begin(w, name);
		prop_str(w, "device_type", "cpu");
		prop_str(w, "compatible", "arm,arm-v8");
		prop_str(w, "enable-method", "psci");
		prop_u32(w, "reg", reg);
		end(w);
	}
	end(w);
}

static void add_psci(struct fdt_writer *w)
{
	static const char compat[] = "arm,psci-1.0\0arm,psci-0.2";

	begin(w, "psci");
	prop(w, "compatible", compat, sizeof(compat));
	prop_str(w, "method", "hvc");
	end(w);
}

static void add_timer(struct fdt_writer *w)
{
	static const uint32_t ppis[] = {
		ARM64_PPI_SEC_PHYS_TIMER,
		ARM64_PPI_PHYS_TIMER,
		ARM64_PPI_VIRT_TIMER,
		ARM64_PPI_HYP_TIMER,
	};
	fdt32_t cells[3 * 4];

	for (unsigned int i = 0; i < 4; i++) {
		cells[3 * i] = cpu_to_fdt32(GIC_FDT_PPI);
		cells[3 * i + 1] = cpu_to_fdt32(ppis[i]);
		cells[3 * i + 2] = cpu_to_fdt32(IRQ_TYPE_LEVEL_HIGH);
	}
	begin(w, "timer");
	prop_str(w, "compatible", "arm,armv8-timer");
	prop(w, "interrupts", cells, sizeof(cells));
	prop(w, "always-on", NULL, 0);
	end(w);
}

static void add_pmu(struct fdt_writer *w)
{
	fdt32_t cells[3] = { cpu_to_fdt32(GIC_FDT_PPI),
			     cpu_to_fdt32(ARM64_PPI_PMU),
			     cpu_to_fdt32(IRQ_TYPE_LEVEL_HIGH) };

	begin(w, "pmu");
	prop_str(w, "compatible", "arm,armv8-pmuv3");
	prop(w, "interrupts", cells, sizeof(cells));
	end(w);
}

static void add_gic(struct fdt_writer *w, const struct arm64_fdt_params *p)
{
	char name[32];

	node_name(name, sizeof(name), "intc", p->gicd_gpa);
	begin(w, name);
	prop_str(w, "compatible", "arm,gic-v3");
	prop_u32(w, "#interrupt-cells", 3);
	prop(w, "interrupt-controller", NULL, 0);
	prop_reg(w, p->gicd_gpa, p->gicd_size, p->gicr_gpa, p->gicr_size, 2);
	prop_u32(w, "phandle", GIC_PHANDLE);
	end(w);
}

static void add_uart(struct fdt_writer *w, const struct arm64_fdt_params *p)
{
	char name[32];

	node_name(name, sizeof(name), "uart", p->uart.gpa);
	begin(w, name);
	prop_str(w, "compatible", "ns16550a");
	prop_reg(w, p->uart.gpa, p->uart.size, 0, 0, 1);
	prop_spi(w, p->uart.spi, IRQ_TYPE_LEVEL_HIGH);
	prop_u32(w, "clock-frequency", ARM64_UART_CLOCK_HZ);
	end(w);
}

static void add_virtio(struct fdt_writer *w,
		       const struct arm64_fdt_mmio_dev *dev)
{
	char name[40];

	node_name(name, sizeof(name), "virtio_mmio", dev->gpa);
	begin(w, name);
	prop_str(w, "compatible", "virtio,mmio");
	prop_reg(w, dev->gpa, dev->size, 0, 0, 1);
	prop_spi(w, dev->spi, IRQ_TYPE_EDGE_RISING);
	prop(w, "dma-coherent", NULL, 0);
	end(w);
}

/* docs/hint-channel.md: one MMIO page, found by its compatible. */
static void add_hint(struct fdt_writer *w, uint64_t gpa)
{
	char name[40];

	node_name(name, sizeof(name), "sched-hint", gpa);
	begin(w, name);
	prop_str(w, "compatible", "hintvm,sched-hint");
	prop_reg(w, gpa, ARM64_HINT_SIZE, 0, 0, 1);
	end(w);
}

/* Linux's pvpanic-mmio driver binds this compatible (QEMU's binding). */
static void add_pvpanic(struct fdt_writer *w, uint64_t gpa)
{
	char name[40];

	node_name(name, sizeof(name), "pvpanic-mmio", gpa);
	begin(w, name);
	prop_str(w, "compatible", "qemu,pvpanic-mmio");
	prop_reg(w, gpa, PVPANIC_LEN, 0, 0, 1);
	end(w);
}

static void add_chosen(struct fdt_writer *w, const struct arm64_fdt_params *p)
{
	char path[40];

	snprintf(path, sizeof(path), ARM64_FDT_UART_PATH_FMT,
		 (unsigned long long)p->uart.gpa);
	begin(w, "chosen");
	if (p->bootargs)
		prop_str(w, "bootargs", p->bootargs);
	prop_str(w, "stdout-path", path);
	if (p->initrd_size) {
		prop_u64(w, "linux,initrd-start", p->initrd_gpa);
		prop_u64(w, "linux,initrd-end", p->initrd_gpa + p->initrd_size);
	}
	end(w);
}

int arm64_fdt_build(const struct arm64_fdt_params *p, void *buf,
		    size_t buf_size)
{
	static const char compat[] = "hintvm,virt\0linux,dummy-virt";
	struct fdt_writer w = { .fdt = buf };
	char name[32];

	if (!p->nr_cpus || !p->mpidr)
		return hvm_set_error(-EINVAL, "device tree: no CPUs");
	if (buf_size > INT32_MAX)
		buf_size = INT32_MAX;
	w.err = fdt_create(buf, (int)buf_size);
	if (!w.err)
		w.err = fdt_finish_reservemap(buf);
	begin(&w, "");
	prop(&w, "compatible", compat, sizeof(compat));
	prop_str(&w, "model", "hintvm arm64 virtual machine");
	prop_u32(&w, "#address-cells", 2);
	prop_u32(&w, "#size-cells", 2);
	prop_u32(&w, "interrupt-parent", GIC_PHANDLE);

	add_chosen(&w, p);
	node_name(name, sizeof(name), "memory", p->ram_gpa);
	begin(&w, name);
	prop_str(&w, "device_type", "memory");
	prop_reg(&w, p->ram_gpa, p->ram_size, 0, 0, 1);
	end(&w);
	add_cpus(&w, p);
	add_psci(&w);
	add_timer(&w);
	if (p->pmu)
		add_pmu(&w);
	add_gic(&w, p);
	add_uart(&w, p);
	for (unsigned int i = 0; i < p->nr_virtio; i++)
		add_virtio(&w, &p->virtio[i]);
	if (p->hint_gpa)
		add_hint(&w, p->hint_gpa);
	if (p->pvpanic_gpa)
		add_pvpanic(&w, p->pvpanic_gpa);
	end(&w);
	if (!w.err)
		w.err = fdt_finish(buf);
	if (!w.err)
		w.err = fdt_pack(buf);
	if (w.err)
		return hvm_set_error(w.err == -FDT_ERR_NOSPACE ? -ENOSPC
							       : -EINVAL,
				     "cannot build the device tree: %s",
				     fdt_strerror(w.err));
	return (int)fdt_totalsize(buf);
}
