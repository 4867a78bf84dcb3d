// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arm64 machine: an in-kernel GICv3, RAM from 1 GiB, a ns16550a UART
 * on MMIO, PSCI (in KVM) for CPU bring-up and power, PV time records for
 * steal time, a Linux Image loaded at a 2 MiB boundary and a device tree
 * at the top of RAM. See platform.h for the addresses.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/kvm_para_bits.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/image.h"
#include "arch/arm64/platform.h"
#include "arch/arm64/pv_arm64.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/vm.h"
#include "image/boot_files.h"
#include "sched/brain.h"
#include "sched/pv.h"
#include "sched/sched_config.h"

#define FDT_BUF_SIZE (64u << 10)
#define PAGE_4K 4096ULL

/* PSTATE at entry (booting.rst): EL1h, D, A, I and F masked (asm/ptrace.h). */
#define ARM64_BOOT_PSTATE \
	(PSR_MODE_EL1h | PSR_F_BIT | PSR_I_BIT | PSR_A_BIT | PSR_D_BIT)

#define CORE_REG(field)                                        \
	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
	 (offsetof(struct kvm_regs, field) / sizeof(uint32_t)))
#define SYS_REG_MPIDR_EL1 ARM64_SYS_REG(3, 0, 0, 0, 5)

struct arm64_vm {
	struct gic gic;
	struct kvm_vcpu_init vcpu_init; /* target and features for all */
	uint64_t *mpidr; /* per vCPU, read back from KVM */
	uint64_t ram_end;
	uint64_t entry;
	uint64_t kernel_end;
	uint64_t dtb_gpa;
	uint64_t initrd_gpa;
	uint64_t initrd_size;
	void *pvtime; /* host side of the PV time memslot, or NULL */
	unsigned int pvtime_vcpus; /* vCPUs that publish steal time */
	bool pv_vcpu_state; /* give vCPUs the series' vCPU-state structure */
	struct arm64_fdt_mmio_dev virtio[ARM64_VIRTIO_MMIO_SLOTS];
	unsigned int nr_virtio;
};

static struct arm64_vm *arm64(struct vm *vm)
{
	return vm->arch;
}

static const struct kvm_required_cap arm64_caps[] = {
	{ KVM_CAP_ARM_PSCI_0_2, "KVM_CAP_ARM_PSCI_0_2 (PSCI 0.2 in KVM)" },
	{ KVM_CAP_ONE_REG, "KVM_CAP_ONE_REG" },
	{ KVM_CAP_DEVICE_CTRL, "KVM_CAP_DEVICE_CTRL (in-kernel GIC device)" },
};

int arch_check_kvm(struct kvm_host *kvm)
{
	return kvm_require_caps(kvm->fd, arm64_caps,
				sizeof(arm64_caps) / sizeof(arm64_caps[0]));
}

unsigned int arch_max_vcpus(void)
{
	return (unsigned int)ARM64_MAX_VCPUS; /* redistributors that fit */
}

/* No PCI and no ITS here: devices raise wired SPIs, never MSIs. */
int arch_msi_target_vcpu(uint64_t addr)
{
	return -1;
}

/*
 * Stock arm64 KVM has no per-VM switch for WFI/WFE traps (the patch series
 * adds one, used through sched/kernel_hints.c).
 */
void arch_idle_exits_query(int vm_fd, bool *hlt, bool *pause)
{
	*hlt = *pause = false;
}

int arch_idle_exits_disable(int vm_fd, bool hlt, bool pause)
{
	return hlt || pause ? -EOPNOTSUPP : 0;
}

static int arm64_setup_memory(struct vm *vm)
{
	int r = vm_map_memory(vm);

	if (!r)
		r = vm_add_ram(vm, ARM64_RAM_GPA, vm->cfg->mem, 0);
	arm64(vm)->ram_end = ARM64_RAM_GPA + vm->cfg->mem;
	return r;
}

