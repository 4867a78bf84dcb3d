/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The x86 interrupt controllers a VM gets (--irqchip):
 *
 *   split   LAPICs in KVM (KVM_CAP_SPLIT_IRQCHIP), the I/O APIC in hintvm
 *           (ioapic.h), no PIC and no PIT: the cheapest to create and tear
 *           down, and what the firmware tables then describe. Linux needs
 *           neither PIC nor PIT when it has the TSC-deadline timer and
 *           knows the TSC frequency (kvm-clock, CPUID 0x40000010).
 *   kernel  KVM_CREATE_IRQCHIP + KVM_CREATE_PIT2: everything in KVM, as
 *           older VMMs do; chosen automatically where KVM lacks split.
 *
 * Devices get their interrupt line from x86_irqchip_line(), which hides
 * which of the two drives it.
 */
#ifndef HVM_ARCH_X86_IRQCHIP_H
#define HVM_ARCH_X86_IRQCHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/irq.h"

struct vm;
struct vcpu;
struct ioapic;

struct x86_irqchip {
	struct vm *vm;
	bool split; /* else the full in-kernel irqchip and PIT */
	struct ioapic *ioapic; /* split only */
	unsigned int route_updates; /* KVM_SET_GSI_ROUTING calls */
};

/*
 * Create the controllers VM->cfg->arch.irqchip asks for, before any vCPU.
 * Returns 0 or -errno with a message.
 */
int x86_irqchip_create(struct vm *vm, struct x86_irqchip *chip);
void x86_irqchip_destroy(struct x86_irqchip *chip);

/* The line a device on ISA IRQ / I/O APIC pin GSI drives. */
struct irq_line x86_irqchip_line(struct x86_irqchip *chip, uint32_t gsi);

/*
 * An exit only the split irqchip causes (KVM_EXIT_IOAPIC_EOI): returns 0
 * when handled, -ENOSYS for any other exit reason.
 */
int x86_irqchip_vcpu_exit(struct x86_irqchip *chip, struct vcpu *vcpu);

/* VM's controllers (x86.c owns them). */
struct x86_irqchip *x86_irqchip_of(struct vm *vm);

/* "split" or "kernel", for logs and statistics. */
const char *x86_irqchip_name(const struct x86_irqchip *chip);

#endif
