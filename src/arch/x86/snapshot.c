// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * x86 state in a snapshot (docs/snapshot.md): the host identity a restore
 * depends on, the VM-wide state (KVM clock, the userspace I/O APIC or the
 * in-kernel PIC, I/O APIC and PIT) and each vCPU's registers, saved while
 * every vCPU is parked outside KVM_RUN, and loaded back into a VM built
 * without a kernel. Values KVM does not check itself are checked here: a
 * state file is as hostile as the guest.
 */
#include <cpuid.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/ioapic.h"
#include "arch/x86/irqchip.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/vm.h"
#include "snapshot/format.h"

/* The MSRs KVM can save and restore (KVM_GET_MSR_INDEX_LIST). */
static int msr_index_list(struct vm *vm, struct kvm_msr_list **out)
{
	struct kvm_msr_list probe = { .nmsrs = 0 };
	struct kvm_msr_list *list;

	/* E2BIG with nmsrs set to the count: the documented way to size it. */
	if (ioctl(vm->kvm.fd, KVM_GET_MSR_INDEX_LIST, &probe) == 0 ||
	    errno != E2BIG)
		return hvm_set_errno_error("KVM_GET_MSR_INDEX_LIST (size)");
	list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(uint32_t));
	if (!list)
		return hvm_set_error(-ENOMEM, "out of memory");
	list->nmsrs = probe.nmsrs;
	if (ioctl(vm->kvm.fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
		free(list);
		return hvm_set_errno_error("KVM_GET_MSR_INDEX_LIST");
	}
	*out = list;
	return 0;
}

static size_t xsave_size(struct vm *vm)
{
	int size = kvm_check_cap(vm->fd, KVM_CAP_XSAVE2);

	return size > (int)sizeof(struct kvm_xsave) ? (size_t)size
						    : sizeof(struct kvm_xsave);
}

int arch_snapshot_identity(struct vm *vm, struct snap_identity *id)
{
	unsigned int a, b, c, d;

	memset(id, 0, sizeof(*id));
	__cpuid(0, a, b, c, d);
	memcpy(id->cpu_vendor, &b, 4);
	memcpy(id->cpu_vendor + 4, &d, 4);
	memcpy(id->cpu_vendor + 8, &c, 4);
	__cpuid(1, a, b, c, d);
	id->cpu_signature = a;
	id->kvm_api_version =
		(uint32_t)ioctl(vm->kvm.fd, KVM_GET_API_VERSION, 0);
	id->xsave_size = (uint32_t)xsave_size(vm);
	return 0;
}

/*
 * Vendor, CPUID.1.EAX (family, model, stepping) and the feature words a
 * guest's kernel and programs choose code paths by: leaf 1 ECX/EDX, leaf
 * 7.0 EBX/ECX/EDX, leaf 0xD.1 EAX (XSAVE variants), 0x80000001 ECX/EDX.
 * Leaf 1 EBX (the APIC ID, differing per CPU) is left out.
 */
int arch_host_cpu_id(char *buf, size_t len)
{
	unsigned int a, b, c, d, max, max_ext;
	uint32_t w[9] = { 0 };
	char vendor[13];
	int n;

	__cpuid(0, max, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	__cpuid(1, a, b, c, d);
	w[0] = a;
	w[1] = c;
	w[2] = d;
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		w[3] = b;
		w[4] = c;
		w[5] = d;
	}
	if (max >= 0xd) {
		__cpuid_count(0xd, 1, a, b, c, d);
		w[6] = a;
	}
	__cpuid(0x80000000, max_ext, b, c, d);
	if (max_ext >= 0x80000001) {
		__cpuid(0x80000001, a, b, c, d);
		w[7] = c;
		w[8] = d;
	}
	n = snprintf(
		buf, len,
		"%s sig=%08x f1=%08x:%08x f7=%08x:%08x:%08x xs=%08x e1=%08x:%08x",
		vendor, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]);
	if (n < 0 || (size_t)n >= len)
		return hvm_set_error(-ENOSPC, "host CPU id: buffer too small");
	return n;
}

