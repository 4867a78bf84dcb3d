// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The x86-64 machine: split irqchip (or KVM's with the PIT), RAM below the 3 GiB MMIO
 * hole and above 4 GiB, the legacy platform devices Linux probes, kernel
 * loading (PVH ELF), and the per-vCPU state (CPUID, MSRs, LAPIC, registers).
 */
#include <asm/kvm_para.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/acpi.h"
#include "arch/x86/boot64.h"
#include "arch/x86/bzimage.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/e820.h"
#include "arch/x86/hypercall_probe.h"
#include "arch/x86/irqchip.h"
#include "arch/x86/mptable.h"
#include "arch/x86/platform.h"
#include "arch/x86/pvh.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/vm.h"
#include "image/boot_files.h"
#include "image/kernel_format.h"
#include "sched/brain.h"
#include "sched/pv.h"

#define MAX_KERNEL_SIZE (512u << 20)
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MISC_ENABLE_FAST_STRING 1
#define APIC_LVT0 0x350
#define APIC_LVT1 0x360
#define APIC_MODE_EXTINT 0x700
#define APIC_MODE_NMI 0x400
#define APIC_LVT_MASKED (1u << 16)

struct x86_vm {
	struct x86_irqchip irqchip;
	struct kvm_cpuid2 *supported_cpuid;
	struct cpuid_vm_params cpuid;
	uint64_t entry;
	bool linux64; /* bzImage: 64-bit boot protocol, else PVH */
	uint64_t boot_params_gpa;
	uint64_t kernel_end;
	uint64_t initrd_gpa;
	uint64_t initrd_size;
	uint64_t low_ram_end; /* RAM below the MMIO hole ends here */
};

static struct x86_vm *x86(struct vm *vm)
{
	return vm->arch;
}

static const struct kvm_required_cap x86_caps[] = {
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_MP_STATE, "KVM_CAP_MP_STATE" },
};

int arch_check_kvm(struct kvm_host *kvm)
{
	return kvm_require_caps(kvm->fd, x86_caps,
				sizeof(x86_caps) / sizeof(x86_caps[0]));
}

unsigned int arch_max_vcpus(void)
{
	return X86_MAX_VCPUS;
}

int arch_msi_target_vcpu(uint64_t addr)
{
	/* 0xFEExxxxx, destination APIC ID (= vCPU index) in bits 19:12. */
	if ((addr >> 20) != (X86_LAPIC_GPA >> 20))
		return -1;
	return (int)((addr >> 12) & 0xff);
}

void arch_idle_exits_query(int vm_fd, bool *hlt, bool *pause)
{
	int r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_DISABLE_EXITS);

	if (r < 0)
		r = 0;
	*hlt = r & KVM_X86_DISABLE_EXITS_HLT;
	*pause = r & KVM_X86_DISABLE_EXITS_PAUSE;
}

int arch_idle_exits_disable(int vm_fd, bool hlt, bool pause)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_DISABLE_EXITS };

	if (hlt)
		cap.args[0] |= KVM_X86_DISABLE_EXITS_HLT;
	if (pause)
		cap.args[0] |= KVM_X86_DISABLE_EXITS_PAUSE;
	if (!cap.args[0])
		return 0;
	return ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

static int x86_setup_memory(struct vm *vm)
{
	uint64_t mem = vm->cfg->mem;
	uint64_t low = mem < X86_MMIO_HOLE_START ? mem : X86_MMIO_HOLE_START;
	int r;

	r = vm_map_memory(vm);
	if (r < 0)
		return r;
	r = vm_add_ram(vm, 0, low, 0);
	if (r < 0)
		return r;
	if (mem > low) {
		r = vm_add_ram(vm, X86_MMIO_HOLE_END, mem - low, low);
		if (r < 0)
			return r;
	}
	x86(vm)->low_ram_end = low;
	return 0;
}

/*
 * The legacy devices Linux probes, the PCI host that carries virtio, the
 * hint channel and the rr partner: what the builder places (core/arch.h),
 * and what the MP table and the DSDT (acpi.c) describe.
 */
