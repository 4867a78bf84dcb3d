// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "abi/acpi_pm_regs.h"
#include "arch/x86/acpi.h"
#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/guest_memory.h"

#define RAM_SIZE (2u << 20)

static uint8_t ram[RAM_SIZE];

static struct guest_memory mem_with_ram(void)
{
	struct guest_memory mem = { 0 };

	memset(ram, 0, sizeof(ram));
	assert_int_equal(guest_memory_add_region(&mem, 0, RAM_SIZE, ram), 0);
	return mem;
}

static uint32_t rd32(uint64_t gpa)
{
	uint32_t v;

	memcpy(&v, ram + gpa, 4);
	return v;
}

static uint64_t rd64(uint64_t gpa)
{
	uint64_t v;

	memcpy(&v, ram + gpa, 8);
	return v;
}

static uint16_t rd16(uint64_t gpa)
{
	return (uint16_t)(ram[gpa] | ram[gpa + 1] << 8);
}

static uint8_t sum(uint64_t gpa, uint32_t len)
{
	uint8_t s = 0;

	for (uint32_t i = 0; i < len; i++)
		s += ram[gpa + i];
	return s;
}

/* A table at GPA: signature, length inside the ACPI window, checksum. */
static uint32_t check_table(uint64_t gpa, const char *sig)
{
	uint32_t len = rd32(gpa + 4);

	assert_memory_equal(ram + gpa, sig, 4);
	assert_true(len >= 36);
	assert_true(gpa >= X86_ACPI_GPA);
	assert_true(gpa + len <= X86_ACPI_GPA + X86_ACPI_MAX);
	assert_int_equal(sum(gpa, len), 0);
	return len;
}

/* What Linux does without acpi_rsdp_addr: scan 16-byte boundaries. */
static uint64_t scan_for_rsdp(void)
{
	for (uint64_t a = 0xe0000; a < 0x100000; a += 16)
		if (!memcmp(ram + a, "RSD PTR ", 8) && sum(a, 20) == 0)
			return a;
	return 0;
}

static void test_rsdp_and_xsdt(void **state)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	uint64_t xsdt;

	assert_int_equal(acpi_build_tables(&mem, 2, true, &l), 0);
	assert_int_equal(l.rsdp, X86_ACPI_GPA);
	assert_int_equal(scan_for_rsdp(), l.rsdp);
	assert_int_equal(ram[l.rsdp + 15], 2); /* revision */
	assert_int_equal(rd32(l.rsdp + 20), 36);
	assert_int_equal(sum(l.rsdp, 36), 0);
	xsdt = rd64(l.rsdp + 24);
	assert_int_equal(xsdt, l.xsdt);
	assert_int_equal(check_table(xsdt, "XSDT"), 36 + 2 * 8);
	assert_int_equal(rd64(xsdt + 36), l.fadt);
	assert_int_equal(rd64(xsdt + 44), l.madt);
	assert_true(l.end <= X86_ACPI_GPA + X86_ACPI_MAX);
}

