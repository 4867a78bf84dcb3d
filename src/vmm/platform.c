// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every device of a VM is created and placed here, on the slots the arch
 * describes: the arch says where (ports, windows, interrupt numbers), this
 * file says what each device needs (its bus operations, its interrupt
 * line, its wiring to the power sink or the console). A device new to a
 * platform is one slot in the arch's table and, if it is new to hintvm,
 * one case below.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "abi/rr_partner_abi.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/vm.h"
#include "devices/acpi_pm.h"
#include "devices/cmos_rtc.h"
#include "devices/debug_exit.h"
#include "devices/i8042.h"
#include "devices/pci/pci.h"
#include "devices/pvpanic.h"
#include "devices/rr_partner.h"
#include "devices/uart8250.h"
#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_vm.h"
#include "devices/vmgenid.h"
#include "sched/brain.h"
#include "snapshot/format.h"
#include "vmm/platform.h"

struct platform {
	struct uart8250 *uart;
	struct cmos_rtc *rtc;
	struct i8042 *kbc;
	struct acpi_pm *pm;
	struct pvpanic *pvpanic;
	struct pci_host *pci;
	struct rr_partner *rr; /* --rr-partner only */
	int vmgenid_gpe; /* -1: the machine has no generation ID */
};

static int place(struct vm *vm, const struct platform_slot *slot, uint64_t addr,
		 uint64_t len, const struct bus_ops *ops, void *dev,
		 const char *name)
{
	return slot->mmio ? vm_register_mmio(vm, addr, len, ops, dev, name)
			  : vm_register_pio(vm, addr, len, ops, dev, name);
}

static int no_memory(const char *what)
{
	return hvm_set_error(-ENOMEM, "out of memory for the %s", what);
}

static int place_uart(struct vm *vm, struct platform *p,
		      const struct platform_slot *slot)
{
	p->uart =
		uart8250_create(arch_irq_line(vm, slot->irq), vm->console_out);
	if (!p->uart)
		return no_memory("serial port");
	vm->console_sink = uart8250_console_sink(p->uart);
	uart8250_set_output_notify(p->uart, vm_console_output, vm);
	return place(vm, slot, slot->base, UART8250_REGS, &uart8250_bus_ops,
		     p->uart, "ttyS0");
}

static int place_i8042(struct vm *vm, struct platform *p,
		       const struct platform_slot *slot)
{
	int r;

	p->kbc = i8042_create(vm->power);
	if (!p->kbc)
		return no_memory("i8042");
	r = place(vm, slot, slot->base, 1, &i8042_data_bus_ops, p->kbc,
		  "i8042-data");
	return r ? r
		 : place(vm, slot, slot->base2, 1, &i8042_cmd_bus_ops, p->kbc,
			 "i8042-cmd");
}

static int place_acpi_pm(struct vm *vm, struct platform *p,
			 const struct platform_slot *slot)
{
	int r;

	p->pm = acpi_pm_create(vm->power, arch_irq_line(vm, slot->irq));
	if (!p->pm)
		return no_memory("ACPI PM registers");
	r = place(vm, slot, slot->base, ACPI_PM1_EVT_LEN, &acpi_pm1_evt_bus_ops,
		  p->pm, "pm1a-evt");
	if (r == 0)
		r = place(vm, slot, slot->base2, ACPI_PM1_CNT_LEN,
			  &acpi_pm1_cnt_bus_ops, p->pm, "pm1a-cnt");
	return r ? r
		 : place(vm, slot, slot->base3, ACPI_GPE0_LEN,
			 &acpi_gpe0_bus_ops, p->pm, "gpe0");
}

/*
 * A fresh ID on every start: a booted VM's first, a restored VM's new one
 * (its memory is the snapshot's, so it would otherwise repeat the
 * snapshotted VM's); platform_load() then tells the restored guest.
 */
static int place_vmgenid(struct vm *vm, struct platform *p,
			 const struct platform_slot *slot)
{
	if (!p->pm)
		return hvm_set_error(
			-EINVAL,
			"the VM generation ID needs the ACPI PM block placed before it");
	p->vmgenid_gpe = (int)slot->irq;
	return vmgenid_write(&vm->mem, slot->base);
}

