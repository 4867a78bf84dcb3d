/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpu_tables.h"

#include "arch/x86/platform.h"
#include "lib.h"

/* Tables must lie below 4 GiB (the identity map) and be reasonably sized. */
#define IDENTITY_MAP_END 0x100000000ULL
#define TABLE_MAX_LEN 0x10000

static const void *phys(uint64_t gpa, uint64_t len)
{
	if (gpa == 0 || len > IDENTITY_MAP_END || gpa > IDENTITY_MAP_END - len)
		return NULL;
	return (const void *)(uintptr_t)gpa;
}

static uint8_t checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum;
}

static void list_add(struct cpu_list *list, uint32_t apic_id)
{
	/* xAPIC mode addresses 8-bit IDs; 0xff is the broadcast ID. */
	if (apic_id >= 0xff || list->count >= MAX_CPUS) {
		list->dropped++;
		return;
	}
	list->apic_ids[list->count++] = apic_id;
}

/* ---- ACPI ---- */

struct __attribute__((packed)) acpi_rsdp {
	char signature[8];
	uint8_t checksum;
	char oem_id[6];
	uint8_t revision;
	uint32_t rsdt_address;
	uint32_t length; /* revision >= 2 */
	uint64_t xsdt_address;
	uint8_t extended_checksum;
	uint8_t reserved[3];
};

struct __attribute__((packed)) acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
};

struct __attribute__((packed)) acpi_madt {
	struct acpi_header header;
	uint32_t lapic_address;
	uint32_t flags;
};

#define MADT_LOCAL_APIC 0
#define MADT_LOCAL_X2APIC 9
#define MADT_ENABLED 0x1

#define RSDP_V1_LEN 20
#define BIOS_AREA_START 0xe0000
#define BIOS_AREA_END 0x100000

static const struct acpi_rsdp *rsdp_check(uint64_t gpa)
{
	const struct acpi_rsdp *rsdp = phys(gpa, sizeof(*rsdp));

	if (!rsdp || memcmp(rsdp->signature, "RSD PTR ", 8) ||
	    checksum(rsdp, RSDP_V1_LEN))
		return NULL;
	if (rsdp->revision >= 2 &&
	    (rsdp->length < sizeof(*rsdp) || rsdp->length > TABLE_MAX_LEN ||
	     checksum(rsdp, rsdp->length)))
		return NULL;
	return rsdp;
}

/* The scan compares the signature as one 64-bit word: kernel mode on the
 * dev host runs ~1 MIPS and this may cover 8192 slots. */
static const struct acpi_rsdp *rsdp_scan(void)
{
	uint64_t want;

	memcpy(&want, "RSD PTR ", 8);
	for (uint64_t gpa = BIOS_AREA_START; gpa < BIOS_AREA_END; gpa += 16) {
		if (*(const volatile uint64_t *)(uintptr_t)gpa == want) {
			const struct acpi_rsdp *rsdp = rsdp_check(gpa);

			if (rsdp)
				return rsdp;
		}
	}
	return NULL;
}

static const struct acpi_header *acpi_table(uint64_t gpa)
{
	const struct acpi_header *h = phys(gpa, sizeof(*h));

	if (!h || h->length < sizeof(*h) || h->length > TABLE_MAX_LEN ||
	    !phys(gpa, h->length) || checksum(h, h->length))
		return NULL;
	return h;
}

static const struct acpi_madt *find_madt(const struct acpi_rsdp *rsdp)
{
	bool xsdt = rsdp->revision >= 2 && rsdp->xsdt_address;
	const struct acpi_header *sdt =
		acpi_table(xsdt ? rsdp->xsdt_address : rsdp->rsdt_address);
	size_t entry_size = xsdt ? 8 : 4;

	if (!sdt || memcmp(sdt->signature, xsdt ? "XSDT" : "RSDT", 4))
		return NULL;
	const uint8_t *entries = (const uint8_t *)(sdt + 1);
	size_t count = (sdt->length - sizeof(*sdt)) / entry_size;

	for (size_t i = 0; i < count; i++) {
		uint64_t gpa = 0;

		memcpy(&gpa, entries + i * entry_size, entry_size);
		const struct acpi_header *h = acpi_table(gpa);

		if (h && !memcmp(h->signature, "APIC", 4) &&
		    h->length >= sizeof(struct acpi_madt))
			return (const struct acpi_madt *)h;
	}
	return NULL;
}

