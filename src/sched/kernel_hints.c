// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "abi/kvm_hint_uapi.h"
#include "base/log.h"
#include "base/parse.h"
#include "sched/kernel_hints.h"

static const char *const wfx_names[] = {
	[HVM_KVM_ARM_WFX_DEFAULT] = "default",
	[HVM_KVM_ARM_WFX_TRAP] = "trap",
	[HVM_KVM_ARM_WFX_NOTRAP] = "notrap",
	[HVM_KVM_ARM_WFX_NOTRAP_SINGLE_TASK] = "single-task",
};

static int parse_wfx(const char *v, uint8_t *out)
{
	for (uint8_t i = 0; i < sizeof(wfx_names) / sizeof(wfx_names[0]); i++)
		if (!strcmp(v, wfx_names[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

/* One KEY=VALUE item of --kvm-control. */
static int parse_control(const char *key, const char *v,
			 struct kernel_controls *c)
{
	uint64_t n;

	if (!strcmp(key, "ple-window")) {
		if (!strcmp(v, "default")) {
			c->set_ple_window = true;
			c->ple_window =
				UINT32_MAX; /* see kernel_hints_apply() */
			return 0;
		}
		if (parse_uint(v, 0, UINT32_MAX - 1, &n) < 0)
			return -EINVAL;
		c->set_ple_window = true;
		c->ple_window = (uint32_t)n;
		return 0;
	}
	if (!strcmp(key, "spin-policy"))
		return -ENOTSUP;
	if (!strcmp(key, "wfi") && !parse_wfx(v, &c->wfi)) {
		c->set_wfi = true;
		return 0;
	}
	if (!strcmp(key, "wfe") && !parse_wfx(v, &c->wfe)) {
		c->set_wfe = true;
		return 0;
	}
	if (!strcmp(key, "yield") && (!strcmp(v, "on") || !strcmp(v, "off"))) {
		c->no_yield = !strcmp(v, "off");
		return 0;
	}
	return -EINVAL;
}

int kernel_controls_parse(const char *name, const char *value,
			  struct kernel_controls *out)
{
	char buf[256], *item, *save = NULL;
	int r;

	/* strtok_r() would skip empty items: refuse them here. */
	if (!value || !*value || strlen(value) >= sizeof(buf) ||
	    value[0] == ',' || value[strlen(value) - 1] == ',' ||
	    strstr(value, ",,"))
		goto bad;
	strcpy(buf, value);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq)
			goto bad;
		*eq = '\0';
		r = parse_control(item, eq + 1, out);
		if (r == -ENOTSUP)
			return hvm_set_error(
				-EINVAL,
				"--%s: spin-policy is gone: the kernel series dropped KVM_CAP_SPIN_POLICY (v3); ple-window=0 (x86) or wfe=notrap (arm64) stops spin exits instead",
				name);
		if (r < 0)
			goto bad;
	}
	return 0;
bad:
	return hvm_set_error(
		-EINVAL,
		"--%s: '%s' is not a list of KVM controls; expected items such as ple-window=N|default, wfi=/wfe=default|trap|notrap|single-task, yield=on|off",
		name, value ? value : "");
}

/* KVM_HAS_DEVICE_ATTR on the VM: 0 when the VM has the attribute. */
static bool vm_has_attr(int vm_fd, uint32_t group, uint64_t attr)
{
	struct kvm_device_attr a = { .group = group, .attr = attr };

	return ioctl(vm_fd, KVM_HAS_DEVICE_ATTR, &a) == 0;
}

void kernel_hints_probe(int vm_fd, struct kernel_hints *kh)
{
	*kh = (struct kernel_hints){ 0 };
	/* The numbers are placeholders: take only the answers the series gives. */
	kh->yield_to =
		ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_YIELD_TO_VCPU) == 1;
	kh->halt_poll_vcpu =
		ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_HALT_POLL_VCPU) == 1;
	/* Each group exists on one architecture only; the other says ENXIO. */
	kh->ple_control =
		vm_has_attr(vm_fd, HVM_KVM_X86_GRP_PLE, HVM_KVM_X86_PLE_WINDOW);
	kh->wfx_control = vm_has_attr(vm_fd, HVM_KVM_ARM_VM_WFX_CTRL,
				      HVM_KVM_ARM_VM_WFX_WFE);
}

/* KVM_SET_DEVICE_ATTR on the VM with a __u64 value. */
static int vm_set_attr(int vm_fd, uint32_t group, uint64_t attr, uint64_t val)
{
	struct kvm_device_attr a = {
		.group = group,
		.attr = attr,
		.addr = (uintptr_t)&val,
	};

	return ioctl(vm_fd, KVM_SET_DEVICE_ATTR, &a) < 0 ? -errno : 0;
}