/*
 * PV time records live in their own zeroed memslot outside /memory: the
 * guest learns the address per vCPU through SMCCC and maps it itself.
 */
static int arm64_setup_pvtime(struct vm *vm)
{
	struct arm64_vm *a = arm64(vm);
	void *mem;

	mem = mmap(NULL, ARM64_PVTIME_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return hvm_set_errno_error("cannot map the PV time area");
	a->pvtime = mem;
	return vm_add_memslot(vm, ARM64_PVTIME_GPA, ARM64_PVTIME_SIZE, mem,
			      "PV time");
}

/*
 * What the builder places (core/arch.h) and the device tree describes:
 * the console UART, the hint channel, pvpanic (always present, as on
 * x86). Virtio sits on the MMIO slots of arch_virtio_mmio_slot().
 */
static const struct platform_slot arm64_platform[] = {
	{ PLATFORM_UART, .mmio = true, .base = ARM64_UART_GPA,
	  .irq = ARM64_UART_SPI },
	{ PLATFORM_HINTS, .mmio = true, .base = ARM64_HINT_GPA },
	{ PLATFORM_PVPANIC, .mmio = true, .base = ARM64_PVPANIC_GPA },
};

const struct platform_slot *arch_platform(size_t *count)
{
	*count = sizeof(arm64_platform) / sizeof(arm64_platform[0]);
	return arm64_platform;
}

struct irq_line arch_irq_line(struct vm *vm, uint32_t irq)
{
	return (struct irq_line){ .set_level = vm_irq_line_set,
				  .ctx = vm,
				  .gsi = gic_spi_gsi(irq) };
}

static int arm64_load_kernel(struct vm *vm)
{
	struct arm64_vm *a = arm64(vm);
	struct arm64_image img;
	struct kernel_file k;
	int r;

	r = kernel_file_open(vm, ARM64_IMAGE_MAX_SIZE, &k);
	if (r < 0)
		return r;
	r = arm64_image_parse(k.data, k.size, k.name, &img);
	if (!r)
		r = arm64_image_load(&img, k.data, &vm->mem, ARM64_RAM_GPA,
				     &a->entry, &a->kernel_end);
	kernel_file_release(&k);
	if (r < 0)
		return r;

	/* The device tree goes at the top of RAM, at most 2 MiB of it. */
	a->dtb_gpa = (a->ram_end - ARM64_DTB_MAX) & ~(PAGE_4K - 1);
	if (a->ram_end < ARM64_RAM_GPA + ARM64_DTB_MAX ||
	    a->dtb_gpa < a->kernel_end)
		return hvm_set_error(
			-E2BIG,
			"--mem %llu MiB leaves no room for the device tree after the kernel (which ends at 0x%llx); give the VM more --mem",
			(unsigned long long)(vm->cfg->mem >> 20),
			(unsigned long long)a->kernel_end);
	/* Just below the device tree, above the kernel. */
	return initrd_load_high(vm, a->kernel_end, a->dtb_gpa, &a->initrd_gpa,
				&a->initrd_size);
}

/*
 * A guest MMIO access KVM cannot decode (no valid ISV in the syndrome, e.g.
 * a load pair or a post-indexed store to a device) makes KVM_RUN fail with
 * ENOSYS, which would read as a host error. With this capability KVM exits
 * instead, and the access is reported as the guest's fault. Older kernels
 * lack it; the ENOSYS path then remains.
 */
static void arm64_enable_nisv_exits(struct vm *vm)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_ARM_NISV_TO_USER };

	if (kvm_check_cap(vm->fd, KVM_CAP_ARM_NISV_TO_USER) > 0 &&
	    ioctl(vm->fd, KVM_ENABLE_CAP, &cap) < 0)
		pr_warn("cannot enable KVM_CAP_ARM_NISV_TO_USER: %s",
			strerror(errno));
}