int arch_snapshot_check(struct vm *vm, const struct snap_file *f,
			const char *path)
{
	struct snap_identity here;

	arch_snapshot_identity(vm, &here);
	if (memcmp(here.cpu_vendor, f->identity.cpu_vendor,
		   sizeof(here.cpu_vendor)))
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: taken on a %.12s CPU (signature 0x%x), this host's is %.12s (0x%x)",
			path, f->identity.cpu_vendor, f->identity.cpu_signature,
			here.cpu_vendor, here.cpu_signature);
	if (here.kvm_api_version != f->identity.kvm_api_version ||
	    here.xsave_size != f->identity.xsave_size)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: taken with KVM API %u and a %u-byte xsave area, this host has API %u and %u bytes",
			path, f->identity.kvm_api_version,
			f->identity.xsave_size, here.kvm_api_version,
			here.xsave_size);
	return 0;
}

/* ---- save ---- */

static int get(int fd, unsigned long req, void *arg, const char *what,
	       unsigned int vcpu)
{
	if (ioctl(fd, req, arg) < 0)
		return hvm_set_errno_error("%s on vCPU %u", what, vcpu);
	return 0;
}

/*
 * KVM_GET_MSRS stops at the first MSR it cannot read and returns how many
 * it did: drop that one (a listed MSR this CPU or configuration lacks)
 * and go on from the next.
 */
static int save_msrs(struct vcpu *vcpu, const struct kvm_msr_list *list,
		     struct snap_writer *w)
{
	size_t n = list->nmsrs, done = 0, kept = 0;
	struct kvm_msr_entry *out = calloc(n ? n : 1, sizeof(*out));
	struct kvm_msrs *m = calloc(1, sizeof(*m) + n * sizeof(*out));

	if (!out || !m) {
		free(out);
		free(m);
		return hvm_set_error(-ENOMEM, "out of memory");
	}
	while (done < n) {
		int r;

		m->nmsrs = (uint32_t)(n - done);
		for (size_t i = 0; i < m->nmsrs; i++)
			m->entries[i] = (struct kvm_msr_entry){
				.index = list->indices[done + i]
			};
		r = ioctl(vcpu->fd, KVM_GET_MSRS, m);
		if (r < 0) {
			free(out);
			free(m);
			return hvm_set_errno_error("KVM_GET_MSRS on vCPU %u",
						   vcpu->id);
		}
		memcpy(out + kept, m->entries, (size_t)r * sizeof(*out));
		kept += (size_t)r;
		done += (size_t)r;
		if (done < n)
			done++; /* the one it could not read */
	}
	snap_writer_add(w, SNAP_SEC_VCPU_MSRS, vcpu->id, out,
			kept * sizeof(*out));
	free(out);
	free(m);
	return 0;
}