static void test_fadt_registers(void **state)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	uint64_t f;

	assert_int_equal(acpi_build_tables(&mem, 1, true, &l), 0);
	f = l.fadt;
	assert_int_equal(check_table(f, "FACP"), 276);
	assert_int_equal(ram[f + 8], 6); /* revision */
	assert_int_equal(rd32(f + 40), l.dsdt);
	assert_int_equal(rd64(f + 140), l.dsdt); /* X_DSDT */
	assert_int_equal(rd32(f + 36), l.facs);
	assert_int_equal(l.facs % 64, 0);
	assert_memory_equal(ram + l.facs, "FACS", 4);
	assert_int_equal(rd16(f + 46), ACPI_SCI_IRQ);
	assert_int_equal(rd32(f + 48), 0); /* SMI_CMD: ACPI mode fixed */
	assert_int_equal(rd32(f + 56), X86_PM1A_EVT_PORT);
	assert_int_equal(rd32(f + 64), X86_PM1A_CNT_PORT);
	assert_int_equal(ram[f + 88], 4); /* PM1_EVT_LEN */
	assert_int_equal(ram[f + 89], 2); /* PM1_CNT_LEN */
	/* X_PM1a_CNT_BLK: system I/O, 16 bits, same port. */
	assert_int_equal(ram[f + 172], 1);
	assert_int_equal(ram[f + 173], 16);
	assert_int_equal(rd64(f + 176), X86_PM1A_CNT_PORT);
	assert_int_equal(rd64(f + 152), X86_PM1A_EVT_PORT);
	/* RESET_REG: system I/O byte at 0xcf9, value 6, RESET_REG_SUP. */
	assert_int_equal(ram[f + 116], 1);
	assert_int_equal(ram[f + 117], 8);
	assert_int_equal(rd64(f + 120), X86_RESET_PORT);
	assert_int_equal(ram[f + 128], 0x06);
	assert_true(rd32(f + 112) & (1u << 10));
	/* Not hardware-reduced: the PM1 blocks are real. */
	assert_false(rd32(f + 112) & (1u << 20));
	/* IAPC_BOOT_ARCH: 8042 present, no VGA, CMOS RTC present. */
	assert_true(rd16(f + 109) & (1u << 1));
	assert_true(rd16(f + 109) & (1u << 2));
	assert_false(rd16(f + 109) & (1u << 5));
}

/*
 * A small AML reader for what the DSDT holds: finds Name(\_S5_,
 * Package(){...}) and returns its first two integer elements.
 */
static int aml_integer(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;

	if (q >= end)
		return -1;
	switch (*q) {
	case 0x00: /* ZeroOp */
	case 0x01: /* OneOp */
		*v = *q;
		*p = q + 1;
		return 0;
	case 0x0a: /* BytePrefix */
		if (q + 2 > end)
			return -1;
		*v = q[1];
		*p = q + 2;
		return 0;
	case 0x0b: /* WordPrefix */
		if (q + 3 > end)
			return -1;
		*v = (uint64_t)(q[1] | q[2] << 8);
		*p = q + 3;
		return 0;
	case 0x0c: /* DWordPrefix */
		if (q + 5 > end)
			return -1;
		*v = (uint64_t)q[1] | (uint64_t)q[2] << 8 |
		     (uint64_t)q[3] << 16 | (uint64_t)q[4] << 24;
		*p = q + 5;
		return 0;
	}
	return -1;
}

static int find_s5(const uint8_t *aml, size_t len, uint64_t typ[2])
{
	for (size_t i = 0; i + 6 < len; i++) {
		const uint8_t *p = aml + i, *end = aml + len, *pkg_end;
		unsigned int pkglen, count;

		if (p[0] != 0x08)
			continue;
		p++;
		if (*p == '\\')
			p++;
		if (p + 4 > end || memcmp(p, "_S5_", 4))
			continue;
		p += 4;
		if (p + 3 > end || p[0] != 0x12)
			return -1;
		p++;
		if (*p & 0xc0) /* multi-byte PkgLength: not used for _S5 */
			return -1;
		pkglen = *p;
		pkg_end = p + pkglen;
		if (pkg_end > end)
			return -1;
		p++;
		count = *p++;
		if (count < 2)
			return -1;
		if (aml_integer(&p, pkg_end, &typ[0]) ||
		    aml_integer(&p, pkg_end, &typ[1]))
			return -1;
		for (unsigned int k = 2; k < count; k++) {
			uint64_t ignored;

			if (aml_integer(&p, pkg_end, &ignored))
				return -1;
		}
		return p == pkg_end ? 0 : -1;
	}
	return -1;
}

static void test_dsdt_s5_package(void **state)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	uint64_t typ[2] = { 99, 99 };
	uint32_t len;

	assert_int_equal(acpi_build_tables(&mem, 1, true, &l), 0);
	len = check_table(l.dsdt, "DSDT");
	assert_int_equal(ram[l.dsdt + 8], 2); /* 64-bit integers */
	assert_int_equal(find_s5(ram + l.dsdt + 36, len - 36, typ), 0);
	assert_int_equal(typ[0], ACPI_SLP_TYP_S5);
	assert_int_equal(typ[1], ACPI_SLP_TYP_S5);
}

