// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Table layouts follow the ACPI 6.x specification (chapter 5.2). The
 * structures are declared here, packed, with their sizes asserted, instead
 * of borrowing ACPICA headers the host does not ship.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/acpi_pm_regs.h"
#include "arch/x86/acpi.h"
#include "arch/x86/dsdt.h"
#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/guest_memory.h"

#define ACPI_OEM_ID "HINTVM"
#define ACPI_OEM_TABLE_ID "HINTVM  "
#define ACPI_CREATOR_ID "HVM "
#define ACPI_TABLE_ALIGN 16
#define ACPI_FACS_ALIGN 64

struct acpi_rsdp {
	char signature[8];
	uint8_t checksum; /* over the first 20 bytes */
	char oem_id[6];
	uint8_t revision;
	uint32_t rsdt_address;
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t extended_checksum; /* over all 36 bytes */
	uint8_t reserved[3];
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP size");

struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_header) == 36, "table header size");

/* Generic Address Structure */
struct acpi_gas {
	uint8_t space_id;
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS size");

#define ACPI_SPACE_SYSTEM_IO 1
#define ACPI_ACCESS_BYTE 1
#define ACPI_ACCESS_WORD 2

struct acpi_fadt {
	struct acpi_header header;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk;
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk;
	uint32_t pm1b_cnt_blk;
	uint32_t pm2_cnt_blk;
	uint32_t pm_tmr_blk;
	uint32_t gpe0_blk;
	uint32_t gpe1_blk;
	uint8_t pm1_evt_len;
	uint8_t pm1_cnt_len;
	uint8_t pm2_cnt_len;
	uint8_t pm_tmr_len;
	uint8_t gpe0_blk_len;
	uint8_t gpe1_blk_len;
	uint8_t gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat;
	uint16_t p_lvl3_lat;
	uint16_t flush_size;
	uint16_t flush_stride;
	uint8_t duty_offset;
	uint8_t duty_width;
	uint8_t day_alrm;
	uint8_t mon_alrm;
	uint8_t century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk;
	struct acpi_gas x_pm1b_evt_blk;
	struct acpi_gas x_pm1a_cnt_blk;
	struct acpi_gas x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk;
	struct acpi_gas x_pm_tmr_blk;
	struct acpi_gas x_gpe0_blk;
	struct acpi_gas x_gpe1_blk;
	struct acpi_gas sleep_control_reg;
	struct acpi_gas sleep_status_reg;
	uint64_t hypervisor_vendor_id;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT (revision 6) size");
_Static_assert(offsetof(struct acpi_fadt, reset_reg) == 116, "RESET_REG");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "X_DSDT");

#define FADT_REVISION 6
#define FADT_F_WBINVD (1u << 0)
#define FADT_F_PROC_C1 (1u << 2)
#define FADT_F_PWR_BUTTON (1u << 4) /* no fixed-feature power button */
#define FADT_F_SLP_BUTTON (1u << 5) /* no fixed-feature sleep button */
#define FADT_F_RESET_REG_SUP (1u << 10)
#define IAPC_LEGACY_DEVICES (1u << 0)
#define IAPC_8042 (1u << 1)
#define IAPC_NO_VGA (1u << 2)
#define P_LVL2_UNSUPPORTED 101 /* > 100 us: C2 not supported */
#define P_LVL3_UNSUPPORTED 1001 /* > 1000 us: C3 not supported */
#define ACPI_RESET_VALUE 0x06 /* 0xcf9: system reset + reset CPU */

struct acpi_facs {
	char signature[4];
	uint32_t length;
	uint32_t hardware_signature;
	uint32_t firmware_waking_vector;
	uint32_t global_lock;
	uint32_t flags;
	uint64_t x_firmware_waking_vector;
	uint8_t version;
	uint8_t reserved[3];
	uint32_t ospm_flags;
	uint8_t reserved2[24];
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_facs) == 64, "FACS size");

struct acpi_madt {
	struct acpi_header header;
	uint32_t local_apic_address;
	uint32_t flags;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_madt) == 44, "MADT header size");