int acpi_find_cpus(uint64_t rsdp_gpa, struct cpu_list *list)
{
	const struct acpi_rsdp *rsdp =
		rsdp_gpa ? rsdp_check(rsdp_gpa) : rsdp_scan();
	const struct acpi_madt *madt = rsdp ? find_madt(rsdp) : NULL;

	if (!madt)
		return -1;
	const uint8_t *p = (const uint8_t *)(madt + 1);
	const uint8_t *end = (const uint8_t *)madt + madt->header.length;

	list->count = 0;
	list->dropped = 0;
	while (end - p >= 2 && p[1] >= 2 && p[1] <= end - p) {
		uint32_t flags, apic_id;

		if (p[0] == MADT_LOCAL_APIC && p[1] >= 8) {
			apic_id = p[3];
			memcpy(&flags, p + 4, 4);
		} else if (p[0] == MADT_LOCAL_X2APIC && p[1] >= 16) {
			memcpy(&apic_id, p + 4, 4);
			memcpy(&flags, p + 8, 4);
		} else {
			p += p[1];
			continue;
		}
		/* Online-capable but disabled entries are hot-plug slots. */
		if (flags & MADT_ENABLED)
			list_add(list, apic_id);
		p += p[1];
	}
	list->source = "acpi";
	return list->count ? 0 : -1;
}

/* ---- MP specification 1.4 ---- */

struct __attribute__((packed)) mp_floating_pointer {
	char signature[4]; /* "_MP_" */
	uint32_t config_table;
	uint8_t length; /* in 16-byte units */
	uint8_t spec_revision;
	uint8_t checksum;
	uint8_t features[5];
};

struct __attribute__((packed)) mp_config_header {
	char signature[4]; /* "PCMP" */
	uint16_t base_length;
	uint8_t spec_revision;
	uint8_t checksum;
	char oem_id[8];
	char product_id[12];
	uint32_t oem_table;
	uint16_t oem_table_size;
	uint16_t entry_count;
	uint32_t lapic_address;
	uint16_t extended_length;
	uint8_t extended_checksum;
	uint8_t reserved;
};

#define MP_ENTRY_PROCESSOR 0
#define MP_PROCESSOR_ENTRY_LEN 20
#define MP_OTHER_ENTRY_LEN 8
#define MP_PROCESSOR_ENABLED 0x1
#define MP_SCAN_START 0xf0000
#define MP_SCAN_END 0x100000

static const struct mp_floating_pointer *mp_scan(void)
{
	uint32_t want;

	memcpy(&want, "_MP_", 4);
	for (uint64_t gpa = MP_SCAN_START; gpa < MP_SCAN_END; gpa += 16) {
		const struct mp_floating_pointer *fp =
			(const void *)(uintptr_t)gpa;

		if (*(const volatile uint32_t *)fp == want && fp->length == 1 &&
		    !checksum(fp, sizeof(*fp)))
			return fp;
	}
	return NULL;
}

int mptable_find_cpus(struct cpu_list *list)
{
	const struct mp_floating_pointer *fp = mp_scan();
	const struct mp_config_header *h =
		fp ? phys(fp->config_table, sizeof(*h)) : NULL;

	if (!h || memcmp(h->signature, "PCMP", 4) ||
	    h->base_length < sizeof(*h) ||
	    !phys(fp->config_table, h->base_length) ||
	    checksum(h, h->base_length))
		return -1;
	const uint8_t *p = (const uint8_t *)(h + 1);
	const uint8_t *end = (const uint8_t *)h + h->base_length;

	list->count = 0;
	list->dropped = 0;
	for (unsigned int i = 0; i < h->entry_count && p < end; i++) {
		size_t len = p[0] == MP_ENTRY_PROCESSOR ? MP_PROCESSOR_ENTRY_LEN
							: MP_OTHER_ENTRY_LEN;

		if ((size_t)(end - p) < len)
			break;
		if (p[0] == MP_ENTRY_PROCESSOR && (p[3] & MP_PROCESSOR_ENABLED))
			list_add(list, p[1]);
		p += len;
	}
	list->source = "mptable";
	return list->count ? 0 : -1;
}