/*
 * PkgLength (ACPI 6.x, 20.2.4): the lead byte's top two bits count the
 * bytes that follow; the value includes the PkgLength bytes themselves.
 */
static int aml_pkglength(const uint8_t *p, const uint8_t *end, size_t *len,
			 size_t *nbytes)
{
	unsigned int follow;

	if (p >= end)
		return -1;
	follow = p[0] >> 6;
	if ((size_t)(end - p) < 1 + follow)
		return -1;
	if (follow == 0) {
		*len = p[0] & 0x3f;
	} else {
		*len = p[0] & 0x0f;
		for (unsigned int i = 1; i <= follow; i++)
			*len |= (size_t)p[i] << (4 + 8 * (i - 1));
	}
	*nbytes = 1 + follow;
	return *len >= *nbytes ? 0 : -1;
}

/* What a Device (...) holds, as far as the DSDT uses it. */
struct aml_device {
	char path[16]; /* scope + name, e.g. "\_SB_PEVT" */
	char hid[16]; /* a string _HID */
	char cid[16], ddn[16]; /* string _CID, _DDN */
	uint64_t addr[2]; /* ADDR: Package (2) of integers */
	int has_addr;
	uint64_t eisa_hid; /* an integer _HID (EisaId) */
	const uint8_t *crs;
	size_t crs_len;
	uint64_t sta, uid;
	int has_sta, has_uid;
};

/*
 * The objects inside a Device: Name (NAME, data) only, where data is a
 * String, a Buffer or an integer. Anything else fails the parse.
 */
static int aml_device_body(const uint8_t *p, const uint8_t *end,
			   struct aml_device *dev)
{
	while (p < end) {
		const uint8_t *name;
		size_t len, nbytes;
		uint64_t v;

		if (p[0] != 0x08 || end - p < 6)
			return -1;
		name = p + 1;
		p += 5;
		if (*p == 0x0d) { /* String */
			const uint8_t *s = ++p;
			char *to = !memcmp(name, "_HID", 4)   ? dev->hid
				   : !memcmp(name, "_CID", 4) ? dev->cid
				   : !memcmp(name, "_DDN", 4) ? dev->ddn
							      : NULL;

			while (p < end && *p)
				p++;
			if (p >= end || !to || (size_t)(p - s) >= 16)
				return -1;
			memcpy(to, s, (size_t)(p - s));
			p++;
		} else if (*p == 0x12) { /* Package: ADDR's two integers */
			const uint8_t *pkg_end;

			p++;
			if (aml_pkglength(p, end, &len, &nbytes) ||
			    len > (size_t)(end - p) || memcmp(name, "ADDR", 4))
				return -1;
			pkg_end = p + len;
			p += nbytes;
			if (p >= pkg_end || *p++ != 2 ||
			    aml_integer(&p, pkg_end, &dev->addr[0]) ||
			    aml_integer(&p, pkg_end, &dev->addr[1]) ||
			    p != pkg_end)
				return -1;
			dev->has_addr = 1;
		} else if (*p == 0x11) { /* Buffer */
			const uint8_t *buf_end;
			uint64_t size;

			p++;
			if (aml_pkglength(p, end, &len, &nbytes) ||
			    len > (size_t)(end - p))
				return -1;
			buf_end = p + len;
			p += nbytes;
			if (aml_integer(&p, buf_end, &size) ||
			    size != (uint64_t)(buf_end - p) ||
			    memcmp(name, "_CRS", 4))
				return -1;
			dev->crs = p;
			dev->crs_len = (size_t)size;
			p = buf_end;
		} else if (!aml_integer(&p, end, &v)) {
			if (!memcmp(name, "_STA", 4)) {
				dev->sta = v;
				dev->has_sta = 1;
			} else if (!memcmp(name, "_UID", 4)) {
				dev->uid = v;
				dev->has_uid = 1;
			} else if (!memcmp(name, "_HID", 4)) {
				dev->eisa_hid = v;
			} else {
				return -1;
			}
		} else {
			return -1;
		}
	}
	return 0;
}