static const struct platform_slot x86_platform[] = {
	{ PLATFORM_UART, .base = X86_COM1_PORT, .irq = X86_COM1_IRQ },
	{ PLATFORM_CMOS_RTC, .base = X86_CMOS_PORT },
	{ PLATFORM_I8042, .base = X86_I8042_DATA_PORT,
	  .base2 = X86_I8042_CMD_PORT },
	{ PLATFORM_DEBUG_EXIT, .base = X86_DEBUG_EXIT_PORT },
	{ PLATFORM_ACPI_PM, .base = X86_PM1A_EVT_PORT,
	  .base2 = X86_PM1A_CNT_PORT, .base3 = X86_GPE0_PORT,
	  .irq = ACPI_SCI_IRQ },
	{ PLATFORM_PVPANIC, .base = X86_PVPANIC_PORT }, /* DSDT: QEMU0001 */
	/* After ACPI PM: the reset port 0xcf9 is in the PCI config ports. */
	{ PLATFORM_PCI_HOST, .mmio = true, .base = X86_PCI_MMIO_GPA,
	  .size = X86_PCI_MMIO_SIZE },
	{ PLATFORM_POST, .base = X86_POST_PORT },
	{ PLATFORM_HINTS, .base = X86_HINT_PORT },
	{ PLATFORM_RR_PARTNER, .base = X86_RR_PARTNER_PORT,
	  .irq = X86_RR_PARTNER_IRQ },
	/* DSDT: VGEN (VMGENCTR) and \_GPE._E00. */
	{ PLATFORM_VMGENID, .base = X86_VMGENID_GPA, .irq = X86_VMGENID_GPE },
};

const struct platform_slot *arch_platform(size_t *count)
{
	*count = sizeof(x86_platform) / sizeof(x86_platform[0]);
	return x86_platform;
}

struct x86_irqchip *x86_irqchip_of(struct vm *vm)
{
	return &x86(vm)->irqchip;
}

const char *arch_irqchip_name(struct vm *vm)
{
	return x86_irqchip_name(&x86(vm)->irqchip);
}

struct irq_line arch_irq_line(struct vm *vm, uint32_t irq)
{
	return x86_irqchip_line(&x86(vm)->irqchip, irq);
}

/*
 * bzImage: the loader places kernel, initrd, command line and zero page
 * itself (initrd_addr_max and init_size are in the image's header).
 */
static int x86_load_bzimage(struct vm *vm, const uint8_t *img, size_t size,
			    const char *path)
{
	struct x86_vm *a = x86(vm);
	struct linux_boot_args args = {
		.cmdline = vm->cfg->cmdline,
		.initrd_name = vm->cfg->initrd,
		.ram_size = vm->cfg->mem,
		.acpi_rsdp_gpa =
			X86_ACPI_GPA, /* acpi_build_tables puts it there */
	};
	struct linux_boot_entry entry;
	uint8_t *initrd;
	size_t initrd_size;
	int r;

	r = initrd_read(vm, &initrd, &initrd_size);
	if (r < 0)
		return r;
	args.initrd = initrd;
	args.initrd_size = initrd_size;
	r = bzimage_load(&vm->mem, path, img, size, &args, &entry);
	free(initrd);
	if (!r)
		r = boot64_write_tables(&vm->mem);
	if (r < 0)
		return r;
	a->linux64 = true;
	a->entry = entry.rip;
	a->boot_params_gpa = entry.boot_params_gpa;
	a->kernel_end = entry.kernel_end;
	a->initrd_gpa = entry.initrd_gpa;
	a->initrd_size = initrd_size;
	return 0;
}

static int x86_load_kernel(struct vm *vm)
{
	struct x86_vm *a = x86(vm);
	struct pvh_image image;
	struct kernel_file k;
	int r;

	r = kernel_file_open(vm, MAX_KERNEL_SIZE, &k);
	if (r < 0)
		return r;
	if (pvh_is_elf(k.data, k.size)) {
		r = pvh_load_elf(k.data, k.size, k.name, &vm->mem,
				 X86_HIGH_MEM_START, &image);
	} else if (bzimage_probe(k.data, k.size)) {
		r = x86_load_bzimage(vm, k.data, k.size, k.name);
		kernel_file_release(&k);
		return r;
	} else {
		/* Neither: let the bzImage parser say what it found. */
		struct bzimage_info info;
		char why[256];

		bzimage_parse(k.name, k.data, k.size, &info);
		snprintf(why, sizeof(why), "%s", hvm_error_message());
		r = hvm_set_error(
			-EINVAL,
			"kernel %s is not a kernel hintvm can boot on x86-64: it is %s; expected a PVH ELF (vmlinux) or a bzImage (%s)",
			k.name,
			kernel_format_name(
				kernel_format_detect(k.data, k.size)),
			why);
	}
	kernel_file_release(&k);
	if (r < 0)
		return r;
	a->entry = image.entry;
	a->kernel_end = image.load_end;
	/* As high as possible in low RAM, above the kernel. */
	return initrd_load_high(vm, a->kernel_end, a->low_ram_end,
				&a->initrd_gpa, &a->initrd_size);
}