static int save_vcpu(struct vm *vm, struct vcpu *vcpu,
		     const struct kvm_msr_list *msrs, struct snap_writer *w)
{
	size_t xsize = xsave_size(vm);
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp;
	struct kvm_debugregs dregs;
	void *xsave = calloc(1, xsize);
	unsigned int id = vcpu->id;
	int r;

	if (!xsave)
		return hvm_set_error(-ENOMEM, "out of memory");
	/* KVM_GET_XSAVE2 where the area is larger than 4 KiB (AMX). */
	r = get(vcpu->fd,
		xsize > sizeof(struct kvm_xsave) ? KVM_GET_XSAVE2
						 : KVM_GET_XSAVE,
		xsave, "KVM_GET_XSAVE", id);
	if (!r)
		r = get(vcpu->fd, KVM_GET_REGS, &regs, "KVM_GET_REGS", id);
	if (!r)
		r = get(vcpu->fd, KVM_GET_SREGS, &sregs, "KVM_GET_SREGS", id);
	if (!r)
		r = get(vcpu->fd, KVM_GET_LAPIC, &lapic, "KVM_GET_LAPIC", id);
	if (!r)
		r = get(vcpu->fd, KVM_GET_VCPU_EVENTS, &events,
			"KVM_GET_VCPU_EVENTS", id);
	if (!r)
		r = get(vcpu->fd, KVM_GET_MP_STATE, &mp, "KVM_GET_MP_STATE",
			id);
	if (!r)
		r = get(vcpu->fd, KVM_GET_DEBUGREGS, &dregs,
			"KVM_GET_DEBUGREGS", id);
	if (!r)
		r = save_msrs(vcpu, msrs, w);
	if (r < 0) {
		free(xsave);
		return r;
	}
	snap_writer_add(w, SNAP_SEC_VCPU_REGS, id, &regs, sizeof(regs));
	snap_writer_add(w, SNAP_SEC_VCPU_SREGS, id, &sregs, sizeof(sregs));
	snap_writer_add(w, SNAP_SEC_VCPU_XSAVE, id, xsave, xsize);
	if (kvm_check_cap(vm->fd, KVM_CAP_XCRS) > 0) {
		r = get(vcpu->fd, KVM_GET_XCRS, &xcrs, "KVM_GET_XCRS", id);
		if (r < 0) {
			free(xsave);
			return r;
		}
		snap_writer_add(w, SNAP_SEC_VCPU_XCRS, id, &xcrs, sizeof(xcrs));
	}
	snap_writer_add(w, SNAP_SEC_VCPU_LAPIC, id, &lapic, sizeof(lapic));
	snap_writer_add(w, SNAP_SEC_VCPU_EVENTS, id, &events, sizeof(events));
	snap_writer_add(w, SNAP_SEC_VCPU_MP_STATE, id, &mp, sizeof(mp));
	snap_writer_add(w, SNAP_SEC_VCPU_DEBUGREGS, id, &dregs, sizeof(dregs));
	free(xsave);
	return 0;
}

static int save_vm_state(struct vm *vm, struct snap_writer *w)
{
	struct x86_irqchip *chip = x86_irqchip_of(vm);
	struct kvm_clock_data clock = { .flags = 0 };

	if (ioctl(vm->fd, KVM_GET_CLOCK, &clock) < 0)
		return hvm_set_errno_error("KVM_GET_CLOCK");
	snap_writer_add(w, SNAP_SEC_VM_CLOCK, 0, &clock, sizeof(clock));
	if (chip->split) {
		struct ioapic_state io;

		ioapic_save(chip->ioapic, &io);
		snap_writer_add(w, SNAP_SEC_IOAPIC, 0, &io, sizeof(io));
		return 0;
	}
	for (uint32_t id = KVM_IRQCHIP_PIC_MASTER; id <= KVM_IRQCHIP_IOAPIC;
	     id++) {
		struct kvm_irqchip ic = { .chip_id = id };

		if (ioctl(vm->fd, KVM_GET_IRQCHIP, &ic) < 0)
			return hvm_set_errno_error("KVM_GET_IRQCHIP %u", id);
		snap_writer_add(w, SNAP_SEC_IRQCHIP, id, &ic, sizeof(ic));
	}
	{
		struct kvm_pit_state2 pit;

		if (ioctl(vm->fd, KVM_GET_PIT2, &pit) < 0)
			return hvm_set_errno_error("KVM_GET_PIT2");
		snap_writer_add(w, SNAP_SEC_PIT, 0, &pit, sizeof(pit));
	}
	return 0;
}

