// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A read-only walk over the flattened device tree's structure block: just
 * enough to find the handful of nodes machine.h describes.
 */
#include "arm64.h"
#include "machine.h"
#include "platform_defaults.h"

#define FDT_MAGIC 0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE 2
#define FDT_PROP 3
#define FDT_NOP 4
#define FDT_END 9
#define MAX_DEPTH 8

struct machine machine;

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static uint64_t be64(const void *p)
{
	return (uint64_t)be32(p) << 32 | be32((const uint8_t *)p + 4);
}

/* A "compatible" string list contains WANT. */
static bool has_compat(const char *list, uint32_t len, const char *want)
{
	uint32_t i = 0;

	while (i < len) {
		if (!strcmp(list + i, want))
			return true;
		i += (uint32_t)strlen(list + i) + 1;
	}
	return false;
}

struct node {
	char name[32];
	const char *compat;
	uint32_t compat_len;
	const uint8_t *reg;
	uint32_t reg_len;
	const char *device_type;
	const char *method;
};

static void node_done(const struct node *n, const struct node *parent,
		      unsigned int depth)
{
	if (depth == 2 && !strcmp(parent->name, "cpus") && n->device_type &&
	    !strcmp(n->device_type, "cpu") && n->reg) {
		uint64_t mpidr = n->reg_len >= 8 ? be64(n->reg) : be32(n->reg);

		if (machine.nr_cpus < MAX_CPUS)
			machine.mpidr[machine.nr_cpus++] = mpidr;
		else
			machine.dropped++;
		return;
	}
	if (depth != 1)
		return;
	if (!strcmp(n->name, "psci") && n->method)
		machine.psci_smc = !strcmp(n->method, "smc");
	if (!n->compat || !n->reg || n->reg_len < 16)
		return;
	if (has_compat(n->compat, n->compat_len, "ns16550a") &&
	    machine.uart == UART_NONE) {
		machine.uart = UART_NS16550A;
		machine.uart_base = be64(n->reg);
	} else if (has_compat(n->compat, n->compat_len, "arm,pl011") &&
		   machine.uart == UART_NONE) {
		machine.uart = UART_PL011;
		machine.uart_base = be64(n->reg);
	} else if (has_compat(n->compat, n->compat_len, "virtio,mmio")) {
		if (machine.nr_virtio_mmio < MAX_VIRTIO_MMIO)
			machine.virtio_mmio[machine.nr_virtio_mmio++] =
				be64(n->reg);
	} else if (has_compat(n->compat, n->compat_len, "hintvm,sched-hint")) {
		machine.hint = be64(n->reg);
	} else if (has_compat(n->compat, n->compat_len, "arm,gic-v3") &&
		   n->reg_len >= 32) {
		machine.gicd = be64(n->reg);
		machine.gicr = be64(n->reg + 16);
	}
}

bool fdt_scan(const void *dtb)
{
	const uint8_t *base = dtb, *p, *end;
	const char *strings;
	struct node stack[MAX_DEPTH];
	int depth = -1;

	machine.bootargs = "";
	machine.gicd = DEFAULT_GICD;
	machine.gicr = DEFAULT_GICR;
	if (!dtb || ((uintptr_t)dtb & 3) || be32(base) != FDT_MAGIC)
		return false;
	machine.gicd = machine.gicr = 0; /* a tree must name its GICv3 */
	p = base + be32(base + 8);
	end = base + be32(base + 4);
	strings = (const char *)base + be32(base + 12);
	while (p + 4 <= end) {
		uint32_t token = be32(p);

		p += 4;
		if (token == FDT_BEGIN_NODE) {
			const char *name = (const char *)p;
			size_t len = strlen(name), i;

			if (++depth >= MAX_DEPTH)
				return false;
			memset(&stack[depth], 0, sizeof(stack[depth]));
			for (i = 0;
			     i < len && i < sizeof(stack[depth].name) - 1 &&
			     name[i] != '@';
			     i++)
				stack[depth].name[i] = name[i];
			p += (len + 4) & ~3u;
		} else if (token == FDT_END_NODE) {
			if (depth < 0)
				return false;
			if (depth > 0)
				node_done(&stack[depth], &stack[depth - 1],
					  (unsigned int)depth);
			depth--;
		} else if (token == FDT_PROP) {
			uint32_t len = be32(p), nameoff = be32(p + 4);
			const char *pname = strings + nameoff;
			const uint8_t *val = p + 8;
			struct node *n;

			if (depth < 0)
				return false;
			n = &stack[depth];
			if (!strcmp(pname, "compatible")) {
				n->compat = (const char *)val;
				n->compat_len = len;
			} else if (!strcmp(pname, "reg")) {
				n->reg = val;
				n->reg_len = len;
			} else if (!strcmp(pname, "device_type")) {
				n->device_type = (const char *)val;
			} else if (!strcmp(pname, "method")) {
				n->method = (const char *)val;
			} else if (!strcmp(pname, "bootargs") && depth == 1 &&
				   !strcmp(n->name, "chosen")) {
				machine.bootargs = (const char *)val;
			}
			p += 8 + ((len + 3) & ~3u);
		} else if (token == FDT_NOP) {
			continue;
		} else {
			break; /* FDT_END or garbage */
		}
	}
	return true;
}