#define MADT_PCAT_COMPAT (1u << 0) /* dual 8259s present too */
#define MADT_TYPE_LOCAL_APIC 0
#define MADT_TYPE_IO_APIC 1
#define MADT_TYPE_INT_OVERRIDE 2
#define MADT_LAPIC_ENABLED (1u << 0)
#define MPS_POLARITY_HIGH 0x1
#define MPS_TRIGGER_LEVEL (0x3 << 2)

struct madt_local_apic {
	uint8_t type, length;
	uint8_t processor_uid;
	uint8_t apic_id;
	uint32_t flags;
} __attribute__((packed));
_Static_assert(sizeof(struct madt_local_apic) == 8, "MADT LAPIC size");

struct madt_io_apic {
	uint8_t type, length;
	uint8_t io_apic_id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));
_Static_assert(sizeof(struct madt_io_apic) == 12, "MADT IO-APIC size");

struct madt_int_override {
	uint8_t type, length;
	uint8_t bus; /* 0: ISA */
	uint8_t source; /* ISA IRQ */
	uint32_t gsi;
	uint16_t flags; /* MPS INTI flags */
} __attribute__((packed));
_Static_assert(sizeof(struct madt_int_override) == 10, "MADT ISO size");

#define DSDT_REVISION 2 /* 64-bit AML integers */

/* Everything is assembled in a host buffer, then copied in one piece. */
struct acpi_builder {
	uint8_t buf[X86_ACPI_MAX];
	size_t used;
	int overflow;
};

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Reserve LEN zeroed bytes aligned to ALIGN; returns the buffer offset. */
static size_t reserve(struct acpi_builder *b, size_t len, size_t align)
{
	size_t off = align_up(b->used, align);

	if (off > sizeof(b->buf) || len > sizeof(b->buf) - off) {
		b->overflow = 1;
		return 0;
	}
	memset(b->buf + off, 0, len);
	b->used = off + len;
	return off;
}

static uint8_t checksum(const void *p, size_t len)
{
	const uint8_t *bytes = p;
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += bytes[i];
	return (uint8_t)(0 - sum);
}

static void header_init(struct acpi_header *h, const char sig[4],
			uint32_t length, uint8_t revision)
{
	memcpy(h->signature, sig, 4);
	h->length = length;
	h->revision = revision;
	memcpy(h->oem_id, ACPI_OEM_ID, 6);
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, ACPI_CREATOR_ID, 4);
	h->creator_revision = 1;
}

static void table_checksum(struct acpi_header *h)
{
	h->checksum = 0;
	h->checksum = checksum(h, h->length);
}

static struct acpi_gas io_gas(uint16_t port, uint8_t bits, uint8_t access)
{
	struct acpi_gas g = {
		.space_id = ACPI_SPACE_SYSTEM_IO,
		.bit_width = bits,
		.access_size = access,
		.address = port,
	};
	return g;
}