int arch_snapshot_save(struct vm *vm, struct snap_writer *w)
{
	struct kvm_msr_list *msrs = NULL;
	int r = msr_index_list(vm, &msrs);

	if (r < 0)
		return r;
	/* The CPUID the vCPUs run with: a restore on this host must give
	 * them the same (arch_snapshot_load compares). */
	{
		struct kvm_cpuid2 *c;

		r = cpuid_get_vcpu(vm->vcpus[0].fd, &c);
		if (r < 0) {
			free(msrs);
			return r;
		}
		snap_writer_add(w, SNAP_SEC_CPUID, 0, c->entries,
				c->nent * sizeof(c->entries[0]));
		free(c);
	}
	r = save_vm_state(vm, w);
	for (unsigned int i = 0; r == 0 && i < vm->nr_vcpus; i++)
		r = save_vcpu(vm, &vm->vcpus[i], msrs, w);
	free(msrs);
	return r;
}

/* ---- load ---- */

/* Bits of RFLAGS that are reserved: 1 must be set, these clear. */
#define RFLAGS_FIXED1 0x2ull
#define RFLAGS_RESERVED (~0x3fffffull | 0x8000ull | 0x20ull | 0x8ull)

static const void *need(const struct snap_file *f, uint32_t type,
			uint32_t instance, size_t len, const char *path)
{
	const struct snap_section *s = snap_find(f, type, instance);

	if (!s || s->len != len) {
		hvm_set_error(-EINVAL,
			      "snapshot %s: no %s section of %zu bytes for %u",
			      path, snap_section_name(type), len, instance);
		return NULL;
	}
	return s->data;
}

/*
 * The CPUID the vCPUs just got from this host must be the one the guest
 * saw, leaf for leaf, or the guest may run code this host cannot (or
 * miss what it relied on). The hypervisor leaves are KVM's and the
 * brain's to offer and are compared by KVM itself when the guest's PV
 * MSRs are loaded (KVM_CAP_ENFORCE_PV_FEATURE_CPUID refuses them).
 */
static int check_cpuid(struct vm *vm, const struct snap_file *f,
		       const char *path)
{
	const struct snap_section *s = snap_find(f, SNAP_SEC_CPUID, 0);
	const struct kvm_cpuid_entry2 *saved;
	struct kvm_cpuid2 *c;
	size_t n;
	int r = 0;

	if (!s)
		return hvm_set_error(
			-EINVAL, "snapshot %s: the cpuid section is missing",
			path);
	saved = (const void *)s->data;
	n = s->len / sizeof(*saved);
	r = cpuid_get_vcpu(vm->vcpus[0].fd, &c);
	if (r < 0)
		return r;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct kvm_cpuid_entry2 *e = &saved[i], *h = NULL;

		/* The hypervisor leaves are hintvm's; all zeros is the
		 * padding an older kernel's KVM_GET_CPUID2 left in a file
		 * (cpuid_get_vcpu), no leaf. */
		if ((e->function & 0xffffff00u) == 0x40000000u ||
		    cpuid_entry_is_padding(e))
			continue;
		for (uint32_t j = 0; j < c->nent && !h; j++)
			if (c->entries[j].function == e->function &&
			    c->entries[j].index == e->index)
				h = &c->entries[j];
		if (!h || h->eax != e->eax || h->ebx != e->ebx ||
		    h->ecx != e->ecx || h->edx != e->edx)
			r = hvm_set_error(
				-EINVAL,
				"snapshot %s: CPU-incompatible: CPUID leaf 0x%x.%u was %08x %08x %08x %08x, this host gives %08x %08x %08x %08x",
				path, e->function, e->index, e->eax, e->ebx,
				e->ecx, e->edx, h ? h->eax : 0, h ? h->ebx : 0,
				h ? h->ecx : 0, h ? h->edx : 0);
	}
	free(c);
	return r;
}

/*
 * The PV features (CPUID 0x40000001 EAX) are the brain's choice at VM
 * creation and may differ on restore (HLT exits disabled or not, with
 * the host's load): the guest keeps the ones it saw, where this host's
 * KVM offers each of them, on every vCPU (before its first KVM_RUN, when
 * KVM_SET_CPUID2 may still change).
 */