/* A Method (NAME, 0) in a scope: its path and the bytes of its body. */
struct aml_method {
	char path[16];
	const uint8_t *body;
	size_t len;
};

static struct aml_method methods[4];
static int nr_methods;

/* A Method at P (its opcode), ending by SCOPE_END; NULL if malformed. */
static const uint8_t *aml_method(const uint8_t *p, const uint8_t *scope_end,
				 const uint8_t *scope)
{
	struct aml_method *m = &methods[nr_methods];
	const uint8_t *m_end;
	size_t len, nbytes;

	if (nr_methods >= 4 || aml_pkglength(p + 1, scope_end, &len, &nbytes) ||
	    len > (size_t)(scope_end - p - 1))
		return NULL;
	m_end = p + 1 + len;
	p += 1 + nbytes;
	if (m_end - p < 5 || p[4] != 0) /* no arguments, not serialized */
		return NULL;
	memset(m, 0, sizeof(*m));
	memcpy(m->path, scope, 5);
	memcpy(m->path + 5, p, 4);
	m->body = p + 5;
	m->len = (size_t)(m_end - m->body);
	nr_methods++;
	return m_end;
}

/*
 * Find Scope (\NAME) { Device (NAME) { ... } } at the top level of the
 * DSDT body, skipping the \_S5 Name; Methods in a scope go to methods[].
 * Returns the number of devices found (at most MAX), -1 on anything it
 * cannot parse.
 */
static int find_devices(const uint8_t *aml, size_t aml_len,
			struct aml_device *devs, int max)
{
	const uint8_t *p = aml, *end = aml + aml_len;
	int found = 0;

	nr_methods = 0;

	while (p < end) {
		const uint8_t *scope_end, *scope;
		size_t len, nbytes;

		if (p[0] == 0x08) { /* Name (\_S5_, Package): skip it */
			p += 1 + (p[1] == '\\') + 4;
			if (p + 1 >= end || p[0] != 0x12 ||
			    aml_pkglength(p + 1, end, &len, &nbytes))
				return -1;
			p += 1 + len;
			continue;
		}
		if (p[0] != 0x10 || aml_pkglength(p + 1, end, &len, &nbytes) ||
		    len > (size_t)(end - p - 1))
			return -1;
		scope_end = p + 1 + len;
		p += 1 + nbytes;
		if (scope_end - p < 5 || p[0] != '\\')
			return -1;
		scope = p;
		p += 5;
		while (p < scope_end) {
			struct aml_device *dev = &devs[found];
			const uint8_t *dev_end;

			if (p[0] == 0x14) { /* Method */
				p = aml_method(p, scope_end, scope);
				if (!p)
					return -1;
				continue;
			}
			if (found >= max || scope_end - p < 3 || p[0] != 0x5b ||
			    p[1] != 0x82 ||
			    aml_pkglength(p + 2, scope_end, &len, &nbytes) ||
			    len > (size_t)(scope_end - p - 2))
				return -1;
			dev_end = p + 2 + len;
			p += 2 + nbytes;
			if (dev_end - p < 4)
				return -1;
			memset(dev, 0, sizeof(*dev));
			memcpy(dev->path, scope, 5);
			memcpy(dev->path + 5, p, 4);
			p += 4;
			if (aml_device_body(p, dev_end, dev))
				return -1;
			p = dev_end;
			found++;
		}
		if (p != scope_end)
			return -1;
	}
	return p == end ? found : -1;
}

/* What a _CRS buffer holds: I/O port descriptors and address windows. */
struct crs_io {
	uint16_t min, max;
	uint8_t decode16, align, len;
};

struct crs_window {
	uint8_t type, flags, type_flags;
	uint64_t min, max, len;
};

struct crs {
	struct crs_io io[4];
	struct crs_window win[8];
	int nr_io, nr_win;
};