static void build_fadt(struct acpi_fadt *f, uint64_t dsdt, uint64_t facs)
{
	header_init(&f->header, "FACP", sizeof(*f), FADT_REVISION);
	f->firmware_ctrl = (uint32_t)facs;
	f->x_firmware_ctrl = 0; /* only one of the two may be set */
	f->dsdt = (uint32_t)dsdt;
	f->x_dsdt = dsdt;
	f->sci_int = ACPI_SCI_IRQ;
	f->smi_cmd = 0; /* no SMM: always in ACPI mode */
	f->pm1a_evt_blk = X86_PM1A_EVT_PORT;
	f->pm1a_cnt_blk = X86_PM1A_CNT_PORT;
	f->pm1_evt_len = 4;
	f->pm1_cnt_len = 2;
	f->x_pm1a_evt_blk = io_gas(X86_PM1A_EVT_PORT, 32, ACPI_ACCESS_WORD);
	f->x_pm1a_cnt_blk = io_gas(X86_PM1A_CNT_PORT, 16, ACPI_ACCESS_WORD);
	/* GPE registers are read a byte at a time (ACPI 4.8.4.1). */
	f->gpe0_blk = X86_GPE0_PORT;
	f->gpe0_blk_len = ACPI_GPE0_LEN;
	f->x_gpe0_blk =
		io_gas(X86_GPE0_PORT, 8 * ACPI_GPE0_LEN, ACPI_ACCESS_BYTE);
	f->p_lvl2_lat = P_LVL2_UNSUPPORTED;
	f->p_lvl3_lat = P_LVL3_UNSUPPORTED;
	/* The i8042 and the CMOS RTC exist (no NO_CMOS_RTC bit); no VGA. */
	f->iapc_boot_arch = IAPC_LEGACY_DEVICES | IAPC_8042 | IAPC_NO_VGA;
	f->flags = FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_PWR_BUTTON |
		   FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP;
	f->reset_reg = io_gas(X86_RESET_PORT, 8, ACPI_ACCESS_BYTE);
	f->reset_value = ACPI_RESET_VALUE;
	f->minor_version = 0;
	memcpy(&f->hypervisor_vendor_id, "HINTVM\0\0", 8);
	table_checksum(&f->header);
}

static void *at(struct acpi_builder *b, size_t off)
{
	return b->buf + off;
}

static size_t build_madt(struct acpi_builder *b, unsigned int nr_vcpus,
			 bool legacy_pic)
{
	size_t len = sizeof(struct acpi_madt) +
		     nr_vcpus * sizeof(struct madt_local_apic) +
		     sizeof(struct madt_io_apic) +
		     sizeof(struct madt_int_override);
	size_t off = reserve(b, len, ACPI_TABLE_ALIGN);
	struct acpi_madt *madt;
	uint8_t *p;

	if (b->overflow)
		return 0;
	madt = at(b, off);
	header_init(&madt->header, "APIC", (uint32_t)len, 5);
	madt->local_apic_address = X86_LAPIC_GPA;
	madt->flags = legacy_pic ? MADT_PCAT_COMPAT : 0;
	p = (uint8_t *)(madt + 1);
	for (unsigned int i = 0; i < nr_vcpus; i++) {
		struct madt_local_apic lapic = {
			.type = MADT_TYPE_LOCAL_APIC,
			.length = sizeof(lapic),
			.processor_uid = (uint8_t)i,
			.apic_id = (uint8_t)i,
			.flags = MADT_LAPIC_ENABLED,
		};
		memcpy(p, &lapic, sizeof(lapic));
		p += sizeof(lapic);
	}
	struct madt_io_apic ioapic = {
		.type = MADT_TYPE_IO_APIC,
		.length = sizeof(ioapic),
		.io_apic_id = 0,
		.address = X86_IOAPIC_GPA,
		.gsi_base = 0,
	};
	memcpy(p, &ioapic, sizeof(ioapic));
	p += sizeof(ioapic);
	/*
	 * No IRQ0 -> GSI2 override, unlike QEMU: hintvm keeps KVM's default
	 * GSI routing, where the in-kernel PIT raises GSI 0 on I/O APIC pin
	 * 0 (QEMU installs its own routing to move it to pin 2). The MP
	 * table says the same. With the split irqchip there is no PIT.
	 */
	/* The SCI is level-triggered, active high (as QEMU describes it). */
	struct madt_int_override sci = {
		.type = MADT_TYPE_INT_OVERRIDE,
		.length = sizeof(sci),
		.source = ACPI_SCI_IRQ,
		.gsi = ACPI_SCI_IRQ,
		.flags = MPS_POLARITY_HIGH | MPS_TRIGGER_LEVEL,
	};
	memcpy(p, &sci, sizeof(sci));
	table_checksum(&madt->header);
	return off;
}