/*
 * PCI bus 0 on the configuration ports (mechanism #1) and the BAR window;
 * the ACPI reset register 0xcf9 lives inside those ports.
 */
static int place_pci_host(struct vm *vm, struct platform *p,
			  const struct platform_slot *slot)
{
	int r;

	p->pci = pci_host_create(slot->base, slot->size);
	if (!p->pci)
		return no_memory("PCI host");
	if (p->pm)
		pci_host_set_cf9_handler(p->pci, &acpi_reset_bus_ops, p->pm);
	r = vm_register_pio(vm, PCI_HOST_CFG_PORT, PCI_HOST_CFG_LEN,
			    &pci_host_cfg_ops, p->pci, "pci-config");
	return r ? r
		 : vm_register_mmio(vm, slot->base, slot->size,
				    &pci_host_mmio_ops, p->pci, "pci-bars");
}

static const struct bus_ops post_port_ops = { 0 };

/* Linux's io_delay writes the POST port: batch them instead of exiting. */
static int place_post(struct vm *vm, const struct platform_slot *slot)
{
	int r = place(vm, slot, slot->base, 1, &post_port_ops, NULL, "post");

	return r ? r
		 : bus_set_coalesced(slot->mmio ? &vm->mmio : &vm->pio,
				     slot->base);
}

/*
 * The rr benchmark partner: its doorbell is an ioeventfd and its answer an
 * irqfd, so a transaction never leaves the kernel on the vCPU side
 * (bench/, docs/benchmarks.md).
 */
static int place_rr_partner(struct vm *vm, struct platform *p,
			    const struct platform_slot *slot)
{
	struct kvm_ioeventfd doorbell = {
		.addr = slot->base + RR_REG_DOORBELL,
		.len = 4,
		.flags = slot->mmio ? 0 : KVM_IOEVENTFD_FLAG_PIO,
	};
	struct kvm_irqfd answer = { .gsi = slot->irq };

	p->rr = rr_partner_create();
	if (!p->rr)
		return no_memory("rr partner");
	doorbell.fd = rr_partner_request_fd(p->rr);
	answer.fd = (uint32_t)rr_partner_response_fd(p->rr);
	if (ioctl(vm->fd, KVM_IOEVENTFD, &doorbell) < 0)
		return hvm_set_errno_error(
			"--rr-partner: KVM_IOEVENTFD at 0x%llx",
			(unsigned long long)doorbell.addr);
	if (ioctl(vm->fd, KVM_IRQFD, &answer) < 0)
		return hvm_set_errno_error("--rr-partner: KVM_IRQFD on GSI %u",
					   slot->irq);
	return place(vm, slot, slot->base, RR_PARTNER_LEN, &rr_partner_bus_ops,
		     p->rr, "rr-partner");
}

static int place_slot(struct vm *vm, struct platform *p,
		      const struct platform_slot *slot)
{
	switch (slot->device) {
	case PLATFORM_UART:
		return place_uart(vm, p, slot);
	case PLATFORM_CMOS_RTC:
		p->rtc = cmos_rtc_create(NULL);
		if (!p->rtc)
			return no_memory("CMOS RTC");
		return place(vm, slot, slot->base, 2, &cmos_rtc_bus_ops, p->rtc,
			     "cmos-rtc");
	case PLATFORM_I8042:
		return place_i8042(vm, p, slot);
	case PLATFORM_DEBUG_EXIT:
		return place(vm, slot, slot->base, DEBUG_EXIT_LEN,
			     &debug_exit_bus_ops, &vm->power, "debug-exit");
	case PLATFORM_ACPI_PM:
		return place_acpi_pm(vm, p, slot);
	/* Always present, unlike QEMU's opt-in -device pvpanic: it costs
	 * nothing until a panicking guest writes it. */
	case PLATFORM_PVPANIC:
		p->pvpanic = pvpanic_create(vm->power);
		if (!p->pvpanic)
			return no_memory("pvpanic device");
		return place(vm, slot, slot->base, PVPANIC_LEN,
			     &pvpanic_bus_ops, p->pvpanic, "pvpanic");
	case PLATFORM_PCI_HOST:
		return place_pci_host(vm, p, slot);
	case PLATFORM_POST:
		return place_post(vm, slot);
	case PLATFORM_HINTS:
		return sched_register_hints(vm, slot->base, !slot->mmio);
	case PLATFORM_RR_PARTNER:
		return vm->cfg->arch.rr_partner ? place_rr_partner(vm, p, slot)
						: 0;
	case PLATFORM_VMGENID:
		return place_vmgenid(vm, p, slot);
	}
	return hvm_set_error(-EINVAL, "platform slot of unknown device %d",
			     (int)slot->device);
}

