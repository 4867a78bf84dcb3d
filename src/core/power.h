/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a device ends the VM: the power-off register, the i8042 reset line,
 * the debug-exit port, PSCI and pvpanic all report through a power_sink so
 * that the devices stay free of VM internals (and testable without one).
 */
#ifndef HVM_CORE_POWER_H
#define HVM_CORE_POWER_H

#include <stdint.h>

enum power_event {
	POWER_OFF,
	POWER_RESET,
	POWER_DEBUG_EXIT, /* CODE is the value the guest wrote */
	POWER_GUEST_PANIC, /* pvpanic PANICKED; CODE is the byte written */
};

struct power_sink {
	void (*event)(void *ctx, enum power_event event, uint32_t code);
	void *ctx;
};

static inline void power_sink_event(const struct power_sink *sink,
				    enum power_event event, uint32_t code)
{
	if (sink->event)
		sink->event(sink->ctx, event, code);
}

#endif