static uint64_t le(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * Word (0x88) and DWord (0x87) Address Space Descriptors: type, flags, then
 * granularity, min, max, translation and length of 2 or 4 bytes each.
 */
static int parse_window(const uint8_t *item, size_t body_len,
			unsigned int bytes, struct crs_window *w)
{
	if (body_len != 3 + 5 * bytes)
		return -1;
	w->type = item[3];
	w->flags = item[4];
	w->type_flags = item[5];
	w->min = le(item + 6 + bytes, bytes);
	w->max = le(item + 6 + 2 * bytes, bytes);
	w->len = le(item + 6 + 4 * bytes, bytes);
	return le(item + 6, bytes) == 0 && le(item + 6 + 3 * bytes, bytes) == 0
		       ? 0
		       : -1; /* granularity and translation: none */
}

static int parse_crs(const uint8_t *p, size_t len, struct crs *crs)
{
	const uint8_t *end = p + len;

	memset(crs, 0, sizeof(*crs));
	while (p < end) {
		size_t item_len;

		if (p[0] & 0x80) { /* large item: 16-bit length follows */
			if (end - p < 3)
				return -1;
			item_len = p[1] | (size_t)p[2] << 8;
			if ((size_t)(end - p) < 3 + item_len ||
			    crs->nr_win >= 8)
				return -1;
			if (parse_window(p, item_len,
					 p[0] == 0x88	? 2
					 : p[0] == 0x87 ? 4
							: 0,
					 &crs->win[crs->nr_win++]))
				return -1;
			p += 3 + item_len;
			continue;
		}
		item_len = p[0] & 0x07;
		if ((size_t)(end - p) < 1 + item_len)
			return -1;
		switch (p[0] >> 3) {
		case 0x08: { /* I/O port descriptor */
			struct crs_io *io = &crs->io[crs->nr_io];

			if (item_len != 7 || crs->nr_io >= 4)
				return -1;
			io->decode16 = p[1] & 1;
			io->min = (uint16_t)(p[2] | p[3] << 8);
			io->max = (uint16_t)(p[4] | p[5] << 8);
			io->align = p[6];
			io->len = p[7];
			crs->nr_io++;
			break;
		}
		case 0x0f: /* end tag */
			return item_len == 1 && p + 2 == end ? 0 : -1;
		default:
			return -1;
		}
		p += 1 + item_len;
	}
	return -1; /* no end tag */
}

/* The DSDT's devices, parsed; returns how many. */
static int dsdt_devices(struct aml_device *devs, int max)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	uint32_t len;

	assert_int_equal(acpi_build_tables(&mem, 1, true, &l), 0);
	len = check_table(l.dsdt, "DSDT");
	return find_devices(ram + l.dsdt + 36, len - 36, devs, max);
}

/*
 * Linux's vmgenid driver binds to VMGENCTR (or the _CID), maps the 16
 * bytes at ADDR, and rereads them when the device is notified: the GPE
 * the platform raises after a restore runs \_GPE._E00, which notifies
 * \_SB.VGEN with 0x80. The FADT's GPE0 block is where that GPE lives.
 */
static void test_dsdt_vmgenid_and_its_gpe(void **state)
{
	static const uint8_t notify[] = { 0x86, '\\', 0x2e, '_', 'S',  'B', '_',
					  'V',	'G',  'E',  'N', 0x0a, 0x80 };
	struct guest_memory mem = mem_with_ram();
	struct aml_device devs[4];
	struct acpi_layout l;

	assert_int_equal(dsdt_devices(devs, 4), 3);
	assert_string_equal(devs[2].path, "\\_SB_VGEN");
	assert_string_equal(devs[2].hid, "VMGENCTR");
	assert_string_equal(devs[2].cid, "VM_GEN_COUNTER");
	assert_true(devs[2].has_addr);
	assert_int_equal(devs[2].addr[0], X86_VMGENID_GPA);
	assert_int_equal(devs[2].addr[1], 0);
	/* Below the tables' end and outside them, in the reserved window. */
	assert_true(X86_VMGENID_GPA >= X86_ACPI_GPA + X86_ACPI_MAX);
	assert_true(X86_VMGENID_GPA + 16 <= X86_MPTABLE_GPA);
	assert_int_equal(nr_methods, 1);
	assert_string_equal(methods[0].path, "\\_GPE_E00");
	assert_int_equal(X86_VMGENID_GPE, 0);
	assert_int_equal(methods[0].len, sizeof(notify));
	assert_memory_equal(methods[0].body, notify, sizeof(notify));
	/* FADT: GPE0_BLK, its length, and X_GPE0_BLK (I/O, bytewise). */
	assert_int_equal(acpi_build_tables(&mem, 1, true, &l), 0);
	assert_int_equal(rd32(l.fadt + 80), X86_GPE0_PORT);
	assert_int_equal(ram[l.fadt + 92], ACPI_GPE0_LEN);
	assert_int_equal(ram[l.fadt + 220], 1);
	assert_int_equal(ram[l.fadt + 221], 8 * ACPI_GPE0_LEN);
	assert_int_equal(ram[l.fadt + 223], 1);
	assert_int_equal(rd64(l.fadt + 224), X86_GPE0_PORT);
}