int arch_vm_init(struct vm *vm)
{
	struct arm64_vm *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->arch = a;
	a->gic.fd = -1;
	if (vm->cfg->arch.irqchip == IRQCHIP_SPLIT)
		return hvm_set_error(
			-EINVAL,
			"--irqchip split is for x86 guests; arm64 always uses KVM's vGICv3");
	a->mpidr = calloc(vm->cfg->cpus, sizeof(*a->mpidr));
	if (!a->mpidr)
		return hvm_set_error(-ENOMEM, "out of memory");
	r = gic_create(&a->gic, vm->fd, vm->cfg->cpus);
	if (!r)
		arm64_enable_nisv_exits(vm);
	if (!r)
		r = arm64_setup_memory(vm);
	if (!r)
		r = arm64_load_kernel(vm);
	return r;
}

static int set_one_reg(struct vcpu *vcpu, uint64_t id, uint64_t value,
		       const char *name)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)&value };

	if (ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg) < 0)
		return hvm_set_errno_error("vCPU %u: cannot set %s", vcpu->id,
					   name);
	return 0;
}

static int get_one_reg(struct vcpu *vcpu, uint64_t id, uint64_t *value)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)value };

	return ioctl(vcpu->fd, KVM_GET_ONE_REG, &reg) < 0 ? -errno : 0;
}

static const struct {
	uint32_t option; /* CPU_FEATURE_* */
	const char *name;
	long cap;
	const char *cap_name;
	uint32_t features; /* KVM_ARM_VCPU_* bits */
} arm64_features[] = {
	{ CPU_FEATURE_PMU, "pmu", KVM_CAP_ARM_PMU_V3, "KVM_CAP_ARM_PMU_V3",
	  1u << KVM_ARM_VCPU_PMU_V3 },
	{ CPU_FEATURE_SVE, "sve", KVM_CAP_ARM_SVE, "KVM_CAP_ARM_SVE",
	  1u << KVM_ARM_VCPU_SVE },
	/* KVM takes address and generic authentication only together. */
	{ CPU_FEATURE_PAUTH, "pauth", KVM_CAP_ARM_PTRAUTH_ADDRESS,
	  "KVM_CAP_ARM_PTRAUTH_ADDRESS",
	  1u << KVM_ARM_VCPU_PTRAUTH_ADDRESS |
		  1u << KVM_ARM_VCPU_PTRAUTH_GENERIC },
	{ CPU_FEATURE_PAUTH, "pauth", KVM_CAP_ARM_PTRAUTH_GENERIC,
	  "KVM_CAP_ARM_PTRAUTH_GENERIC", 0 },
};

/* --cpu-features: refuse what this host cannot give, before any vCPU runs. */
static int arm64_optional_features(struct vm *vm, uint32_t *features)
{
	for (size_t i = 0;
	     i < sizeof(arm64_features) / sizeof(arm64_features[0]); i++) {
		if (!(vm->cfg->arch.cpu_features & arm64_features[i].option))
			continue;
		if (kvm_check_cap(vm->fd, arm64_features[i].cap) <= 0)
			return hvm_set_error(
				-ENOTSUP,
				"--cpu-features %s: this host's KVM lacks %s",
				arm64_features[i].name,
				arm64_features[i].cap_name);
		*features |= arm64_features[i].features;
	}
	return 0;
}

static int arm64_vcpu_init_target(struct vm *vm, struct vcpu *vcpu)
{
	struct arm64_vm *a = arm64(vm);
	struct kvm_vcpu_init init;
	int r;

	if (vcpu->id == 0) {
		if (ioctl(vm->fd, KVM_ARM_PREFERRED_TARGET, &a->vcpu_init) < 0)
			return hvm_set_errno_error("KVM_ARM_PREFERRED_TARGET");
		/* PSCI 0.2+; PMU, SVE and pointer auth only when asked. */
		memset(a->vcpu_init.features, 0, sizeof(a->vcpu_init.features));
		a->vcpu_init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
		r = arm64_optional_features(vm, &a->vcpu_init.features[0]);
		if (r)
			return r;
	}
	init = a->vcpu_init;
	/* Secondaries wait powered off for the guest's PSCI CPU_ON. */
	if (vcpu->id != 0)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	if (ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &init) < 0)
		return hvm_set_errno_error(
			"KVM_ARM_VCPU_INIT on vCPU %u (target %u)", vcpu->id,
			init.target);
	/* SVE vector lengths are fixed here; registers need it first. */
	if ((vm->cfg->arch.cpu_features & CPU_FEATURE_SVE) &&
	    ioctl(vcpu->fd, KVM_ARM_VCPU_FINALIZE, &(int){ KVM_ARM_VCPU_SVE }) <
		    0)
		return hvm_set_errno_error(
			"KVM_ARM_VCPU_FINALIZE (SVE) on vCPU %u", vcpu->id);
	return 0;
}