static int x86_write_cmdline(struct vm *vm)
{
	const char *cmdline = vm->cfg->cmdline ? vm->cfg->cmdline : "";
	size_t len = strlen(cmdline) + 1;

	if (len > X86_CMDLINE_MAX)
		return hvm_set_error(
			-E2BIG, "--cmdline is %zu bytes long; at most %d fit",
			len - 1, X86_CMDLINE_MAX - 1);
	return guest_write(&vm->mem, X86_CMDLINE_GPA, cmdline, len);
}

/*
 * The KVM paravirt features --pv asks for, of those this host serves.
 * arm64-only names (preempted: x86 guests get that flag with steal-time)
 * are ignored with a warning.
 */
static uint32_t x86_pv_features(struct vm *vm, struct x86_vm *a)
{
	struct kvm_cpuid_entry2 *e =
		cpuid_find(a->supported_cpuid, KVM_CPUID_FEATURES_LEAF, 0);

	return sched_pv_features(vm, PV_ARCH_X86,
				 e ? e->eax & pv_arch_mask(PV_ARCH_X86) : 0,
				 x86_hypercalls_work(vm->kvm.fd));
}

int arch_vm_init(struct vm *vm)
{
	struct x86_vm *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->arch = a;
	if (vm->cfg->arch.cpu_features)
		return hvm_set_error(
			-EINVAL,
			"--cpu-features is for arm64 guests; x86 vCPUs get the host's CPUID");
	r = cpuid_get_supported(vm->kvm.fd, &a->supported_cpuid);
	if (r < 0)
		return r;
	a->cpuid = (struct cpuid_vm_params){
		.nr_cpus = vm->cfg->cpus,
		.tsc_deadline = kvm_check_cap(vm->kvm.fd,
					      KVM_CAP_TSC_DEADLINE_TIMER) > 0,
		.kvm_features = x86_pv_features(vm, a),
	};
	r = x86_irqchip_create(vm, &a->irqchip);
	if (!r)
		r = x86_setup_memory(vm);
	/* A restored VM's memory holds its kernel, running already. */
	if (!r && vm->restore_mem_fd >= 0)
		return 0;
	if (!r)
		r = x86_load_kernel(vm);
	if (!r)
		r = x86_write_cmdline(vm);
	return r;
}

static int x86_vcpu_set_cpuid(struct vm *vm, struct vcpu *vcpu)
{
	struct x86_vm *a = x86(vm);
	const struct kvm_cpuid2 *src = a->supported_cpuid;
	struct kvm_cpuid2 *c =
		calloc(1, sizeof(*c) + (src->nent + CPUID_EXTRA_ENTRIES) *
					       sizeof(c->entries[0]));
	int khz, r = 0;

	if (!c)
		return hvm_set_error(-ENOMEM, "out of memory");
	if (vcpu->id == 0) {
		khz = ioctl(vcpu->fd, KVM_GET_TSC_KHZ, 0);
		a->cpuid.tsc_khz = khz > 0 ? (uint32_t)khz : 0;
	}
	cpuid_for_vcpu(src, c, vcpu->id, &a->cpuid);
	if (ioctl(vcpu->fd, KVM_SET_CPUID2, c) < 0)
		r = hvm_set_errno_error("KVM_SET_CPUID2 on vCPU %u", vcpu->id);
	free(c);
	/* Make KVM refuse PV MSRs and hypercalls the CPUID does not offer. */
	if (!r && kvm_check_cap(vm->fd, KVM_CAP_ENFORCE_PV_FEATURE_CPUID) > 0) {
		struct kvm_enable_cap cap = {
			.cap = KVM_CAP_ENFORCE_PV_FEATURE_CPUID,
			.args = { 1 },
		};

		if (ioctl(vcpu->fd, KVM_ENABLE_CAP, &cap) < 0)
			r = hvm_set_errno_error(
				"KVM_CAP_ENFORCE_PV_FEATURE_CPUID on vCPU %u",
				vcpu->id);
	}
	return r;
}