static void test_dsdt_pvpanic_device(void **state)
{
	struct aml_device devs[4];
	struct crs crs;

	assert_int_equal(dsdt_devices(devs, 4), 3);
	assert_string_equal(devs[0].path, "\\_SB_PEVT");
	/* Linux's pvpanic-mmio driver matches this ACPI ID. */
	assert_string_equal(devs[0].hid, "QEMU0001");
	assert_true(devs[0].has_sta);
	assert_int_equal(devs[0].sta, 0x0f);
	assert_non_null(devs[0].crs);
	assert_int_equal(parse_crs(devs[0].crs, devs[0].crs_len, &crs), 0);
	assert_int_equal(crs.nr_io, 1);
	assert_int_equal(crs.nr_win, 0);
	assert_int_equal(crs.io[0].decode16, 1);
	assert_int_equal(crs.io[0].min, X86_PVPANIC_PORT);
	assert_int_equal(crs.io[0].max, X86_PVPANIC_PORT);
	assert_int_equal(crs.io[0].min, 0x505);
	assert_int_equal(crs.io[0].len, 1);
	assert_int_equal(crs.io[0].align, 1);
}

/*
 * Linux binds its PCI root driver to PNP0A03 and takes bus numbers, the
 * config ports and the windows it may route from _CRS: BARs outside the
 * memory window would be moved, ports outside the I/O windows refused.
 */
static void test_dsdt_pci_root_bridge(void **state)
{
	struct aml_device devs[4];
	struct crs_window *w;
	struct crs crs;

	assert_int_equal(dsdt_devices(devs, 4), 3);
	assert_string_equal(devs[1].path, "\\_SB_PCI0");
	/* EisaId ("PNP0A03"): "PNP" in 5-bit letters, then 0x0a03. */
	assert_int_equal(devs[1].eisa_hid, 0x030ad041);
	assert_true(devs[1].has_uid);
	assert_int_equal(devs[1].uid, 0);
	assert_false(devs[1].has_sta); /* absent _STA: present */
	assert_int_equal(parse_crs(devs[1].crs, devs[1].crs_len, &crs), 0);

	assert_int_equal(crs.nr_io, 1); /* configuration mechanism #1 */
	assert_int_equal(crs.io[0].min, 0xcf8);
	assert_int_equal(crs.io[0].max, 0xcf8);
	assert_int_equal(crs.io[0].len, 8);

	assert_int_equal(crs.nr_win, 4);
	w = &crs.win[0]; /* bus 0 only */
	assert_int_equal(w->type, 2);
	assert_int_equal(w->min, 0);
	assert_int_equal(w->max, 0);
	assert_int_equal(w->len, 1);
	/* I/O around the config ports, covering every ISA device's port. */
	assert_int_equal(crs.win[1].type, 1);
	assert_int_equal(crs.win[1].min, 0);
	assert_int_equal(crs.win[1].max, 0xcf7);
	assert_int_equal(crs.win[1].len, 0xcf8);
	assert_int_equal(crs.win[2].type, 1);
	assert_int_equal(crs.win[2].min, 0xd00);
	assert_int_equal(crs.win[2].max, 0xffff);
	assert_int_equal(crs.win[2].len, 0xf300);
	w = &crs.win[3]; /* where hintvm assigns BARs */
	assert_int_equal(w->type, 0);
	assert_int_equal(w->min, X86_PCI_MMIO_GPA);
	assert_int_equal(w->max, X86_PCI_MMIO_GPA + X86_PCI_MMIO_SIZE - 1);
	assert_int_equal(w->len, X86_PCI_MMIO_SIZE);
	for (int i = 0; i < 4; i++) {
		/* producer, min and max fixed (not relocatable by the OS) */
		assert_int_equal(crs.win[i].flags & 0x0d, 0x0c);
		assert_true(crs.win[i].max - crs.win[i].min + 1 ==
			    crs.win[i].len);
	}
}

