/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What common code asks of an architecture (src/arch/<arch>/). Common code
 * never includes an arch header; each hook gets the VM and reaches devices
 * and memory through src/core interfaces. Order of calls in vm.c:
 *
 *   arch_check_kvm        after /dev/kvm is open
 *   arch_vm_init          VM fd exists: irqchip, clocks, memory layout,
 *                         kernel loading
 *   (the builder places the devices of arch_platform() and virtio)
 *   arch_vcpu_init        once per vCPU, after KVM_CREATE_VCPU
 *   arch_vm_finalize      all vCPUs exist: tables (MP/ACPI, FDT), GIC init
 *   arch_vcpu_exit        any exit reason common code does not handle
 *   arch_vm_destroy       tear-down of arch private state
 */
#ifndef HVM_CORE_ARCH_H
#define HVM_CORE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/irq.h"

struct kvm_host;
struct vm;
struct vcpu;
struct snap_file;
struct snap_identity;
struct snap_writer;

int arch_check_kvm(struct kvm_host *kvm);
int arch_vm_init(struct vm *vm);
int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu);
int arch_vm_finalize(struct vm *vm);
void arch_vm_destroy(struct vm *vm);

/*
 * The highest vCPU count this architecture's boot path supports: the one
 * place the limit is stated (--cpus is checked against it).
 */
unsigned int arch_max_vcpus(void);

/*
 * The vCPU index an MSI with address ADDR is delivered to, or -1 when the
 * address names none (or the architecture has no such MSIs).
 */
int arch_msi_target_vcpu(uint64_t addr);

/*
 * Idle exits (HLT, PAUSE) a VM may run without, so that an idle or
 * spinning vCPU stays in the guest on a dedicated CPU: which ones this
 * host lets VM_FD disable, and disabling them (only before the first vCPU
 * exists). An architecture without such a control reports neither.
 */
void arch_idle_exits_query(int vm_fd, bool *hlt, bool *pause);
int arch_idle_exits_disable(int vm_fd, bool hlt, bool pause);

/*
 * Handle an exit reason common code did not; returns 0 to keep running,
 * 1 when the VM must stop (the arch has called vm_request_stop), -errno
 * for an exit it does not know.
 */
int arch_vcpu_exit(struct vcpu *vcpu);

/*
 * The machine's platform devices and where they sit. The arch describes
 * them; the builder (vmm/platform.c) creates every one, places it on its
 * bus, in table order, and tears it down: one assembly path for every
 * architecture, and one list of what a VM is made of. The arch's own
 * tables (ACPI, device tree) describe the same slots to the guest.
 */
enum platform_device {
	PLATFORM_UART, /* ns16550a, the serial console; irq */
	PLATFORM_CMOS_RTC,
	PLATFORM_I8042, /* base: data port, base2: command/status port */
	PLATFORM_DEBUG_EXIT, /* QEMU isa-debug-exit compatible */
	/* base: PM1a event block, base2: control block, base3: GPE0 block;
	 * irq: the SCI */
	PLATFORM_ACPI_PM,
	PLATFORM_PVPANIC,
	PLATFORM_PCI_HOST, /* BAR window base, size; virtio goes here */
	PLATFORM_POST, /* Linux's io_delay port: writes coalesced */
	PLATFORM_HINTS, /* the guest's scheduling-hint channel */
	PLATFORM_RR_PARTNER, /* --rr-partner: doorbell at base, answer irq */
	/* The generation ID's guest address at base; irq: its GPE (after
	 * ACPI_PM, whose GPE0 block signals a change) */
	PLATFORM_VMGENID,
};

struct platform_slot {
	enum platform_device device;
	bool mmio; /* else port I/O */
	uint64_t base;
	uint64_t base2;
	uint64_t base3;
	uint64_t size;
	uint32_t irq; /* for arch_irq_line(); RR_PARTNER: a GSI for irqfd */
};

/* The slots, in placing order; *COUNT receives their number. */
const struct platform_slot *arch_platform(size_t *count);

/* The line a device raises for the arch's interrupt number IRQ. */
struct irq_line arch_irq_line(struct vm *vm, uint32_t irq);

/*
 * A window and an interrupt for one virtio-mmio device, which the guest is
 * told about (arm64: a device-tree node). Claim it after arch_vm_init and
 * before arch_vm_finalize (the builder does, for every virtio device not
 * on PCI); register the device at GPA for SIZE bytes and
 * drive IRQ. Returns 0, -ENOSPC when every slot is taken, or -EOPNOTSUPP
 * where virtio devices sit on PCI instead (x86).
 */
struct arch_virtio_mmio_slot {
	uint64_t gpa;
	uint64_t size;
	uint32_t irq_gsi; /* for vm_irq_line_set() / KVM_IRQFD */
};
int arch_virtio_mmio_slot(struct vm *vm, struct arch_virtio_mmio_slot *slot);

/*
 * Snapshots (docs/snapshot.md). The host facts a restore depends on; the
 * architecture's VM-wide and per-vCPU state as sections, with every vCPU
 * parked outside KVM_RUN; a snapshot's identity checked against this host
 * before anything is built (-EINVAL naming PATH); and the state loaded
 * into a VM built with vm->restore_mem_fd set (no kernel, no tables),
 * after arch_vm_finalize. An architecture that cannot returns -EOPNOTSUPP
 * with the reason.
 */
/* The VM's interrupt controller mode as --irqchip takes it, or NULL. */
const char *arch_irqchip_name(struct vm *vm);
int arch_snapshot_identity(struct vm *vm, struct snap_identity *id);
int arch_snapshot_save(struct vm *vm, struct snap_writer *w);
int arch_snapshot_check(struct vm *vm, const struct snap_file *f,
			const char *path);
int arch_snapshot_load(struct vm *vm, const struct snap_file *f,
		       const char *path);
/*
 * The host CPU as a VM template's key names it (docs/template.md): one
 * line of text, the same on every CPU of one machine and different
 * wherever a snapshot's guest could see another CPU (vendor, family,
 * model, stepping, feature words). Its length, or -EOPNOTSUPP (where
 * snapshots are) / -ENOSPC.
 */
int arch_host_cpu_id(char *buf, size_t len);

/* The guest PC at the current exit when it costs no ioctl, else 0. */
uint64_t arch_vcpu_exit_pc(const struct vcpu *vcpu);

/* A short description of where VCPU is (e.g. "rip=0x... cr0=0x..."). */
void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len);

#endif