static int set_vendor_bmap_2(struct vcpu *vcpu, uint64_t value)
{
	struct kvm_one_reg reg = { .id = KVM_REG_ARM_VENDOR_HYP_BMAP_2,
				   .addr = (uintptr_t)&value };

	return ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg) < 0 ? -errno : 0;
}

/*
 * What KVM offers in the bitmap of vendor functions 64-127: REPORTED (the
 * register as read) plus each bit --pv controls that KVM accepts. Every bit
 * of that register resets to 0 (upstream's convention, and v3 of the
 * series'), so a feature is offered if a write of its bit succeeds; v2
 * kernels reported theirs set. Leaves the register at REPORTED.
 */
static uint64_t arm64_probe_vendor_bmap(struct vcpu *vcpu, uint64_t reported)
{
	uint64_t bits = arm64_pv_vendor_bits(), offered = reported;

	for (unsigned int b = 0; b < 64; b++) {
		uint64_t bit = 1ULL << b;

		if (!(bits & bit) || (reported & bit))
			continue;
		if (set_vendor_bmap_2(vcpu, reported | bit) == 0)
			offered |= bit;
	}
	if (offered != reported)
		(void)set_vendor_bmap_2(vcpu, reported);
	return offered;
}

/*
 * --pv on arm64 (pv_arm64.h): steal-time is PV time, preempted and
 * tlb-flush are the series' bits of the VM-wide vendor hypervisor bitmap.
 * KVM has that register per vCPU but keeps one value per VM, readable only
 * once a vCPU is initialised and writable only until the VM first runs:
 * vCPU 0's init resolves the request and writes back what is left out.
 * The scheduling brain records the result for --stats.
 */
static int arm64_setup_pv(struct vm *vm, struct vcpu *vcpu)
{
	uint64_t reported = 0, offered = 0, bmap;
	uint32_t enabled;
	bool have_bmap, pv_time;
	char names[128];

	/*
	 * The series' bits are in the bitmap of vendor functions 64-127, a
	 * register upstream has since 6.15 (the series' base on 6.12 adds it):
	 * without it there is nothing to control.
	 */
	have_bmap = get_one_reg(vcpu, KVM_REG_ARM_VENDOR_HYP_BMAP_2,
				&reported) == 0;
	if (have_bmap)
		offered = arm64_probe_vendor_bmap(vcpu, reported);
	pv_time = kvm_check_cap(vm->fd, KVM_CAP_STEAL_TIME) > 0;
	enabled = sched_pv_features(vm, PV_ARCH_ARM64,
				    arm64_pv_supported(pv_time, offered), true);
	bmap = arm64_pv_vendor_bmap(offered, enabled);
	if (have_bmap && bmap != reported) {
		int r = set_vendor_bmap_2(vcpu, bmap);

		if (r < 0)
			return hvm_set_error(
				r,
				"--pv: cannot set the vendor hypervisor bitmap of functions 64-127 to 0x%llx (KVM reported 0x%llx): %s",
				(unsigned long long)bmap,
				(unsigned long long)reported, strerror(-r));
	}
	if (have_bmap)
		pr_info("--pv: guest offered %s (vendor hypervisor bitmap 2 0x%llx, KVM offers 0x%llx)",
			pv_format(enabled, names, sizeof(names)),
			(unsigned long long)bmap, (unsigned long long)offered);
	else
		pr_info("--pv: guest offered %s (KVM has no bitmap of vendor functions 64-127)",
			pv_format(enabled, names, sizeof(names)));
	arm64(vm)->pv_vcpu_state =
		have_bmap &&
		(bmap & (1ULL << ARM64_VENDOR_HYP_BIT_PV_PREEMPTED));
	if (!(enabled & (1u << KVM_FEATURE_STEAL_TIME))) {
		pr_info("--pv: steal time off: vCPUs get no PV time records");
		return 0;
	}
	return arm64_setup_pvtime(vm);
}