static bool has_slot(const struct platform_slot *slots, size_t n,
		     enum platform_device device)
{
	for (size_t i = 0; i < n; i++)
		if (slots[i].device == device)
			return true;
	return false;
}

int platform_place(struct vm *vm)
{
	const struct platform_slot *slots;
	struct platform *p = calloc(1, sizeof(*p));
	size_t n;
	int r = 0;

	if (!p)
		return no_memory("platform devices");
	p->vmgenid_gpe = -1;
	vm->platform = p;
	slots = arch_platform(&n);
	if (vm->cfg->arch.rr_partner &&
	    !has_slot(slots, n, PLATFORM_RR_PARTNER))
		return hvm_set_error(
			-EINVAL,
			"--rr-partner: this architecture's machine has no place for the benchmark partner (x86 only)");
	for (size_t i = 0; r == 0 && i < n; i++)
		r = place_slot(vm, p, &slots[i]);
	/* Virtio: on the PCI host where there is one, else on MMIO slots. */
	if (r == 0)
		r = virtio_vm_create(vm);
	if (r == 0 && p->pci)
		r = virtio_vm_plug_pci(vm, p->pci);
	if (r == 0)
		r = virtio_vm_plug_mmio(vm);
	return r;
}

void platform_destroy(struct vm *vm)
{
	struct platform *p = vm->platform;

	if (!p)
		return;
	uart8250_destroy(p->uart);
	cmos_rtc_destroy(p->rtc);
	i8042_destroy(p->kbc);
	acpi_pm_destroy(p->pm);
	pvpanic_destroy(p->pvpanic);
	pci_host_destroy(p->pci);
	rr_partner_destroy(p->rr);
	free(p);
	vm->platform = NULL;
}

/* ---- snapshot: every placed device, in the arch's slot order ---- */

/*
 * One slot's state for a snapshot: its name and version, and the bytes
 * (at most sizeof(union platform_state)); LEN 0 with a NULL name: the
 * slot holds nothing with state. -EOPNOTSUPP (reason recorded) for a
 * device that cannot be snapshotted: the snapshot fails naming it rather
 * than leave it out. The switch has no default, so -Wswitch makes a new
 * device kind decide here.
 */
union platform_state {
	struct uart8250_state uart;
	struct cmos_rtc_state rtc;
	struct i8042_state kbc;
	struct acpi_pm_state pm;
	struct pci_host_state pci;
};

static int slot_state(struct vm *vm, const struct platform_slot *slot,
		      union platform_state *st, const char **name,
		      uint32_t *version, size_t *len)
{
	struct platform *p = vm->platform;

	*name = NULL;
	*len = 0;
	*version = 1;
	switch (slot->device) {
	case PLATFORM_UART:
		*name = "uart8250";
		*version = UART8250_STATE_VERSION;
		*len = sizeof(st->uart);
		if (st)
			uart8250_save(p->uart, &st->uart);
		return 0;
	case PLATFORM_CMOS_RTC:
		*name = "cmos-rtc";
		*version = CMOS_RTC_STATE_VERSION;
		*len = sizeof(st->rtc);
		if (st)
			cmos_rtc_save(p->rtc, &st->rtc);
		return 0;
	case PLATFORM_I8042:
		*name = "i8042";
		*version = I8042_STATE_VERSION;
		*len = sizeof(st->kbc);
		if (st)
			i8042_save(p->kbc, &st->kbc);
		return 0;
	case PLATFORM_ACPI_PM:
		*name = "acpi-pm";
		*version = ACPI_PM_STATE_VERSION;
		*len = sizeof(st->pm);
		if (st)
			acpi_pm_save(p->pm, &st->pm);
		return 0;
	case PLATFORM_PCI_HOST:
		*name = "pci-host";
		*version = PCI_HOST_STATE_VERSION;
		*len = sizeof(st->pci);
		if (st)
			pci_host_save(p->pci, &st->pci);
		return 0;
	/* Write-only ports and the panic notifier: nothing to carry over. */
	case PLATFORM_DEBUG_EXIT:
	case PLATFORM_POST:
	case PLATFORM_PVPANIC:
	/* The hint channel's rate limiter is host bookkeeping, no guest
	 * state: a restored VM's starts full, as at boot. */
	case PLATFORM_HINTS:
	/* The ID lives in guest memory; a restore writes a new one. */
	case PLATFORM_VMGENID:
		return 0;
	case PLATFORM_RR_PARTNER:
		if (!p->rr)
			return 0;
		return hvm_set_error(
			-EOPNOTSUPP,
			"device rr-partner (--rr-partner) cannot be snapshotted yet");
	}
	return hvm_set_error(-EOPNOTSUPP,
			     "platform device %d cannot be snapshotted",
			     (int)slot->device);
}

