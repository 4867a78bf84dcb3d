/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An interrupt line as a device sees it: a level it drives. Devices model
 * "interrupt pending" and set the line to match; whether the interrupt
 * controller treats the pin as edge or level is the guest's business.
 */
#ifndef HVM_CORE_IRQ_H
#define HVM_CORE_IRQ_H

#include <stdbool.h>
#include <stdint.h>

struct irq_line {
	int (*set_level)(void *ctx, uint32_t gsi, bool level);
	void *ctx;
	uint32_t gsi;
};

static inline int irq_line_set(const struct irq_line *line, bool level)
{
	if (!line->set_level)
		return 0;
	return line->set_level(line->ctx, line->gsi, level);
}

#endif