/*
 * The kernel/ series' vCPU-state structure (its preempted flag backs the
 * guest's vcpu_is_preempted()), in the upper half of the PV time memslot.
 */
static int arm64_vcpu_pv_state(struct vcpu *vcpu)
{
	uint64_t ipa = ARM64_PVTIME_GPA + ARM64_PV_STATE_OFFSET +
		       (uint64_t)vcpu->id * HVM_PV_VCPU_STATE_SIZE;
	struct kvm_device_attr attr = {
		.group = HVM_KVM_ARM_VCPU_PV_STATE_CTRL,
		.attr = HVM_KVM_ARM_VCPU_PV_STATE_IPA,
		.addr = (uintptr_t)&ipa,
	};

	if (ioctl(vcpu->fd, KVM_HAS_DEVICE_ATTR, &attr) < 0)
		return 0;
	if (ioctl(vcpu->fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
		return hvm_set_errno_error(
			"vCPU %u: cannot place the vCPU-state structure at 0x%llx",
			vcpu->id, (unsigned long long)ipa);
	return 0;
}

/* Steal time: optional, since hosts without it still run guests fine. */
static int arm64_vcpu_pvtime(struct vm *vm, struct vcpu *vcpu)
{
	struct arm64_vm *a = arm64(vm);
	uint64_t ipa =
		ARM64_PVTIME_GPA + (uint64_t)vcpu->id * ARM64_PVTIME_STRIDE;
	struct kvm_device_attr attr = {
		.group = KVM_ARM_VCPU_PVTIME_CTRL,
		.attr = KVM_ARM_VCPU_PVTIME_IPA,
		.addr = (uintptr_t)&ipa,
	};

	if (!a->pvtime ||
	    (vcpu->id + 1) * ARM64_PVTIME_STRIDE > ARM64_PV_STATE_OFFSET)
		return 0;
	if (ioctl(vcpu->fd, KVM_HAS_DEVICE_ATTR, &attr) < 0) {
		pr_info("vCPU %u: this host's KVM has no PV time (steal time off)",
			vcpu->id);
		return 0;
	}
	if (ioctl(vcpu->fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
		return hvm_set_errno_error(
			"vCPU %u: cannot place PV time at 0x%llx", vcpu->id,
			(unsigned long long)ipa);
	a->pvtime_vcpus++;
	return a->pv_vcpu_state ? arm64_vcpu_pv_state(vcpu) : 0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu)
{
	struct arm64_vm *a = arm64(vm);
	int r = arm64_vcpu_init_target(vm, vcpu);

	if (r)
		return r;
	r = get_one_reg(vcpu, SYS_REG_MPIDR_EL1, &a->mpidr[vcpu->id]);
	if (r)
		return hvm_set_error(r, "vCPU %u: cannot read MPIDR_EL1: %s",
				     vcpu->id, strerror(-r));
	if (vcpu->id == 0)
		r = arm64_setup_pv(vm, vcpu);
	if (!r)
		r = arm64_vcpu_pvtime(vm, vcpu);
	if (r || vcpu->id != 0)
		return r;
	r = set_one_reg(vcpu, CORE_REG(regs.pstate), ARM64_BOOT_PSTATE,
			"PSTATE");
	if (!r)
		r = set_one_reg(vcpu, CORE_REG(regs.regs[0]), a->dtb_gpa, "X0");
	if (!r)
		r = set_one_reg(vcpu, CORE_REG(regs.pc), a->entry, "PC");
	return r;
}

int arch_virtio_mmio_slot(struct vm *vm, struct arch_virtio_mmio_slot *slot)
{
	struct arm64_vm *a = arm64(vm);
	struct arm64_fdt_mmio_dev *dev;

	if (!a || a->nr_virtio >= ARM64_VIRTIO_MMIO_SLOTS)
		return -ENOSPC;
	dev = &a->virtio[a->nr_virtio];
	*dev = (struct arm64_fdt_mmio_dev){
		.gpa = ARM64_VIRTIO_MMIO_GPA +
		       a->nr_virtio * ARM64_VIRTIO_MMIO_SIZE,
		.size = ARM64_VIRTIO_MMIO_SIZE,
		.spi = ARM64_VIRTIO_MMIO_SPI + a->nr_virtio,
	};
	a->nr_virtio++;
	*slot = (struct arch_virtio_mmio_slot){ .gpa = dev->gpa,
						.size = dev->size,
						.irq_gsi =
							gic_spi_gsi(dev->spi) };
	return 0;
}

static int arm64_dump_dtb(const char *path, const void *fdt, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return hvm_set_errno_error("--dtb-dump: cannot create %s",
					   path);
	n = write(fd, fdt, size);
	if (n != (ssize_t)size) {
		int err = n < 0 ? errno : EIO;

		close(fd);
		return hvm_set_error(-err, "--dtb-dump: cannot write %s: %s",
				     path, strerror(err));
	}
	if (close(fd) < 0)
		return hvm_set_errno_error("--dtb-dump: cannot write %s", path);
	return 0;
}

static int arm64_write_fdt(struct vm *vm)
{
	struct arm64_vm *a = arm64(vm);
	struct arm64_fdt_params p = {
		.nr_cpus = vm->nr_vcpus,
		.mpidr = a->mpidr,
		.ram_gpa = ARM64_RAM_GPA,
		.ram_size = vm->cfg->mem,
		.gicd_gpa = ARM64_GICD_GPA,
		.gicd_size = ARM64_GICD_SIZE,
		.gicr_gpa = ARM64_GICR_GPA,
		.gicr_size = (uint64_t)vm->nr_vcpus * ARM64_GICR_STRIDE,
		.uart = { .gpa = ARM64_UART_GPA,
			  .size = ARM64_UART_SIZE,
			  .spi = ARM64_UART_SPI },
		.bootargs = vm->cfg->cmdline,
		.initrd_gpa = a->initrd_gpa,
		.initrd_size = a->initrd_size,
		.virtio = a->virtio,
		.nr_virtio = a->nr_virtio,
		.hint_gpa = vm->cfg->sched->settings.hints ? ARM64_HINT_GPA : 0,
		.pvpanic_gpa = ARM64_PVPANIC_GPA,
		.pmu = vm->cfg->arch.cpu_features & CPU_FEATURE_PMU,
	};
	void *buf = calloc(1, FDT_BUF_SIZE);
	int size, r;

	if (!buf)
		return hvm_set_error(-ENOMEM, "out of memory");
	size = arm64_fdt_build(&p, buf, FDT_BUF_SIZE);
	r = size < 0 ? size : 0;
	if (!r)
		r = guest_write(&vm->mem, a->dtb_gpa, buf, (size_t)size);
	if (!r && vm->cfg->arch.dtb_dump)
		r = arm64_dump_dtb(vm->cfg->arch.dtb_dump, buf, (size_t)size);
	free(buf);
	return r;
}

/* The PMU overflow interrupt, once the vGIC is initialised (KVM wants it). */
static int arm64_pmu_init(struct vm *vm)
{
	uint32_t irq = ARM64_GIC_PPI_BASE + ARM64_PPI_PMU;

	if (!(vm->cfg->arch.cpu_features & CPU_FEATURE_PMU))
		return 0;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct kvm_device_attr attr = {
			.group = KVM_ARM_VCPU_PMU_V3_CTRL,
			.attr = KVM_ARM_VCPU_PMU_V3_IRQ,
			.addr = (uintptr_t)&irq,
		};

		if (ioctl(vm->vcpus[i].fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
			return hvm_set_errno_error(
				"vCPU %u: cannot set the PMU interrupt", i);
		attr = (struct kvm_device_attr){
			.group = KVM_ARM_VCPU_PMU_V3_CTRL,
			.attr = KVM_ARM_VCPU_PMU_V3_INIT,
		};
		if (ioctl(vm->vcpus[i].fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
			return hvm_set_errno_error(
				"vCPU %u: cannot initialise the PMU", i);
	}
	return 0;
}

int arch_vm_finalize(struct vm *vm)
{
	int r = gic_finalize(&arm64(vm)->gic);

	if (!r)
		r = arm64_pmu_init(vm);
	if (!r)
		r = arm64_write_fdt(vm);
	return r;
}

int arch_vcpu_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	char where[96];

	if (run->exit_reason != KVM_EXIT_ARM_NISV)
		return -ENOSYS;
	arch_vcpu_describe(vcpu, where, sizeof(where));
	vm_request_stop(vcpu->vm, HVM_EXIT_CRASH, 0, (int)vcpu->id,
			"vCPU %u: guest accessed MMIO at 0x%llx with an "
			"instruction KVM cannot emulate (no syndrome, ESR "
			"0x%llx); device registers need single loads and "
			"stores (%s)",
			vcpu->id, (unsigned long long)run->arm_nisv.fault_ipa,
			(unsigned long long)run->arm_nisv.esr_iss, where);
	return 1;
}

uint64_t arch_vcpu_exit_pc(const struct vcpu *vcpu)
{
	return 0; /* the PC costs a KVM_GET_ONE_REG: not on every exit */
}

void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len)
{
	uint64_t pc = 0, pstate = 0;

	if (get_one_reg(vcpu, CORE_REG(regs.pc), &pc) < 0 ||
	    get_one_reg(vcpu, CORE_REG(regs.pstate), &pstate) < 0) {
		snprintf(buf, len, "registers not available");
		return;
	}
	snprintf(buf, len, "pc=0x%llx pstate=0x%llx", (unsigned long long)pc,
		 (unsigned long long)pstate);
}

void arch_vm_destroy(struct vm *vm)
{
	struct arm64_vm *a = arm64(vm);

	if (!a)
		return;
	gic_destroy(&a->gic);
	if (a->pvtime)
		munmap(a->pvtime, ARM64_PVTIME_SIZE);
	free(a->mpidr);
	free(a);
	vm->arch = NULL;
}

/*
 * Snapshots are x86-only for now (docs/snapshot.md): the vGICv3, timers,
 * PSCI and PV time state are not saved yet, so a snapshot is refused
 * before anything is written, and a restore before anything is built.
 */
static int arm64_no_snapshot(void)
{
	return hvm_set_error(
		-EOPNOTSUPP,
		"snapshots are not supported on arm64 yet (the vGIC, timer and PV time state are not saved)");
}

const char *arch_irqchip_name(struct vm *vm)
{
	return NULL; /* arm64 has no --irqchip */
}

int arch_snapshot_identity(struct vm *vm, struct snap_identity *id)
{
	return arm64_no_snapshot();
}

int arch_snapshot_save(struct vm *vm, struct snap_writer *w)
{
	return arm64_no_snapshot();
}

int arch_host_cpu_id(char *buf, size_t len)
{
	return arm64_no_snapshot(); /* a template is a snapshot */
}

int arch_snapshot_check(struct vm *vm, const struct snap_file *f,
			const char *path)
{
	return arm64_no_snapshot();
}

int arch_snapshot_load(struct vm *vm, const struct snap_file *f,
		       const char *path)
{
	return arm64_no_snapshot();
}