int platform_check_snapshot(struct vm *vm)
{
	const struct platform_slot *slots;
	const char *name;
	uint32_t version;
	size_t n, len;
	int r;

	slots = arch_platform(&n);
	for (size_t i = 0; i < n; i++) {
		r = slot_state(vm, &slots[i], NULL, &name, &version, &len);
		if (r < 0)
			return r;
	}
	return virtio_vm_check_snapshot(vm);
}

/* Each virtio device's section, instances FIRST, FIRST + 1, ... */
static int save_virtio(struct vm *vm, struct snap_writer *w, uint32_t first)
{
	for (unsigned int i = 0; i < virtio_vm_count(vm); i++) {
		struct snap_device_header h = { .version =
							VIRTIO_STATE_VERSION };
		const char *name;
		uint8_t *buf;
		size_t len;
		int r = virtio_vm_device_state(vm, i, &name, &len);

		if (r < 0)
			return r;
		buf = calloc(1, len);
		if (!buf)
			return no_memory("a device's state");
		r = virtio_vm_save_device(vm, i, buf);
		strncpy(h.name, name, sizeof(h.name) - 1);
		if (r == 0)
			snap_writer_add2(w, SNAP_SEC_DEVICE, first + i, &h,
					 sizeof(h), buf, len);
		free(buf);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Each virtio device from section FIRST + its index, then their kicks. */
static int load_virtio(struct vm *vm, const struct snap_file *f,
		       const char *path, uint32_t first)
{
	for (unsigned int i = 0; i < virtio_vm_count(vm); i++) {
		const struct snap_section *s =
			snap_find(f, SNAP_SEC_DEVICE, first + i);
		const struct snap_device_header *h;
		const char *name;
		size_t len;
		int r = virtio_vm_device_state(vm, i, &name, &len);

		if (r < 0)
			return r;
		if (!s)
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: this restore has %s, the snapshot has no such device: give the options of the snapshotted VM",
				path, name);
		h = (const void *)s->data;
		if (strncmp(h->name, name, sizeof(h->name)) ||
		    h->version != VIRTIO_STATE_VERSION ||
		    s->len != sizeof(*h) + len) {
			char hint[64];

			virtio_vm_section_hint(h->name, s->data + sizeof(*h),
					       s->len - sizeof(*h), hint,
					       sizeof(hint));
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: device section %u is '%.15s'%s version %u, %zu bytes; expected '%s' version %u, %zu bytes (give the options of the snapshotted VM)",
				path, first + i, h->name, hint, h->version,
				s->len - sizeof(*h), name, VIRTIO_STATE_VERSION,
				len);
		}
		r = virtio_vm_load_device(vm, i, s->data + sizeof(*h));
		if (r < 0)
			return hvm_set_error(r, "snapshot %s: %s", path,
					     hvm_error_message());
	}
	virtio_vm_restored(vm);
	return 0;
}

