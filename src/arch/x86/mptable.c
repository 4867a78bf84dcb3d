// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "arch/x86/mptable.h"
#include "arch/x86/platform.h"
#include "base/log.h"

struct mpf_intel {
	char signature[4]; /* "_MP_" */
	uint32_t physptr;
	uint8_t length; /* in 16-byte units */
	uint8_t specification;
	uint8_t checksum;
	uint8_t feature[5];
} __attribute__((packed));

struct mpc_table {
	char signature[4]; /* "PCMP" */
	uint16_t length;
	uint8_t spec;
	uint8_t checksum;
	char oem[8];
	char productid[12];
	uint32_t oemptr;
	uint16_t oemsize;
	uint16_t count;
	uint32_t lapic;
	uint16_t extended_length;
	uint8_t extended_checksum;
	uint8_t reserved;
} __attribute__((packed));

struct mpc_cpu {
	uint8_t type;
	uint8_t apicid;
	uint8_t apicver;
	uint8_t cpuflag;
	uint32_t cpufeature;
	uint32_t featureflag;
	uint32_t reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type;
	uint8_t busid;
	char bustype[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type;
	uint8_t apicid;
	uint8_t apicver;
	uint8_t flags;
	uint32_t apicaddr;
} __attribute__((packed));

struct mpc_intsrc {
	uint8_t type;
	uint8_t irqtype;
	uint16_t irqflag;
	uint8_t srcbus;
	uint8_t srcbusirq;
	uint8_t dstapic;
	uint8_t dstirq;
} __attribute__((packed));

enum {
	MP_PROCESSOR = 0,
	MP_BUS = 1,
	MP_IOAPIC = 2,
	MP_INTSRC = 3,
	MP_LINTSRC = 4,
};
#define CPU_ENABLED 1
#define CPU_BOOTPROCESSOR 2
#define MP_IRQ_INT 0
#define MP_IRQ_NMI 1
#define MP_IRQ_EXTINT 3
#define MP_APIC_ALL 0xff
#define APIC_VERSION 0x14
#define IOAPIC_VERSION 0x11
#define ISA_IRQS 16

static uint8_t checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return (uint8_t)-sum;
}

/* ISA IRQs with an I/O APIC entry: without a PIC and PIT, neither the
 * timer (0) nor the cascade (2) exists. */
static bool isa_irq_wired(unsigned int irq, bool legacy_pic)
{
	return legacy_pic || (irq != 0 && irq != 2);
}

int mptable_write(const struct guest_memory *mem, uint64_t gpa, uint64_t max,
		  unsigned int nr_cpus, bool legacy_pic)
{
	size_t size = sizeof(struct mpf_intel) + sizeof(struct mpc_table) +
		      nr_cpus * sizeof(struct mpc_cpu) +
		      sizeof(struct mpc_bus) + sizeof(struct mpc_ioapic) +
		      (ISA_IRQS + 2) * sizeof(struct mpc_intsrc);
	uint8_t *base = guest_ptr(mem, gpa, size);
	uint8_t ioapic_id = (uint8_t)nr_cpus; /* after the last CPU */
	struct mpf_intel *mpf;
	struct mpc_table *mpc;
	uint16_t entries = (uint16_t)(nr_cpus + 1 + 1 + 1); /* + LINT1 */
	uint8_t *p;

	if (nr_cpus == 0 || nr_cpus > X86_MAX_VCPUS || size > max || !base)
		return hvm_set_error(
			-EINVAL, "MP table for %u CPUs does not fit at 0x%llx",
			nr_cpus, (unsigned long long)gpa);
	memset(base, 0, size);
	mpf = (struct mpf_intel *)base;
	mpc = (struct mpc_table *)(mpf + 1);
	p = (uint8_t *)(mpc + 1);

	for (unsigned int i = 0; i < nr_cpus; i++) {
		struct mpc_cpu cpu = {
			.type = MP_PROCESSOR,
			.apicid = (uint8_t)i,
			.apicver = APIC_VERSION,
			.cpuflag =
				CPU_ENABLED | (i == 0 ? CPU_BOOTPROCESSOR : 0),
			.cpufeature = 0x600, /* family 6 */
			.featureflag = 0x201, /* FPU, APIC */
		};
		memcpy(p, &cpu, sizeof(cpu));
		p += sizeof(cpu);
	}
	struct mpc_bus bus = { .type = MP_BUS,
			       .busid = 0,
			       .bustype = { 'I', 'S', 'A', ' ', ' ', ' ' } };
	memcpy(p, &bus, sizeof(bus));
	p += sizeof(bus);
	struct mpc_ioapic ioapic = { .type = MP_IOAPIC,
				     .apicid = ioapic_id,
				     .apicver = IOAPIC_VERSION,
				     .flags = 1,
				     .apicaddr = X86_IOAPIC_GPA };
	memcpy(p, &ioapic, sizeof(ioapic));
	p += sizeof(ioapic);
	/* KVM's default routing sends ISA IRQ n to I/O APIC pin n. */
	for (unsigned int irq = 0; irq < ISA_IRQS; irq++) {
		if (!isa_irq_wired(irq, legacy_pic))
			continue;
		struct mpc_intsrc src = {
			.type = MP_INTSRC,
			.irqtype = MP_IRQ_INT,
			.srcbus = 0,
			.srcbusirq = (uint8_t)irq,
			.dstapic = ioapic_id,
			.dstirq = (uint8_t)irq,
		};
		memcpy(p, &src, sizeof(src));
		p += sizeof(src);
		entries++;
	}
	struct mpc_intsrc lint0 = { .type = MP_LINTSRC,
				    .irqtype = MP_IRQ_EXTINT,
				    .dstapic = MP_APIC_ALL,
				    .dstirq = 0 };
	struct mpc_intsrc lint1 = { .type = MP_LINTSRC,
				    .irqtype = MP_IRQ_NMI,
				    .dstapic = MP_APIC_ALL,
				    .dstirq = 1 };
	if (legacy_pic) { /* the 8259's output, on the BSP's LINT0 */
		memcpy(p, &lint0, sizeof(lint0));
		p += sizeof(lint0);
		entries++;
	}
	memcpy(p, &lint1, sizeof(lint1));
	p += sizeof(lint1);

	memcpy(mpc->signature, "PCMP", 4);
	mpc->length = (uint16_t)(p - (uint8_t *)mpc);
	mpc->spec = 4;
	memcpy(mpc->oem, "HINTVM  ", 8);
	memcpy(mpc->productid, "hintvm      ", 12);
	mpc->count = entries;
	mpc->lapic = X86_LAPIC_GPA;
	mpc->checksum = checksum(mpc, mpc->length);

	memcpy(mpf->signature, "_MP_", 4);
	mpf->physptr = (uint32_t)(gpa + sizeof(*mpf));
	mpf->length = 1;
	mpf->specification = 4;
	mpf->checksum = checksum(mpf, sizeof(*mpf));
	return 0;
}