static int x86_vcpu_set_msrs(struct vcpu *vcpu)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entries[1];
	} msrs = {
		.hdr.nmsrs = 1,
		.entries = { { .index = MSR_IA32_MISC_ENABLE,
			       .data = MISC_ENABLE_FAST_STRING } },
	};

	if (ioctl(vcpu->fd, KVM_SET_MSRS, &msrs) != 1)
		return hvm_set_error(-EIO, "KVM_SET_MSRS on vCPU %u failed",
				     vcpu->id);
	return 0;
}

/*
 * LINT0 as ExtINT (the PIC) and LINT1 as NMI, as firmware leaves them;
 * with no PIC (split irqchip) LINT0 stays masked, so Linux keeps it so.
 */
static int x86_vcpu_set_lapic(struct vm *vm, struct vcpu *vcpu)
{
	struct kvm_lapic_state lapic;
	uint32_t v;

	if (ioctl(vcpu->fd, KVM_GET_LAPIC, &lapic) < 0)
		return hvm_set_errno_error("KVM_GET_LAPIC on vCPU %u",
					   vcpu->id);
	memcpy(&v, &lapic.regs[APIC_LVT0], 4);
	v = (v & ~0x700u) | APIC_MODE_EXTINT;
	if (x86(vm)->irqchip.split)
		v |= APIC_LVT_MASKED;
	else
		v &= ~APIC_LVT_MASKED;
	memcpy(&lapic.regs[APIC_LVT0], &v, 4);
	memcpy(&v, &lapic.regs[APIC_LVT1], 4);
	v = (v & ~0x700u) | APIC_MODE_NMI;
	memcpy(&lapic.regs[APIC_LVT1], &v, 4);
	if (ioctl(vcpu->fd, KVM_SET_LAPIC, &lapic) < 0)
		return hvm_set_errno_error("KVM_SET_LAPIC on vCPU %u",
					   vcpu->id);
	return 0;
}

static void flat_segment(struct kvm_segment *s, uint16_t selector, uint8_t type)
{
	*s = (struct kvm_segment){
		.base = 0,
		.limit = 0xffffffff,
		.selector = selector,
		.type = type,
		.present = 1,
		.dpl = 0,
		.db = 1,
		.s = 1,
		.l = 0,
		.g = 1,
	};
}

/* PVH entry state: 32-bit protected mode, flat segments, paging off. */
static int x86_vcpu_set_boot_regs(struct vm *vm, struct vcpu *vcpu)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = {
		.rip = x86(vm)->entry,
		.rbx = X86_PVH_START_INFO_GPA,
		.rflags = 0x2,
	};

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0)
		return hvm_set_errno_error("KVM_GET_SREGS");
	if (x86(vm)->linux64) {
		/* bzImage: long mode, RSI = zero page (boot64.h). */
		boot64_set_entry_state(&regs, &sregs, x86(vm)->entry,
				       x86(vm)->boot_params_gpa);
	} else {
		flat_segment(&sregs.cs, 0x10, 0xb); /* execute/read, accessed */
		flat_segment(&sregs.ds, 0x18, 0x3); /* read/write, accessed */
		sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
		sregs.cr0 = 0x11; /* PE | ET */
		sregs.cr4 = 0;
		sregs.efer = 0;
	}
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0)
		return hvm_set_errno_error("KVM_SET_SREGS");
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		return hvm_set_errno_error("KVM_SET_REGS");
	return 0;
}

int arch_vcpu_init(struct vm *vm, struct vcpu *vcpu)
{
	int r = x86_vcpu_set_cpuid(vm, vcpu);

	if (!r)
		r = x86_vcpu_set_msrs(vcpu);
	if (!r)
		r = x86_vcpu_set_lapic(vm, vcpu);
	if (r)
		return r;
	/* Registers come back with every exit: crash reports need no ioctl. */
	if (vm->kvm.sync_regs)
		vcpu->run->kvm_valid_regs =
			KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
	/* APs wait for the guest's INIT/SIPI in the in-kernel LAPIC; a
	 * restored vCPU gets its registers from the snapshot. */
	if (vcpu->id == 0 && vm->restore_mem_fd < 0)
		return x86_vcpu_set_boot_regs(vm, vcpu);
	return 0;
}

