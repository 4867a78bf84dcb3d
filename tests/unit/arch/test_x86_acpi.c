// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "arch/x86/acpi.h"
#include "arch/x86/platform.h"
#include "core/guest_memory.h"
#include "core/log.h"

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

	assert_int_equal(acpi_build_tables(&mem, 2, &l), 0);
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

	assert_int_equal(acpi_build_tables(&mem, 1, &l), 0);
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

	assert_int_equal(acpi_build_tables(&mem, 1, &l), 0);
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
	char hid[16];
	const uint8_t *crs;
	size_t crs_len;
	uint64_t sta;
	int has_sta;
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

			while (p < end && *p)
				p++;
			if (p >= end || memcmp(name, "_HID", 4) ||
			    (size_t)(p - s) >= sizeof(dev->hid))
				return -1;
			memcpy(dev->hid, s, (size_t)(p - s));
			p++;
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
			if (memcmp(name, "_STA", 4))
				return -1;
			dev->sta = v;
			dev->has_sta = 1;
		} else {
			return -1;
		}
	}
	return 0;
}

/*
 * Find Scope (\NAME) { Device (NAME) { ... } } at the top level of the
 * DSDT body, skipping the \_S5 Name. Returns the number of devices found
 * (at most MAX), -1 on anything it cannot parse.
 */
static int find_devices(const uint8_t *aml, size_t aml_len,
			struct aml_device *devs, int max)
{
	const uint8_t *p = aml, *end = aml + aml_len;
	int found = 0;

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

/* The I/O port descriptors of a _CRS buffer, up to the end tag. */
struct crs_io {
	uint16_t min, max;
	uint8_t decode16, align, len;
};

static int parse_crs_io(const uint8_t *p, size_t len, struct crs_io *io,
			int max)
{
	const uint8_t *end = p + len;
	int n = 0;

	while (p < end) {
		unsigned int item_len;

		if (p[0] & 0x80) /* large items: hintvm writes none */
			return -1;
		item_len = p[0] & 0x07;
		if ((size_t)(end - p) < 1 + item_len)
			return -1;
		switch (p[0] >> 3) {
		case 0x08: /* I/O port descriptor */
			if (item_len != 7 || n >= max)
				return -1;
			io[n].decode16 = p[1] & 1;
			io[n].min = (uint16_t)(p[2] | p[3] << 8);
			io[n].max = (uint16_t)(p[4] | p[5] << 8);
			io[n].align = p[6];
			io[n].len = p[7];
			n++;
			break;
		case 0x0f: /* end tag */
			return item_len == 1 && p + 2 == end ? n : -1;
		default:
			return -1;
		}
		p += 1 + item_len;
	}
	return -1; /* no end tag */
}

static void test_dsdt_pvpanic_device(void **state)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	struct aml_device devs[4];
	struct crs_io io[2];
	uint32_t len;
	int n;

	assert_int_equal(acpi_build_tables(&mem, 1, &l), 0);
	len = check_table(l.dsdt, "DSDT");
	n = find_devices(ram + l.dsdt + 36, len - 36, devs, 4);
	assert_int_equal(n, 1);
	assert_string_equal(devs[0].path, "\\_SB_PEVT");
	/* Linux's pvpanic-mmio driver matches this ACPI ID. */
	assert_string_equal(devs[0].hid, "QEMU0001");
	assert_true(devs[0].has_sta);
	assert_int_equal(devs[0].sta, 0x0f);
	assert_non_null(devs[0].crs);
	assert_int_equal(parse_crs_io(devs[0].crs, devs[0].crs_len, io, 2), 1);
	assert_int_equal(io[0].decode16, 1);
	assert_int_equal(io[0].min, X86_PVPANIC_PORT);
	assert_int_equal(io[0].max, X86_PVPANIC_PORT);
	assert_int_equal(io[0].min, 0x505);
	assert_int_equal(io[0].len, 1);
	assert_int_equal(io[0].align, 1);
}

static void check_madt(unsigned int nr_vcpus)
{
	struct guest_memory mem = mem_with_ram();
	struct acpi_layout l;
	unsigned int lapics = 0, ioapics = 0, overrides = 0;
	uint32_t len;
	uint64_t p, end;

	assert_int_equal(acpi_build_tables(&mem, nr_vcpus, &l), 0);
	len = check_table(l.madt, "APIC");
	assert_int_equal(rd32(l.madt + 36), X86_LAPIC_GPA);
	assert_int_equal(rd32(l.madt + 40) & 1, 1); /* PCAT_COMPAT */
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
	check_madt(1);
	check_madt(2);
	check_madt(64);
	check_madt(ACPI_MAX_VCPUS);
}

static void test_rejects_bad_vcpu_counts_and_missing_ram(void **state)
{
	struct guest_memory mem = mem_with_ram();
	struct guest_memory none = { 0 };

	assert_int_equal(acpi_build_tables(&mem, 0, NULL), -EINVAL);
	assert_int_equal(acpi_build_tables(&mem, ACPI_MAX_VCPUS + 1, NULL),
			 -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "256 vCPUs"));
	assert_int_equal(acpi_build_tables(&none, 1, NULL), -EFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rsdp_and_xsdt),
		cmocka_unit_test(test_fadt_registers),
		cmocka_unit_test(test_dsdt_s5_package),
		cmocka_unit_test(test_dsdt_pvpanic_device),
		cmocka_unit_test(test_madt_one_entry_per_vcpu),
		cmocka_unit_test(test_rejects_bad_vcpu_counts_and_missing_ram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