static int restore_pv_features(struct vm *vm, const struct snap_file *f,
			       const char *path)
{
	const struct snap_section *s = snap_find(f, SNAP_SEC_CPUID, 0);
	const struct kvm_cpuid_entry2 *saved = (const void *)s->data,
				      *pv = NULL;
	struct kvm_cpuid2 *supported = NULL, *c;
	struct kvm_cpuid_entry2 *e;
	int r;

	for (size_t i = 0; i < s->len / sizeof(*saved); i++)
		if (saved[i].function == KVM_CPUID_FEATURES_LEAF)
			pv = &saved[i];
	if (!pv)
		return 0;
	r = cpuid_get_supported(vm->kvm.fd, &supported);
	if (r < 0)
		return r;
	e = cpuid_find(supported, KVM_CPUID_FEATURES_LEAF, 0);
	if (!e || pv->eax & ~e->eax) {
		r = hvm_set_error(
			-EINVAL,
			"snapshot %s: CPU-incompatible: the guest has KVM PV features 0x%x, this host's KVM offers 0x%x",
			path, pv->eax, e ? e->eax : 0);
		free(supported);
		return r;
	}
	free(supported);
	for (unsigned int i = 0; r == 0 && i < vm->nr_vcpus; i++) {
		r = cpuid_get_vcpu(vm->vcpus[i].fd, &c);
		if (r < 0)
			break;
		e = NULL;
		for (uint32_t j = 0; j < c->nent; j++)
			if (c->entries[j].function == KVM_CPUID_FEATURES_LEAF)
				e = &c->entries[j];
		if (e && e->eax != pv->eax) {
			e->eax = pv->eax;
			if (ioctl(vm->vcpus[i].fd, KVM_SET_CPUID2, c) < 0)
				r = hvm_set_errno_error(
					"snapshot %s: KVM_SET_CPUID2 of the saved PV features on vCPU %u",
					path, i);
		}
		free(c);
	}
	return r;
}

static int set(int fd, unsigned long req, const void *arg, const char *what,
	       unsigned int vcpu, const char *path)
{
	if (ioctl(fd, req, arg) < 0)
		return hvm_set_errno_error(
			"snapshot %s: KVM refused vCPU %u's state (%s)", path,
			vcpu, what);
	return 0;
}

static int load_msrs(struct vcpu *vcpu, const struct kvm_msr_list *list,
		     const struct snap_file *f, const char *path)
{
	const struct snap_section *s =
		snap_find(f, SNAP_SEC_VCPU_MSRS, vcpu->id);
	size_t n = s->len / sizeof(struct kvm_msr_entry);
	struct kvm_msrs *m =
		calloc(1, sizeof(*m) + n * sizeof(struct kvm_msr_entry));
	int r;

	if (!m)
		return hvm_set_error(-ENOMEM, "out of memory");
	memcpy(m->entries, s->data, s->len);
	m->nmsrs = (uint32_t)n;
	/*
	 * Only MSRs KVM lists as state to save: a host-initiated write is
	 * allowed more than a guest's, and the file is not to choose MSRs.
	 */
	for (size_t i = 0; i < n; i++) {
		bool listed = false;

		for (uint32_t j = 0; j < list->nmsrs && !listed; j++)
			listed = list->indices[j] == m->entries[i].index;
		if (!listed || m->entries[i].reserved) {
			r = hvm_set_error(
				-EINVAL,
				"snapshot %s: vCPU %u's MSR 0x%x is not one KVM saves on this host",
				path, vcpu->id, m->entries[i].index);
			free(m);
			return r;
		}
	}
	r = ioctl(vcpu->fd, KVM_SET_MSRS, m);
	if (r != (int)n) {
		r = hvm_set_error(
			-EINVAL,
			"snapshot %s: KVM refused vCPU %u's MSR 0x%x = 0x%llx (%d of %zu loaded)",
			path, vcpu->id,
			r >= 0 && (size_t)r < n ? m->entries[r].index : 0,
			r >= 0 && (size_t)r < n
				? (unsigned long long)m->entries[r].data
				: 0ull,
			r, n);
		free(m);
		return r;
	}
	free(m);
	return 0;
}

