// SPDX-License-Identifier: LGPL-2.1-or-later
#include "base/log.h"
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