int platform_save(struct vm *vm, struct snap_writer *w)
{
	const struct platform_slot *slots;
	union platform_state st;
	size_t n;

	slots = arch_platform(&n);
	for (size_t i = 0; i < n; i++) {
		struct snap_device_header h = { .version = 0 };
		const char *name;
		size_t len;
		int r;

		memset(&st, 0, sizeof(st));
		r = slot_state(vm, &slots[i], &st, &name, &h.version, &len);
		if (r < 0)
			return r;
		if (!name)
			continue;
		strncpy(h.name, name, sizeof(h.name) - 1);
		snap_writer_add2(w, SNAP_SEC_DEVICE, (uint32_t)i, &h, sizeof(h),
				 &st, len);
	}
	/* The virtio devices after the slots, in their creation order. */
	return save_virtio(vm, w, (uint32_t)n);
}

static int load_slot(struct vm *vm, const struct platform_slot *slot,
		     const uint8_t *data)
{
	struct platform *p = vm->platform;
	union platform_state st;

	switch (slot->device) {
	case PLATFORM_UART:
		memcpy(&st.uart, data, sizeof(st.uart));
		return uart8250_load(p->uart, &st.uart);
	case PLATFORM_CMOS_RTC:
		memcpy(&st.rtc, data, sizeof(st.rtc));
		return cmos_rtc_load(p->rtc, &st.rtc);
	case PLATFORM_I8042:
		memcpy(&st.kbc, data, sizeof(st.kbc));
		return i8042_load(p->kbc, &st.kbc);
	case PLATFORM_ACPI_PM:
		memcpy(&st.pm, data, sizeof(st.pm));
		return acpi_pm_load(p->pm, &st.pm);
	case PLATFORM_PCI_HOST:
		memcpy(&st.pci, data, sizeof(st.pci));
		return pci_host_load(p->pci, &st.pci);
	default:
		return 0;
	}
}

int platform_load(struct vm *vm, const struct snap_file *f, const char *path)
{
	struct platform *p = vm->platform;
	const struct platform_slot *slots;
	size_t n, found = 0, expected = 0;
	int r;

	slots = arch_platform(&n);
	for (size_t i = 0; i < n; i++) {
		const struct snap_section *s;
		const struct snap_device_header *h;
		const char *name;
		uint32_t version;
		size_t len;

		r = slot_state(vm, &slots[i], NULL, &name, &version, &len);
		if (r < 0)
			return r;
		s = snap_find(f, SNAP_SEC_DEVICE, (uint32_t)i);
		if (!name) {
			if (s)
				return hvm_set_error(
					-EINVAL,
					"snapshot %s: device section %zu is for a slot whose device has no state",
					path, i);
			continue;
		}
		expected++;
		if (!s)
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: the %s device (slot %zu) has no state in it",
				path, name, i);
		h = (const void *)s->data;
		if (strncmp(h->name, name, sizeof(h->name)) ||
		    h->version != version || s->len != sizeof(*h) + len)
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: device section %zu is '%.15s' version %u, %zu bytes; expected '%s' version %u, %zu bytes",
				path, i, h->name, h->version,
				s->len - sizeof(*h), name, version, len);
		r = load_slot(vm, &slots[i], s->data + sizeof(*h));
		if (r < 0)
			return hvm_set_error(r, "snapshot %s: %s", path,
					     hvm_error_message());
		found++;
	}
	r = load_virtio(vm, f, path, (uint32_t)n);
	if (r < 0)
		return r;
	found += virtio_vm_count(vm);
	expected += virtio_vm_count(vm);
	for (size_t i = 0; i < f->nr_sections; i++) {
		const struct snap_section *s = &f->sections[i];

		if (s->type != SNAP_SEC_DEVICE)
			continue;
		if (s->instance >= n + virtio_vm_count(vm)) {
			char hint[64];

			virtio_vm_section_hint(
				(const char *)s->data,
				s->data + sizeof(struct snap_device_header),
				s->len - sizeof(struct snap_device_header),
				hint, sizeof(hint));
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: it has device '%.15s'%s (section %u), which this restore lacks: give the options of the snapshotted VM (a clone may name its own --disk image)",
				path, (const char *)s->data, hint, s->instance);
		}
		found--;
	}
	if (found)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: more device sections than the %zu devices of this machine",
			path, expected);
	/* The restored guest may be one of many clones: its new generation
	 * ID is in place (place_vmgenid), now its event, after the GPE0
	 * block got the snapshot's enable bits. */
	if (p->vmgenid_gpe >= 0)
		acpi_pm_raise_gpe(p->pm, (unsigned int)p->vmgenid_gpe);
	return 0;
}