static int load_vcpu(struct vm *vm, struct vcpu *vcpu,
		     const struct kvm_msr_list *msrs, const struct snap_file *f,
		     const char *path)
{
	unsigned int id = vcpu->id;
	size_t xsize = xsave_size(vm);
	const struct kvm_regs *regs =
		need(f, SNAP_SEC_VCPU_REGS, id, sizeof(*regs), path);
	const struct kvm_sregs *sregs =
		need(f, SNAP_SEC_VCPU_SREGS, id, sizeof(*sregs), path);
	const void *xsave = need(f, SNAP_SEC_VCPU_XSAVE, id, xsize, path);
	const struct kvm_lapic_state *lapic =
		need(f, SNAP_SEC_VCPU_LAPIC, id, sizeof(*lapic), path);
	const struct kvm_vcpu_events *events =
		need(f, SNAP_SEC_VCPU_EVENTS, id, sizeof(*events), path);
	const struct kvm_mp_state *mp =
		need(f, SNAP_SEC_VCPU_MP_STATE, id, sizeof(*mp), path);
	const struct snap_section *xcrs = snap_find(f, SNAP_SEC_VCPU_XCRS, id);
	const struct snap_section *dregs =
		snap_find(f, SNAP_SEC_VCPU_DEBUGREGS, id);
	struct kvm_regs r_regs;
	struct kvm_debugregs d;
	int r;

	if (!regs || !sregs || !xsave || !lapic || !events || !mp)
		return -EINVAL;
	/* What KVM takes as it comes: check it here. */
	memcpy(&r_regs, regs, sizeof(r_regs));
	if (!(r_regs.rflags & RFLAGS_FIXED1) || r_regs.rflags & RFLAGS_RESERVED)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: vCPU %u's RFLAGS 0x%llx has a reserved bit wrong (bit 1 set, bits 3, 5, 15, 22-63 clear expected)",
			path, id, (unsigned long long)r_regs.rflags);
	if (mp->mp_state > KVM_MP_STATE_SIPI_RECEIVED)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: vCPU %u's MP state %u is not one of runnable, uninitialized, INIT/SIPI received, halted (0-4)",
			path, id, mp->mp_state);
	if (dregs) {
		memcpy(&d, dregs->data, sizeof(d));
		if (d.flags)
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: vCPU %u's debug registers have flags 0x%llx, expected 0",
				path, id, (unsigned long long)d.flags);
	}
	if (xcrs && kvm_check_cap(vm->fd, KVM_CAP_XCRS) <= 0)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: it has XCRs, this host's KVM does not (KVM_CAP_XCRS)",
			path);
	/* Firecracker's order: mode first, LAPIC before the MSRs that
	 * depend on it (TSC deadline), pending events last. */
	r = set(vcpu->fd, KVM_SET_MP_STATE, mp, "MP state", id, path);
	if (!r)
		r = set(vcpu->fd, KVM_SET_REGS, &r_regs, "registers", id, path);
	if (!r)
		r = set(vcpu->fd, KVM_SET_SREGS, sregs, "special registers", id,
			path);
	if (!r)
		r = set(vcpu->fd, KVM_SET_XSAVE, xsave, "xsave area", id, path);
	if (!r && xcrs)
		r = set(vcpu->fd, KVM_SET_XCRS, xcrs->data, "XCRs", id, path);
	if (!r && dregs)
		r = set(vcpu->fd, KVM_SET_DEBUGREGS, &d, "debug registers", id,
			path);
	if (!r)
		r = set(vcpu->fd, KVM_SET_LAPIC, lapic, "local APIC", id, path);
	if (!r)
		r = load_msrs(vcpu, msrs, f, path);
	if (!r)
		r = set(vcpu->fd, KVM_SET_VCPU_EVENTS, events, "pending events",
			id, path);
	return r;
}

