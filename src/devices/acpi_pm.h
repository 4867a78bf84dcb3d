/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ACPI fixed-hardware power management registers: the PM1a event block
 * (status/enable) and control block, where writing SLP_EN with SLP_TYP = S5
 * powers off, the RESET_REG port (0x06/0x0e resets), and the GPE0 block
 * whose events raise the SCI (the VM generation counter's notification).
 * The built-in test kernel powers off through the same register Linux uses
 * after reading the FADT and \_S5, so one path is tested by both.
 */
#ifndef HVM_DEVICES_ACPI_PM_H
#define HVM_DEVICES_ACPI_PM_H

#include "abi/acpi_pm_regs.h"
#include "core/bus.h"
#include "core/irq.h"
#include "core/power.h"

#define ACPI_PM1_EVT_LEN 4
#define ACPI_PM1_CNT_LEN 2

struct acpi_pm;

/* SCI: the line the GPE0 block drives (level: an enabled event pending). */
struct acpi_pm *acpi_pm_create(struct power_sink power, struct irq_line sci);
void acpi_pm_destroy(struct acpi_pm *pm);

extern const struct bus_ops acpi_pm1_evt_bus_ops;
extern const struct bus_ops acpi_pm1_cnt_bus_ops;
extern const struct bus_ops acpi_reset_bus_ops; /* 1 byte */
extern const struct bus_ops acpi_gpe0_bus_ops;

/*
 * General-purpose event BIT (< ACPI_GPE0_COUNT) happened: its status bit
 * is set, and the SCI stays raised while it is set and enabled, so the
 * guest runs its \_GPE._Exx method (and clears the bit) when it has
 * enabled the event, or later when it does.
 */
void acpi_pm_raise_gpe(struct acpi_pm *pm, unsigned int bit);

/*
 * Snapshot (docs/snapshot.md): the PM1 registers, the reset register and
 * the GPE0 block (version 2; version 1 had no GPE0 block).
 */
#define ACPI_PM_STATE_VERSION 2
struct acpi_pm_state {
	uint16_t pm1_sts, pm1_en, pm1_cnt;
	uint8_t reset_reg;
	uint8_t reserved;
	uint16_t gpe0_sts, gpe0_en;
};
void acpi_pm_save(struct acpi_pm *pm, struct acpi_pm_state *s);
int acpi_pm_load(struct acpi_pm *pm, const struct acpi_pm_state *s);

#endif
