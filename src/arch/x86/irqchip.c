// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The x86 interrupt controllers of a VM (irqchip.h): KVM objects for
 * either mode, and the glue between the userspace I/O APIC and KVM
 * (KVM_SIGNAL_MSI, KVM_SET_GSI_ROUTING, KVM_EXIT_IOAPIC_EOI).
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/ioapic.h"
#include "arch/x86/irqchip.h"
#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/vm.h"

static int ioapic_send_msi(void *ctx, uint64_t address, uint32_t data)
{
	struct x86_irqchip *chip = ctx;
	struct kvm_msi msi = {
		.address_lo = (uint32_t)address,
		.address_hi = (uint32_t)(address >> 32),
		.data = data,
	};

	/* 0 means the guest blocked it (e.g. APIC disabled): not an error. */
	if (ioctl(chip->vm->fd, KVM_SIGNAL_MSI, &msi) < 0)
		return -errno;
	vm_msi_injected(chip->vm, address); /* maybe boost the woken vCPU */
	return 0;
}

/*
 * Mirror the I/O APIC's messages as MSI routes, GSI = pin: KVM learns
 * which vectors are level-triggered (so their EOIs exit to us), and an
 * irqfd on a pin's GSI (--rr-partner) reaches the guest without us.
 */
static int ioapic_routes_changed(void *ctx,
				 const struct ioapic_route routes[IOAPIC_PINS])
{
	struct x86_irqchip *chip = ctx;
	struct {
		struct kvm_irq_routing hdr;
		struct kvm_irq_routing_entry entries[IOAPIC_PINS];
	} table;
	unsigned int n = 0;

	memset(&table, 0, sizeof(table));
	for (unsigned int pin = 0; pin < IOAPIC_PINS; pin++) {
		if (!routes[pin].valid)
			continue;
		table.entries[n++] = (struct kvm_irq_routing_entry){
			.gsi = pin,
			.type = KVM_IRQ_ROUTING_MSI,
			.u.msi = { .address_lo = (uint32_t)routes[pin].address,
				   .address_hi =
					   (uint32_t)(routes[pin].address >>
						      32),
				   .data = routes[pin].data },
		};
	}
	table.hdr.nr = n;
	chip->route_updates++;
	if (ioctl(chip->vm->fd, KVM_SET_GSI_ROUTING, &table) < 0) {
		pr_warn("KVM_SET_GSI_ROUTING for the I/O APIC failed: %s",
			strerror(errno));
		return -errno;
	}
	return 0;
}

static int create_split(struct vm *vm, struct x86_irqchip *chip)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_SPLIT_IRQCHIP,
		.args = { IOAPIC_PINS },
	};
	struct ioapic_ops ops = { .send_msi = ioapic_send_msi,
				  .routes_changed = ioapic_routes_changed,
				  .ctx = chip };

	if (ioctl(vm->fd, KVM_ENABLE_CAP, &cap) < 0)
		return -errno;
	chip->split = true;
	chip->ioapic = ioapic_create(&ops);
	if (!chip->ioapic)
		return hvm_set_error(-ENOMEM, "out of memory for the I/O APIC");
	return vm_register_mmio(vm, X86_IOAPIC_GPA, IOAPIC_WINDOW_SIZE,
				&ioapic_bus_ops, chip->ioapic, "ioapic");
}

static int create_kernel(struct vm *vm)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

	if (kvm_check_cap(vm->kvm.fd, KVM_CAP_PIT2) <= 0)
		return hvm_set_error(
			-ENOTSUP,
			"--irqchip kernel: this KVM has no in-kernel PIT (KVM_CAP_PIT2)");
	if (ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return hvm_set_errno_error("KVM_CREATE_IRQCHIP");
	if (ioctl(vm->fd, KVM_CREATE_PIT2, &pit) < 0)
		return hvm_set_errno_error("KVM_CREATE_PIT2");
	return 0;
}

int x86_irqchip_create(struct vm *vm, struct x86_irqchip *chip)
{
	enum irqchip_mode mode = vm->cfg->arch.irqchip;
	int r;

	*chip = (struct x86_irqchip){ .vm = vm };
	/* Both modes: KVM's real-mode helpers need these guest pages. */
	if (ioctl(vm->fd, KVM_SET_IDENTITY_MAP_ADDR,
		  &(uint64_t){ X86_KVM_IDENTITY_MAP_GPA }) < 0)
		return hvm_set_errno_error("KVM_SET_IDENTITY_MAP_ADDR");
	if (ioctl(vm->fd, KVM_SET_TSS_ADDR, X86_KVM_TSS_GPA) < 0)
		return hvm_set_errno_error("KVM_SET_TSS_ADDR");
	if (mode == IRQCHIP_KERNEL)
		return create_kernel(vm);
	if (kvm_check_cap(vm->fd, KVM_CAP_SPLIT_IRQCHIP) <= 0) {
		if (mode == IRQCHIP_SPLIT)
			return hvm_set_error(
				-ENOTSUP,
				"--irqchip split: this KVM has no KVM_CAP_SPLIT_IRQCHIP; use --irqchip kernel");
		pr_info("KVM has no split irqchip: using the in-kernel irqchip and PIT");
		return create_kernel(vm);
	}
	r = create_split(vm, chip);
	if (r == -EINVAL && !chip->split && mode == IRQCHIP_AUTO) {
		pr_info("KVM refused the split irqchip: using the in-kernel irqchip and PIT");
		return create_kernel(vm);
	}
	if (r < 0 && !chip->split)
		return hvm_set_error(r, "KVM_CAP_SPLIT_IRQCHIP: %s",
				     strerror(-r));
	return r;
}

void x86_irqchip_destroy(struct x86_irqchip *chip)
{
	ioapic_destroy(chip->ioapic);
	chip->ioapic = NULL;
}

struct irq_line x86_irqchip_line(struct x86_irqchip *chip, uint32_t gsi)
{
	if (chip->split)
		return (struct irq_line){ .set_level = ioapic_set_irq,
					  .ctx = chip->ioapic,
					  .gsi = gsi };
	return (struct irq_line){ .set_level = vm_irq_line_set,
				  .ctx = chip->vm,
				  .gsi = gsi };
}

int x86_irqchip_vcpu_exit(struct x86_irqchip *chip, struct vcpu *vcpu)
{
	if (vcpu->run->exit_reason != KVM_EXIT_IOAPIC_EOI || !chip->ioapic)
		return -ENOSYS;
	ioapic_eoi(chip->ioapic, vcpu->run->eoi.vector);
	return 0;
}

const char *x86_irqchip_name(const struct x86_irqchip *chip)
{
	return chip->split ? "split" : "kernel";
}