static int load_vm_state(struct vm *vm, const struct snap_file *f,
			 const char *path)
{
	struct x86_irqchip *chip = x86_irqchip_of(vm);
	const struct kvm_clock_data *saved_clock =
		need(f, SNAP_SEC_VM_CLOCK, 0, sizeof(*saved_clock), path);
	struct kvm_clock_data clock;
	int r;

	if (!saved_clock)
		return -EINVAL;
	if (chip->split) {
		const struct snap_section *s = snap_find(f, SNAP_SEC_IOAPIC, 0);
		struct ioapic_state io;

		if (!s || s->len != sizeof(io) || snap_find(f, SNAP_SEC_PIT, 0))
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: its irqchip state is not the split irqchip's (a %zu-byte ioapic section)",
				path, sizeof(io));
		memcpy(&io, s->data, sizeof(io));
		r = ioapic_load(chip->ioapic, &io);
		if (r < 0)
			return hvm_set_error(r, "snapshot %s: %s", path,
					     hvm_error_message());
	} else {
		const struct kvm_pit_state2 *pit;

		if (snap_find(f, SNAP_SEC_IOAPIC, 0))
			return hvm_set_error(
				-EINVAL,
				"snapshot %s: it has the split irqchip's I/O APIC, this VM the in-kernel irqchip",
				path);
		for (uint32_t id = KVM_IRQCHIP_PIC_MASTER;
		     id <= KVM_IRQCHIP_IOAPIC; id++) {
			const struct kvm_irqchip *ic = need(
				f, SNAP_SEC_IRQCHIP, id, sizeof(*ic), path);

			if (!ic)
				return -EINVAL;
			if (ic->chip_id != id)
				return hvm_set_error(
					-EINVAL,
					"snapshot %s: irqchip section %u holds chip %u",
					path, id, ic->chip_id);
			if (ioctl(vm->fd, KVM_SET_IRQCHIP, ic) < 0)
				return hvm_set_errno_error(
					"snapshot %s: KVM refused irqchip %u",
					path, id);
		}
		pit = need(f, SNAP_SEC_PIT, 0, sizeof(*pit), path);
		if (!pit)
			return -EINVAL;
		if (ioctl(vm->fd, KVM_SET_PIT2, pit) < 0)
			return hvm_set_errno_error(
				"snapshot %s: KVM refused the PIT state", path);
	}
	/* kvmclock resumes where it stopped: the guest sees no jump for
	 * the time the snapshot sat on disk (its wall clock is the RTC's). */
	clock = (struct kvm_clock_data){ .clock = saved_clock->clock };
	if (ioctl(vm->fd, KVM_SET_CLOCK, &clock) < 0)
		return hvm_set_errno_error("snapshot %s: KVM_SET_CLOCK", path);
	return 0;
}

int arch_snapshot_load(struct vm *vm, const struct snap_file *f,
		       const char *path)
{
	struct kvm_msr_list *msrs = NULL;
	int r;

	if (f->nr_vcpus != vm->nr_vcpus)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: state for %u vCPUs, the VM has %u", path,
			f->nr_vcpus, vm->nr_vcpus);
	r = check_cpuid(vm, f, path);
	if (!r)
		r = restore_pv_features(vm, f, path);
	if (!r)
		r = msr_index_list(vm, &msrs);
	if (!r)
		r = load_vm_state(vm, f, path);
	for (unsigned int i = 0; r == 0 && i < vm->nr_vcpus; i++)
		r = load_vcpu(vm, &vm->vcpus[i], msrs, f, path);
	free(msrs);
	return r;
}