static void x86_memmap_add(struct hvm_memmap_table_entry *map, uint32_t *n,
			   uint64_t addr, uint64_t size, uint32_t type)
{
	map[(*n)++] = (struct hvm_memmap_table_entry){ .addr = addr,
						       .size = size,
						       .type = type };
}

static int x86_write_start_info(struct vm *vm)
{
	struct x86_vm *a = x86(vm);
	struct hvm_memmap_table_entry map[X86_E820_MAX_ENTRIES];
	struct x86_e820_entry e820[X86_E820_MAX_ENTRIES];
	struct hvm_modlist_entry mod = { .paddr = a->initrd_gpa,
					 .size = a->initrd_size };
	struct hvm_start_info info = {
		.magic = HVM_START_MAGIC,
		.version = 1,
		.cmdline_paddr = X86_CMDLINE_GPA,
		.memmap_paddr = X86_PVH_MEMMAP_GPA,
		.rsdp_paddr = X86_ACPI_GPA,
	};
	uint32_t n = 0;
	int nr_e820, r;

	/* The same map the bzImage zero page gets (e820.h). */
	nr_e820 = x86_e820_build(vm->cfg->mem, e820, X86_E820_MAX_ENTRIES);
	if (nr_e820 < 0)
		return hvm_set_error(nr_e820,
				     "guest RAM of %llu bytes is too small",
				     (unsigned long long)vm->cfg->mem);
	for (int i = 0; i < nr_e820; i++)
		x86_memmap_add(map, &n, e820[i].addr, e820[i].size,
			       e820[i].type);
	info.memmap_entries = n;
	if (a->initrd_size) {
		info.nr_modules = 1;
		info.modlist_paddr = X86_PVH_MODLIST_GPA;
		r = guest_write(&vm->mem, X86_PVH_MODLIST_GPA, &mod,
				sizeof(mod));
		if (r < 0)
			return r;
	}
	r = guest_write(&vm->mem, X86_PVH_MEMMAP_GPA, map, n * sizeof(map[0]));
	if (!r)
		r = guest_write(&vm->mem, X86_PVH_START_INFO_GPA, &info,
				sizeof(info));
	return r;
}

int arch_vm_finalize(struct vm *vm)
{
	/* ACPI for Linux; the MP table stays for acpi=off and tiny kernels. */
	bool legacy_pic = !x86(vm)->irqchip.split;
	int r;

	/* The guest's tables are in its restored memory, maybe changed by
	 * it: writing them again would corrupt a running system. */
	if (vm->restore_mem_fd >= 0)
		return 0;
	r = mptable_write(&vm->mem, X86_MPTABLE_GPA, X86_MPTABLE_MAX,
			  vm->nr_vcpus, legacy_pic);

	if (!r)
		r = acpi_build_tables(&vm->mem, vm->nr_vcpus, legacy_pic, NULL);
	if (!r && !x86(vm)->linux64)
		r = x86_write_start_info(vm);
	return r;
}

int arch_vcpu_exit(struct vcpu *vcpu)
{
	return x86_irqchip_vcpu_exit(&x86(vcpu->vm)->irqchip, vcpu);
}

int arch_virtio_mmio_slot(struct vm *vm, struct arch_virtio_mmio_slot *slot)
{
	return -EOPNOTSUPP; /* virtio devices sit on PCI on x86 */
}

uint64_t arch_vcpu_exit_pc(const struct vcpu *vcpu)
{
	const struct kvm_run *run = vcpu->run;

	return (run->kvm_valid_regs & KVM_SYNC_X86_REGS) ? run->s.regs.regs.rip
							 : 0;
}

void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len)
{
	const struct kvm_run *run = vcpu->run;

	if (!(run->kvm_valid_regs & KVM_SYNC_X86_REGS)) {
		snprintf(buf, len, "registers not available");
		return;
	}
	snprintf(buf, len, "rip=0x%llx cr0=0x%llx cs=0x%x",
		 (unsigned long long)run->s.regs.regs.rip,
		 (unsigned long long)run->s.regs.sregs.cr0,
		 run->s.regs.sregs.cs.selector);
}

void arch_vm_destroy(struct vm *vm)
{
	struct x86_vm *a = x86(vm);

	if (!a)
		return;
	x86_irqchip_destroy(&a->irqchip);
	free(a->supported_cpuid);
	free(a);
	vm->arch = NULL;
}