int acpi_build_tables(struct guest_memory *mem, unsigned int nr_vcpus,
		      bool legacy_pic, struct acpi_layout *layout)
{
	struct acpi_builder *b;
	size_t rsdp_off, xsdt_off, fadt_off, facs_off, dsdt_off, madt_off;
	uint8_t dsdt_aml[512];
	size_t dsdt_len;
	const size_t xsdt_len = sizeof(struct acpi_header) + 2 * 8;
	struct acpi_header *xsdt, *dsdt;
	struct acpi_facs *facs;
	struct acpi_rsdp *rsdp;
	uint64_t entries[2];

	if (nr_vcpus == 0 || nr_vcpus > ACPI_MAX_VCPUS)
		return hvm_set_error(-EINVAL,
				     "ACPI tables: %u vCPUs, expected 1 to %u",
				     nr_vcpus, ACPI_MAX_VCPUS);
	b = calloc(1, sizeof(*b));
	if (!b)
		return hvm_set_error(-ENOMEM, "ACPI tables: out of memory");
	rsdp_off = reserve(b, sizeof(*rsdp), ACPI_TABLE_ALIGN);
	xsdt_off = reserve(b, xsdt_len, ACPI_TABLE_ALIGN);
	fadt_off = reserve(b, sizeof(struct acpi_fadt), ACPI_TABLE_ALIGN);
	facs_off = reserve(b, sizeof(*facs), ACPI_FACS_ALIGN);
	dsdt_len = dsdt_build_aml(dsdt_aml, sizeof(dsdt_aml));
	if (!dsdt_len)
		b->overflow = 1;
	dsdt_off = reserve(b, sizeof(struct acpi_header) + dsdt_len,
			   ACPI_TABLE_ALIGN);
	madt_off = build_madt(b, nr_vcpus, legacy_pic);
	if (b->overflow) {
		free(b);
		return hvm_set_error(-E2BIG,
				     "ACPI tables for %u vCPUs exceed the %u "
				     "bytes reserved at 0x%x",
				     nr_vcpus, X86_ACPI_MAX, X86_ACPI_GPA);
	}
#define GPA(off) ((uint64_t)X86_ACPI_GPA + (off))

	facs = at(b, facs_off);
	memcpy(facs->signature, "FACS", 4);
	facs->length = sizeof(*facs);
	facs->version = 2;

	dsdt = at(b, dsdt_off);
	header_init(dsdt, "DSDT", (uint32_t)(sizeof(*dsdt) + dsdt_len),
		    DSDT_REVISION);
	memcpy(dsdt + 1, dsdt_aml, dsdt_len);
	table_checksum(dsdt);

	build_fadt(at(b, fadt_off), GPA(dsdt_off), GPA(facs_off));

	xsdt = at(b, xsdt_off);
	header_init(xsdt, "XSDT", (uint32_t)xsdt_len, 1);
	entries[0] = GPA(fadt_off);
	entries[1] = GPA(madt_off);
	memcpy(xsdt + 1, entries, sizeof(entries));
	table_checksum(xsdt);

	rsdp = at(b, rsdp_off);
	memcpy(rsdp->signature, "RSD PTR ", 8);
	memcpy(rsdp->oem_id, ACPI_OEM_ID, 6);
	rsdp->revision = 2;
	rsdp->length = sizeof(*rsdp);
	rsdp->xsdt_address = GPA(xsdt_off);
	rsdp->checksum = checksum(rsdp, 20);
	rsdp->extended_checksum = checksum(rsdp, sizeof(*rsdp));

	if (guest_write(mem, X86_ACPI_GPA, b->buf, b->used)) {
		hvm_set_error(-EFAULT,
			      "ACPI tables: guest range 0x%x+%zu is not RAM",
			      X86_ACPI_GPA, b->used);
		free(b);
		return -EFAULT;
	}
	if (layout) {
		layout->rsdp = GPA(rsdp_off);
		layout->xsdt = GPA(xsdt_off);
		layout->fadt = GPA(fadt_off);
		layout->facs = GPA(facs_off);
		layout->dsdt = GPA(dsdt_off);
		layout->madt = GPA(madt_off);
		layout->end = GPA(b->used);
	}
#undef GPA
	free(b);
	return 0;
}
