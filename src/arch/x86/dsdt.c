// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The DSDT body, in AML (ACPI 6.x chapters 6.4 and 20):
 *
 *   Name (\_S5, Package (4) { 5, 5, 0, 0 })
 *   Scope (\_SB) {
 *     Device (PEVT) {
 *       Name (_HID, "QEMU0001")
 *       Name (_CRS, ResourceTemplate () { IO (Decode16, 0x505, 0x505, 1, 1) })
 *       Name (_STA, 0x0F)
 *     }
 *     Device (PCI0) {
 *       Name (_HID, EisaId ("PNP0A03"))
 *       Name (_UID, 0)
 *       Name (_CRS, ResourceTemplate () {
 *         WordBusNumber (0, 0)                  bus 0 only
 *         IO (Decode16, 0xcf8, 0xcf8, 1, 8)     configuration mechanism #1
 *         WordIO (0x0000, 0x0cf7)               ports forwarded to the bus
 *         WordIO (0x0d00, 0xffff)
 *         DWordMemory (X86_PCI_MMIO_GPA, + X86_PCI_MMIO_SIZE - 1)
 *       })
 *     }
 *     Device (VGEN) {
 *       Name (_HID, "VMGENCTR")
 *       Name (_CID, "VM_GEN_COUNTER")
 *       Name (_DDN, "VM_Gen_Counter")
 *       Name (ADDR, Package (2) { X86_VMGENID_GPA, 0 })
 *     }
 *   }
 *   Scope (\_GPE) {
 *     Method (_E00, 0, NotSerialized) { Notify (\_SB.VGEN, 0x80) }
 *   }
 *
 * The first two \_S5 elements are the SLP_TYP values Linux writes to
 * PM1a/PM1b_CNT for S5; they must equal ACPI_SLP_TYP_S5, which the acpi_pm
 * device decodes. PEVT is the pvpanic device as QEMU describes it: Linux's
 * pvpanic driver binds to _HID QEMU0001 and takes the port from _CRS. PCI0
 * is the host bridge of src/devices/pci: its memory window is where hintvm
 * places BARs, so Linux keeps them. No _PRT: devices interrupt through
 * MSI-X only. VGEN is the VM generation ID (devices/vmgenid.h): Linux's
 * vmgenid driver binds to VMGENCTR or VM_GEN_COUNTER and reads the 16
 * bytes at ADDR (a Name evaluates as well as the spec's Method); a restore
 * raises GPE X86_VMGENID_GPE, whose _E00 tells the driver to read them
 * again. tests/unit/arch/x86/test_acpi.c parses all of it back.
 */
#include <string.h>

#include "abi/acpi_pm_regs.h"
#include "arch/x86/dsdt.h"
#include "arch/x86/platform.h"

#define AML_ZERO 0x00
#define AML_BYTE_PREFIX 0x0a
#define AML_DWORD_PREFIX 0x0c
#define AML_STRING_PREFIX 0x0d
#define AML_NAME_OP 0x08
#define AML_BUFFER_OP 0x11
#define AML_PACKAGE_OP 0x12
#define AML_SCOPE_OP 0x10
#define AML_METHOD_OP 0x14
#define AML_DUAL_NAME_PREFIX 0x2e
#define AML_NOTIFY_OP 0x86
#define AML_EXT_OP 0x5b
#define AML_DEVICE_OP 0x82 /* after AML_EXT_OP */

/* Resource descriptors (6.4.2 small, 6.4.3 large). */
#define RES_IO 0x47 /* small item 0x08, 7 bytes */
#define RES_END 0x79 /* small item 0x0f, 1 byte */
#define RES_DWORD_ADDRESS 0x87
#define RES_WORD_ADDRESS 0x88
#define RES_TYPE_MEMORY 0
#define RES_TYPE_IO 1
#define RES_TYPE_BUS 2
/* General flags: producer, positive decode, min and max fixed. */
#define RES_FLAGS_FIXED_PRODUCER 0x0c
#define RES_IO_ENTIRE_RANGE 0x03
#define RES_MEM_READ_WRITE 0x01 /* non-cacheable */

/*
 * EisaId ("PNP0A03") as the AML integer: three 5-bit letters (A = 1) packed
 * big-endian into the first two bytes, the product number big-endian into
 * the last two.
 */
#define EISA_LETTER(ch) ((uint32_t)((ch)-0x40))
#define EISA_ID(a, b, c, product)                            \
	(EISA_LETTER(a) << 2 | EISA_LETTER(b) >> 3 |         \
	 ((EISA_LETTER(b) & 7) << 5 | EISA_LETTER(c)) << 8 | \
	 (uint32_t)(((product) >> 8) & 0xff) << 16 |         \
	 (uint32_t)((product)&0xff) << 24)
#define DSDT_EISA_PNP0A03 EISA_ID('P', 'N', 'P', 0x0a03)

struct aml {
	uint8_t *buf;
	size_t len, cap;
	int overflow;
};

static void emit(struct aml *a, const void *p, size_t n)
{
	if (n > a->cap - a->len) {
		a->overflow = 1;
		return;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

static void emit8(struct aml *a, uint8_t v)
{
	emit(a, &v, 1);
}

static void emit16(struct aml *a, uint16_t v)
{
	emit8(a, (uint8_t)v);
	emit8(a, (uint8_t)(v >> 8));
}

static void emit32(struct aml *a, uint32_t v)
{
	emit16(a, (uint16_t)v);
	emit16(a, (uint16_t)(v >> 16));
}

/*
 * Start an object with a PkgLength; aml_close() fills it in. Always the
 * two-byte form (up to 4095 bytes), which ACPI allows for any length.
 */
static size_t aml_open(struct aml *a)
{
	size_t at = a->len;

	emit16(a, 0);
	return at;
}

static void aml_close(struct aml *a, size_t at)
{
	size_t len = a->len - at; /* PkgLength counts its own bytes */

	if (a->overflow)
		return;
	if (len > 0xfff) {
		a->overflow = 1;
		return;
	}
	a->buf[at] = (uint8_t)(0x40 | (len & 0x0f));
	a->buf[at + 1] = (uint8_t)(len >> 4);
}

static void aml_name(struct aml *a, const char name[4])
{
	emit8(a, AML_NAME_OP);
	emit(a, name, 4);
}

static void aml_name_string(struct aml *a, const char name[4], const char *s)
{
	aml_name(a, name);
	emit8(a, AML_STRING_PREFIX);
	emit(a, s, strlen(s) + 1);
}

static void aml_name_byte(struct aml *a, const char name[4], uint8_t v)
{
	aml_name(a, name);
	if (v == 0) {
		emit8(a, AML_ZERO);
		return;
	}
	emit8(a, AML_BYTE_PREFIX);
	emit8(a, v);
}

static void aml_name_dword(struct aml *a, const char name[4], uint32_t v)
{
	aml_name(a, name);
	emit8(a, AML_DWORD_PREFIX);
	emit32(a, v);
}

/* Name (NAME, Buffer () { ... }): returns where the buffer body starts. */
static size_t crs_open(struct aml *a, size_t *pkg)
{
	aml_name(a, "_CRS");
	emit8(a, AML_BUFFER_OP);
	*pkg = aml_open(a);
	emit8(a, AML_BYTE_PREFIX); /* buffer size, patched by crs_close */
	emit8(a, 0);
	return a->len;
}

static void crs_close(struct aml *a, size_t pkg, size_t body)
{
	emit8(a, RES_END);
	emit8(a, 0); /* checksum 0: "valid" */
	if (!a->overflow) {
		if (a->len - body > 0xff)
			a->overflow = 1;
		else
			a->buf[body - 1] = (uint8_t)(a->len - body);
	}
	aml_close(a, pkg);
}

static void res_io(struct aml *a, uint16_t port, uint8_t len)
{
	emit8(a, RES_IO);
	emit8(a, 0x01); /* 16-bit decode */
	emit16(a, port); /* minimum */
	emit16(a, port); /* maximum */
	emit8(a, 1); /* alignment */
	emit8(a, len);
}

/* Word Address Space Descriptor: a bus-number or I/O window. */
static void res_word(struct aml *a, uint8_t type, uint8_t type_flags,
		     uint16_t min, uint16_t max)
{
	emit8(a, RES_WORD_ADDRESS);
	emit16(a, 13); /* length of what follows */
	emit8(a, type);
	emit8(a, RES_FLAGS_FIXED_PRODUCER);
	emit8(a, type_flags);
	emit16(a, 0); /* granularity */
	emit16(a, min);
	emit16(a, max);
	emit16(a, 0); /* translation */
	emit16(a, (uint16_t)(max - min + 1));
}

static void res_dword_memory(struct aml *a, uint32_t min, uint32_t max)
{
	emit8(a, RES_DWORD_ADDRESS);
	emit16(a, 23);
	emit8(a, RES_TYPE_MEMORY);
	emit8(a, RES_FLAGS_FIXED_PRODUCER);
	emit8(a, RES_MEM_READ_WRITE);
	emit32(a, 0); /* granularity */
	emit32(a, min);
	emit32(a, max);
	emit32(a, 0); /* translation */
	emit32(a, max - min + 1);
}

/* Device (NAME) { ...: returns what aml_close() needs. */
static size_t device_open(struct aml *a, const char name[4])
{
	size_t dev;

	emit8(a, AML_EXT_OP);
	emit8(a, AML_DEVICE_OP);
	dev = aml_open(a);
	emit(a, name, 4);
	return dev;
}

static void device_pvpanic(struct aml *a)
{
	size_t dev = device_open(a, "PEVT"), crs, body;

	aml_name_string(a, "_HID", "QEMU0001");
	body = crs_open(a, &crs);
	res_io(a, X86_PVPANIC_PORT, 1);
	crs_close(a, crs, body);
	aml_name_byte(a, "_STA", 0x0f); /* present, enabled, shown, working */
	aml_close(a, dev);
}

static void device_pci_root(struct aml *a)
{
	size_t dev = device_open(a, "PCI0"), crs, body;

	aml_name_dword(a, "_HID", DSDT_EISA_PNP0A03);
	aml_name_byte(a, "_UID", 0);
	body = crs_open(a, &crs);
	res_word(a, RES_TYPE_BUS, 0, 0, 0);
	res_io(a, 0xcf8, 8);
	res_word(a, RES_TYPE_IO, RES_IO_ENTIRE_RANGE, 0x0000, 0x0cf7);
	res_word(a, RES_TYPE_IO, RES_IO_ENTIRE_RANGE, 0x0d00, 0xffff);
	res_dword_memory(a, (uint32_t)X86_PCI_MMIO_GPA,
			 (uint32_t)(X86_PCI_MMIO_GPA + X86_PCI_MMIO_SIZE - 1));
	crs_close(a, crs, body);
	aml_close(a, dev);
}

static void device_vmgenid(struct aml *a)
{
	size_t dev = device_open(a, "VGEN"), pkg;

	aml_name_string(a, "_HID", "VMGENCTR");
	aml_name_string(a, "_CID", "VM_GEN_COUNTER");
	aml_name_string(a, "_DDN", "VM_Gen_Counter");
	aml_name(a, "ADDR");
	emit8(a, AML_PACKAGE_OP);
	pkg = aml_open(a);
	emit8(a, 2); /* NumElements: low and high 32 bits of the address */
	emit8(a, AML_DWORD_PREFIX);
	emit32(a, (uint32_t)X86_VMGENID_GPA);
	emit8(a, AML_ZERO);
	aml_close(a, pkg);
	aml_close(a, dev);
}

/* Scope (\_GPE) { Method (_Exx) { Notify (\_SB.VGEN, 0x80) } } */
static void gpe_vmgenid(struct aml *a)
{
	/* _Exx names the GPE in two hex digits (ACPI 5.6.4.1). */
	const char method[4] = { '_', 'E',
				 "0123456789ABCDEF"[X86_VMGENID_GPE >> 4],
				 "0123456789ABCDEF"[X86_VMGENID_GPE & 15] };
	size_t scope, m;

	_Static_assert(X86_VMGENID_GPE < 16, "GPE0 has 16 events");
	emit8(a, AML_SCOPE_OP);
	scope = aml_open(a);
	emit(a, "\\_GPE", 5);
	emit8(a, AML_METHOD_OP);
	m = aml_open(a);
	emit(a, method, 4);
	emit8(a, 0); /* no arguments, not serialized */
	emit8(a, AML_NOTIFY_OP);
	emit8(a, '\\');
	emit8(a, AML_DUAL_NAME_PREFIX);
	emit(a, "_SB_VGEN", 8);
	emit8(a, AML_BYTE_PREFIX);
	emit8(a, 0x80); /* the spec's "the ID changed" */
	aml_close(a, m);
	aml_close(a, scope);
}

size_t dsdt_build_aml(uint8_t *buf, size_t cap)
{
	/* clang-format off */
	static const uint8_t s5[] = {
		AML_NAME_OP, '\\', '_', 'S', '5', '_',
		AML_PACKAGE_OP, 0x08, 0x04,	  /* PkgLength 8, 4 elements */
		AML_BYTE_PREFIX, ACPI_SLP_TYP_S5, /* PM1a SLP_TYP */
		AML_BYTE_PREFIX, ACPI_SLP_TYP_S5, /* PM1b SLP_TYP */
		AML_ZERO, AML_ZERO,		  /* reserved */
	};
	/* clang-format on */
	struct aml a = { .buf = buf, .cap = cap };
	size_t scope;

	emit(&a, s5, sizeof(s5));
	emit8(&a, AML_SCOPE_OP);
	scope = aml_open(&a);
	emit(&a, "\\_SB_", 5);
	device_pvpanic(&a);
	device_pci_root(&a);
	device_vmgenid(&a);
	aml_close(&a, scope);
	gpe_vmgenid(&a);
	return a.overflow ? 0 : a.len;
}
