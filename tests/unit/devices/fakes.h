/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test doubles for what a device drives: an interrupt line that records
 * every level it is set to, and a power sink that records every event.
 */
#ifndef HVM_TESTS_DEVICES_FAKES_H
#define HVM_TESTS_DEVICES_FAKES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/irq.h"
#include "core/power.h"

#define FAKE_MAX_RECORDS 64

struct fake_irq {
	uint32_t gsi;
	bool level;
	int changes; /* calls to set_level */
	bool history[FAKE_MAX_RECORDS];
};

static inline int fake_irq_set_level(void *ctx, uint32_t gsi, bool level)
{
	struct fake_irq *irq = ctx;

	irq->gsi = gsi;
	irq->level = level;
	if (irq->changes < FAKE_MAX_RECORDS)
		irq->history[irq->changes] = level;
	irq->changes++;
	return 0;
}

static inline struct irq_line fake_irq_line(struct fake_irq *irq, uint32_t gsi)
{
	memset(irq, 0, sizeof(*irq));
	return (struct irq_line){ .set_level = fake_irq_set_level,
				  .ctx = irq,
				  .gsi = gsi };
}

struct fake_power {
	int count;
	enum power_event events[FAKE_MAX_RECORDS];
	uint32_t codes[FAKE_MAX_RECORDS];
};

static inline void fake_power_event(void *ctx, enum power_event event,
				    uint32_t code)
{
	struct fake_power *power = ctx;

	if (power->count < FAKE_MAX_RECORDS) {
		power->events[power->count] = event;
		power->codes[power->count] = code;
	}
	power->count++;
}

static inline struct power_sink fake_power_sink(struct fake_power *power)
{
	memset(power, 0, sizeof(*power));
	return (struct power_sink){ .event = fake_power_event, .ctx = power };
}

#endif