static void check_madt(unsigned int nr_vcpus, bool legacy_pic)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	unsigned int lapics = 0, ioapics = 0, overrides = 0;
	uint32_t len;
	uint64_t p, end;

	assert_int_equal(acpi_build_tables(&mem, nr_vcpus, legacy_pic, &l), 0);
	len = check_table(l.madt, "APIC");
	assert_int_equal(rd32(l.madt + 36), X86_LAPIC_GPA);
	/* PCAT_COMPAT: the dual 8259 exists (in-kernel irqchip only). */
	assert_int_equal(rd32(l.madt + 40) & 1, legacy_pic);
	end = l.madt + len;
	for (p = l.madt + 44; p < end; p += ram[p + 1]) {
		assert_true(ram[p + 1] >= 2);
		switch (ram[p]) {
		case 0:
			assert_int_equal(ram[p + 1], 8);
			assert_int_equal(ram[p + 3], lapics); /* APIC ID */
			assert_int_equal(rd32(p + 4) & 1, 1); /* enabled */
			lapics++;
			break;
		case 1:
			assert_int_equal(ram[p + 1], 12);
			assert_int_equal(rd32(p + 4), X86_IOAPIC_GPA);
			assert_int_equal(rd32(p + 8), 0); /* GSI base */
			ioapics++;
			break;
		case 2:
			assert_int_equal(ram[p + 1], 10);
			/*
			 * Only the SCI: IRQ0 stays on GSI 0, where KVM's
			 * default routing puts the in-kernel PIT.
			 */
			assert_int_equal(ram[p + 3], ACPI_SCI_IRQ);
			assert_int_equal(rd32(p + 4), ACPI_SCI_IRQ);
			/* level (3 << 2), active high (1) */
			assert_int_equal(rd16(p + 8), 0xd);
			overrides++;
			break;
		default:
			fail_msg("unexpected MADT entry type %u", ram[p]);
		}
	}
	assert_int_equal(p, end);
	assert_int_equal(lapics, nr_vcpus);
	assert_int_equal(ioapics, 1);
	assert_int_equal(overrides, 1);
}

static void test_madt_one_entry_per_vcpu(void **state)
{
	check_madt(1, true);
	check_madt(2, true);
	check_madt(64, true);
	check_madt(ACPI_MAX_VCPUS, true);
	check_madt(1, false);
	check_madt(ACPI_MAX_VCPUS, false);
}

static void test_rejects_bad_vcpu_counts_and_missing_ram(void **state)
{
	struct guest_memory mem = mem_with_ram();
	struct guest_memory none = { 0 };

	assert_int_equal(acpi_build_tables(&mem, 0, true, NULL), -EINVAL);
	assert_int_equal(
		acpi_build_tables(&mem, ACPI_MAX_VCPUS + 1, true, NULL),
		-EINVAL);
	assert_non_null(strstr(hvm_error_message(), "256 vCPUs"));
	assert_int_equal(acpi_build_tables(&none, 1, true, NULL), -EFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rsdp_and_xsdt),
		cmocka_unit_test(test_fadt_registers),
		cmocka_unit_test(test_dsdt_vmgenid_and_its_gpe),
		cmocka_unit_test(test_dsdt_s5_package),
		cmocka_unit_test(test_dsdt_pvpanic_device),
		cmocka_unit_test(test_dsdt_pci_root_bridge),
		cmocka_unit_test(test_madt_one_entry_per_vcpu),
		cmocka_unit_test(test_rejects_bad_vcpu_counts_and_missing_ram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