int kernel_hints_apply(int vm_fd, struct kernel_hints *kh,
		       const struct kernel_controls *ctl)
{
	int r = 0;

	if (ctl->set_ple_window) {
		uint64_t v = ctl->ple_window == UINT32_MAX
				     ? HVM_KVM_X86_PLE_DEFAULT
				     : ctl->ple_window;

		if (!kh->ple_control)
			return hvm_set_error(
				-EOPNOTSUPP,
				"--kvm-control ple-window: this KVM has no per-VM PLE controls (kernel/ series C, x86)");
		r = vm_set_attr(vm_fd, HVM_KVM_X86_GRP_PLE,
				HVM_KVM_X86_PLE_WINDOW, v);
		if (r)
			return hvm_set_error(r, "--kvm-control ple-window: %s",
					     strerror(-r));
		kh->ple_user = true;
	}
	if (ctl->set_wfi || ctl->set_wfe) {
		if (!kh->wfx_control)
			return hvm_set_error(
				-EOPNOTSUPP,
				"--kvm-control wfi/wfe: this KVM has no per-VM WFx trap policy (kernel/ series C, arm64)");
		if (ctl->set_wfi)
			r = vm_set_attr(vm_fd, HVM_KVM_ARM_VM_WFX_CTRL,
					HVM_KVM_ARM_VM_WFX_WFI, ctl->wfi);
		if (!r && ctl->set_wfe)
			r = vm_set_attr(vm_fd, HVM_KVM_ARM_VM_WFX_CTRL,
					HVM_KVM_ARM_VM_WFX_WFE, ctl->wfe);
		if (r)
			return hvm_set_error(r, "--kvm-control wfi/wfe: %s",
					     strerror(-r));
	}
	if (ctl->no_yield)
		kh->yield_to = false;
	return 0;
}

const char *kernel_hints_describe(const struct kernel_hints *kh, char *buf,
				  size_t len)
{
	if (!kh->ple_control && !kh->wfx_control && !kh->yield_to &&
	    !kh->halt_poll_vcpu) {
		snprintf(buf, len, "stock KVM");
		return buf;
	}
	snprintf(buf, len, "kernel patch:%s%s%s%s",
		 kh->ple_control ? " ple-control" : "",
		 kh->wfx_control ? " wfx-control" : "",
		 kh->yield_to ? " yield-to" : "",
		 kh->halt_poll_vcpu ? " vcpu-halt-poll" : "");
	return buf;
}

int kernel_hints_yield_to(int vcpu_fd, const struct kernel_hints *kh,
			  unsigned int target)
{
	struct kvm_yield_to_vcpu y = { .vcpu_id = target };
	int r;

	if (!kh->yield_to)
		return -EOPNOTSUPP;
	r = ioctl(vcpu_fd, KVM_YIELD_TO_VCPU, &y);
	return r < 0 ? -errno : r;
}

static int vcpu_halt_poll_cap(int vcpu_fd, uint32_t flags, uint32_t ns)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_HALT_POLL,
				      .flags = flags,
				      .args = { ns } };

	return ioctl(vcpu_fd, KVM_ENABLE_CAP, &cap) < 0 ? -errno : 0;
}

int kernel_hints_set_vcpu_halt_poll(int vcpu_fd, const struct kernel_hints *kh,
				    uint32_t ns)
{
	if (!kh->halt_poll_vcpu)
		return -EOPNOTSUPP;
	return vcpu_halt_poll_cap(vcpu_fd, 0, ns);
}

int kernel_hints_inherit_vcpu_halt_poll(int vcpu_fd,
					const struct kernel_hints *kh)
{
	if (!kh->halt_poll_vcpu)
		return -EOPNOTSUPP;
	return vcpu_halt_poll_cap(vcpu_fd, KVM_HALT_POLL_FLAG_INHERIT, 0);
}

int kernel_hints_set_ple(int vm_fd, const struct kernel_hints *kh,
			 uint32_t window)
{
	uint64_t v =
		window == POLICY_PLE_DEFAULT ? HVM_KVM_X86_PLE_DEFAULT : window;

	if (!kh->ple_control || kh->ple_user)
		return -EOPNOTSUPP;
	return vm_set_attr(vm_fd, HVM_KVM_X86_GRP_PLE, HVM_KVM_X86_PLE_WINDOW,
			   v);
}

int kernel_hints_get_ple(int vm_fd, const struct kernel_hints *kh,
			 uint64_t *window)
{
	struct kvm_device_attr a = {
		.group = HVM_KVM_X86_GRP_PLE,
		.attr = HVM_KVM_X86_PLE_WINDOW,
		.addr = (uintptr_t)window,
	};

	if (!kh->ple_control)
		return -EOPNOTSUPP;
	return ioctl(vm_fd, KVM_GET_DEVICE_ATTR, &a) < 0 ? -errno : 0;
}
