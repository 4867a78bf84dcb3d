// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "base/log.h"
#include "control/control.h"
#include "core/vm.h"
#include "hintvm/hintvm.h"

const char *hvm_version(void)
{
	return HVM_VERSION;
}

const char *hvm_last_error(void)
{
	return hvm_error_message();
}

const char *hvm_exit_reason_name(enum hvm_exit_reason reason)
{
	switch (reason) {
	case HVM_EXIT_POWEROFF:
		return "poweroff";
	case HVM_EXIT_REBOOT:
		return "reboot";
	case HVM_EXIT_DEBUG:
		return "debug-exit";
	case HVM_EXIT_CRASH:
		return "crash";
	case HVM_EXIT_STOPPED:
		return "stopped";
	case HVM_EXIT_HOST_ERROR:
		return "host-error";
	}
	return "unknown";
}

int hvm_exit_status(const struct hvm_exit *exit)
{
	switch (exit->reason) {
	case HVM_EXIT_POWEROFF:
		/* The guest agent's main process (docs/agent.md). */
		if (exit->guest_reported)
			return exit->guest_status & 0xff;
		return HVM_STATUS_POWEROFF;
	case HVM_EXIT_REBOOT:
		return HVM_STATUS_REBOOT;
	case HVM_EXIT_DEBUG:
		return (int)(((exit->debug_code << 1) | 1) & 0xff);
	case HVM_EXIT_CRASH:
		return HVM_STATUS_CRASH;
	case HVM_EXIT_STOPPED:
		return HVM_STATUS_STOPPED;
	case HVM_EXIT_HOST_ERROR:
		return HVM_STATUS_HOST_ERROR;
	}
	return HVM_STATUS_HOST_ERROR;
}

/*
 * The running VM's face: the same answers the control socket gives
 * (control/control.h), so a library caller and `hintvm ctl` agree.
 */
const char *hvm_vm_name(struct hvm_vm *handle)
{
	struct vm *vm = (struct vm *)handle;

	if (!vm)
		return "";
	return vm->name[0] ? vm->name : vm->cfg->name ? vm->cfg->name : "";
}

int hvm_vm_set(struct hvm_vm *handle, const char *key, const char *value)
{
	if (!handle || !key || !value)
		return hvm_set_error(-EINVAL,
				     "hvm_vm_set: no VM, key or value");
	return control_set((struct vm *)handle, key, value);
}

int hvm_vm_info(struct hvm_vm *handle, char *buf, size_t len)
{
	if (!handle)
		return hvm_set_error(-EINVAL, "hvm_vm_info: no VM");
	return control_info((struct vm *)handle, buf, len);
}

int hvm_vm_event_fd(struct hvm_vm *handle)
{
	if (!handle)
		return hvm_set_error(-EINVAL, "hvm_vm_event_fd: no VM");
	return control_event_fd(((struct vm *)handle)->control);
}

int hvm_vm_stats(struct hvm_vm *handle, int json, char *buf, size_t len)
{
	if (!handle || (!buf && len))
		return hvm_set_error(-EINVAL, "hvm_vm_stats: no VM or buffer");
	return control_stats((struct vm *)handle, json != 0, buf, len);
}

int hvm_vm_stat(struct hvm_vm *handle, const char *name, uint64_t *value)
{
	if (!handle || !name || !value)
		return hvm_set_error(-EINVAL,
				     "hvm_vm_stat: no VM, name or result");
	return control_stat((struct vm *)handle, name, value);
}
