// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * isa-debug-exit: a write of any width ends the VM with the value written
 * (little-endian, at most the low four bytes of a wider MMIO write). The
 * device keeps no state, so it needs no lock and no instance of its own.
 */
#include <string.h>

#include "core/power.h"
#include "devices/debug_exit.h"

static void debug_exit_read(void *dev, uint64_t offset, uint8_t *data,
			    uint32_t len)
{
	memset(data, 0xff, len);
}

static void debug_exit_write(void *dev, uint64_t offset, const uint8_t *data,
			     uint32_t len)
{
	const struct power_sink *sink = dev;
	uint32_t value = 0;
	uint32_t i;

	if (!len || offset >= DEBUG_EXIT_LEN)
		return;
	for (i = 0; i < len && i < sizeof(value); i++)
		value |= (uint32_t)data[i] << (8 * i);
	power_sink_event(sink, POWER_DEBUG_EXIT, value);
}

const struct bus_ops debug_exit_bus_ops = {
	.read = debug_exit_read,
	.write = debug_exit_write,
};
