// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pvpanic: a one-byte register. A read returns PVPANIC_EVENTS (the guest
 * driver masks its own events with it); a write reports the event.
 *
 * As in QEMU, PANICKED wins when a write sets both bits, bits the device
 * does not know are ignored (and logged once per device, since a guest
 * could otherwise flood the log), and a write with neither known bit does
 * nothing. CRASH_LOADED is logged under a rate limit, for the same reason. Only the byte at offset 0 is the register: an MMIO access wider
 * than a byte uses its first byte, and bytes beyond the register read as
 * 0xff and ignore writes. The device has no state a guest can change, so
 * it needs no lock; the "unknown bits" note is an atomic flag.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "devices/pvpanic.h"

struct pvpanic {
	struct power_sink power;
	atomic_bool warned_unknown;
};

struct pvpanic *pvpanic_create(struct power_sink power)
{
	struct pvpanic *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->power = power;
	atomic_init(&dev->warned_unknown, false);
	return dev;
}

void pvpanic_destroy(struct pvpanic *dev)
{
	free(dev);
}

static void pvpanic_read(void *opaque, uint64_t offset, uint8_t *data,
			 uint32_t len)
{
	memset(data, 0xff, len);
	if (len && offset == 0)
		data[0] = PVPANIC_EVENTS;
}

static void pvpanic_write(void *opaque, uint64_t offset, const uint8_t *data,
			  uint32_t len)
{
	struct pvpanic *dev = opaque;
	uint8_t event;

	if (!len || offset != 0)
		return;
	event = data[0];
	if ((event & ~PVPANIC_EVENTS) &&
	    !atomic_exchange(&dev->warned_unknown, true))
		pr_warn("pvpanic: the guest wrote 0x%02x; bits 0x%02x are not events this device knows (0x%02x), ignored",
			event, event & ~PVPANIC_EVENTS, PVPANIC_EVENTS);
	if (event & PVPANIC_PANICKED)
		power_sink_event(&dev->power, POWER_GUEST_PANIC, event);
	else if (event & PVPANIC_CRASH_LOADED)
		pr_warn_ratelimited(
			"pvpanic: the guest kernel panicked; its crash kernel (kdump) takes over, the VM keeps running");
}

const struct bus_ops pvpanic_bus_ops = {
	.read = pvpanic_read,
	.write = pvpanic_write,
};
