// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ACPI fixed hardware: PM1a event and control blocks and RESET_REG.
 *
 * The machine runs in ACPI mode from boot (SCI_EN always reads 1) and has no
 * fixed event sources, so PM1_STS only ever holds WAK_STS. The GPE0 block
 * carries the general-purpose events the platform raises (the VM
 * generation counter's after a restore); the SCI is level: high while an
 * event is both pending (STS, write 1 to clear) and enabled (EN). The DSDT offers only
 * \_S5: SLP_EN with SLP_TYP = S5 powers off; any other sleep type "wakes up"
 * at once (WAK_STS set) so that a guest trying it does not spin forever
 * waiting for a wake-up. RESET_REG resets on any write with bit 2 (the
 * chipset's RST_CPU) set, which covers ACPI's 0x06 and the full reset 0x0e.
 *
 * Access rules: the blocks are handled byte by byte, so any width at any
 * offset does what the same bytes written one at a time would do (a 16-bit
 * access at offset 1 of PM1_EVT touches the high byte of STS and the low
 * byte of EN). Bytes beyond a block read as 0xff and are not written.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/log.h"
#include "devices/acpi_pm.h"

#define PM1_STS_WAK 0x8000
#define PM1_EN_DEFINED \
	0x4721 /* TMR, GBL, PWRBTN, SLPBTN, RTC, PCIEXP_WAKE_DIS */
#define PM1_CNT_BM_RLD 0x0002
#define PM1_CNT_STORED (PM1_CNT_BM_RLD | ACPI_SLP_TYP_MASK)

#define RESET_RST_CPU 0x04 /* a 0 -> 1 write resets; reads back 0 */
#define RESET_KEPT_BITS 0x0a /* SYS_RST, FULL_RST: plain read/write */

struct acpi_pm {
	pthread_mutex_t lock;
	struct power_sink power;
	uint16_t pm1_sts;
	uint16_t pm1_en;
	uint16_t pm1_cnt;
	uint8_t reset_reg;
	uint16_t gpe0_sts, gpe0_en;
	struct irq_line sci;
	bool sci_level; /* what the line was last set to */
};

/* Fill DATA with the bytes of the little-endian REGS block from OFFSET. */
static void pm_read_bytes(uint64_t offset, uint8_t *data, uint32_t len,
			  const uint8_t *regs, uint64_t regs_len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		data[i] = offset < regs_len && i < regs_len - offset
				  ? regs[offset + i]
				  : 0xff;
}

/*
 * Merge the bytes of an access into a 16-bit register at byte position
 * FIRST of the block. Returns the mask of the bytes written (0 if none).
 */
static uint16_t pm_write_mask(uint64_t offset, uint32_t len, uint64_t first,
			      const uint8_t *data, uint16_t *value)
{
	uint16_t mask = 0, bits = 0;
	unsigned int byte;

	for (byte = 0; byte < 2; byte++) {
		uint64_t pos = first + byte;

		if (pos < offset || pos - offset >= len)
			continue;
		mask |= 0xff << (8 * byte);
		bits |= data[pos - offset] << (8 * byte);
	}
	*value = bits;
	return mask;
}

/*
 * PM1_EVT and GPE0 are alike: a 2-byte status register (write 1 to
 * clear), then a 2-byte enable register (read/write, EN_MASK its bits).
 * With PM's lock held.
 */
static void sts_en_read(uint16_t sts, uint16_t en, uint64_t offset,
			uint8_t *data, uint32_t len)
{
	uint8_t regs[4] = { sts & 0xff, sts >> 8, en & 0xff, en >> 8 };

	pm_read_bytes(offset, data, len, regs, sizeof(regs));
}

static void sts_en_write(uint16_t *sts, uint16_t *en, uint16_t en_mask,
			 uint64_t offset, const uint8_t *data, uint32_t len)
{
	uint16_t mask, value;

	mask = pm_write_mask(offset, len, 0, data, &value);
	*sts &= ~(value & mask);
	mask = pm_write_mask(offset, len, 2, data, &value);
	*en = (*en & ~mask) | (value & mask & en_mask);
}

static void pm1_evt_read(void *dev, uint64_t offset, uint8_t *data,
			 uint32_t len)
{
	struct acpi_pm *pm = dev;

	pthread_mutex_lock(&pm->lock);
	sts_en_read(pm->pm1_sts, pm->pm1_en, offset, data, len);
	pthread_mutex_unlock(&pm->lock);
}

static void pm1_evt_write(void *dev, uint64_t offset, const uint8_t *data,
			  uint32_t len)
{
	struct acpi_pm *pm = dev;

	pthread_mutex_lock(&pm->lock);
	sts_en_write(&pm->pm1_sts, &pm->pm1_en, PM1_EN_DEFINED, offset, data,
		     len);
	pthread_mutex_unlock(&pm->lock);
}

/* With PM's lock held: the SCI follows the GPE0 block. */
static void update_sci(struct acpi_pm *pm)
{
	bool level = (pm->gpe0_sts & pm->gpe0_en) != 0;

	if (level == pm->sci_level)
		return;
	pm->sci_level = level;
	irq_line_set(&pm->sci, level);
}

static void gpe0_read(void *dev, uint64_t offset, uint8_t *data, uint32_t len)
{
	struct acpi_pm *pm = dev;

	pthread_mutex_lock(&pm->lock);
	sts_en_read(pm->gpe0_sts, pm->gpe0_en, offset, data, len);
	pthread_mutex_unlock(&pm->lock);
}

static void gpe0_write(void *dev, uint64_t offset, const uint8_t *data,
		       uint32_t len)
{
	struct acpi_pm *pm = dev;

	pthread_mutex_lock(&pm->lock);
	sts_en_write(&pm->gpe0_sts, &pm->gpe0_en, 0xffff, offset, data, len);
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

void acpi_pm_raise_gpe(struct acpi_pm *pm, unsigned int bit)
{
	if (bit >= ACPI_GPE0_COUNT)
		return;
	pthread_mutex_lock(&pm->lock);
	pm->gpe0_sts |= (uint16_t)(1u << bit);
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

static void pm1_cnt_read(void *dev, uint64_t offset, uint8_t *data,
			 uint32_t len)
{
	struct acpi_pm *pm = dev;
	uint8_t regs[ACPI_PM1_CNT_LEN];
	uint16_t cnt;

	pthread_mutex_lock(&pm->lock);
	cnt = pm->pm1_cnt | ACPI_SCI_EN;
	pthread_mutex_unlock(&pm->lock);
	regs[0] = cnt & 0xff;
	regs[1] = cnt >> 8;
	pm_read_bytes(offset, data, len, regs, sizeof(regs));
}

static void pm1_cnt_write(void *dev, uint64_t offset, const uint8_t *data,
			  uint32_t len)
{
	struct acpi_pm *pm = dev;
	uint16_t mask, value, cnt;
	bool power_off = false;

	pthread_mutex_lock(&pm->lock);
	mask = pm_write_mask(offset, len, 0, data, &value);
	cnt = (pm->pm1_cnt & ~mask) | (value & mask);
	pm->pm1_cnt = cnt & PM1_CNT_STORED;
	if (mask & value & ACPI_SLP_EN) {
		unsigned int typ =
			(cnt & ACPI_SLP_TYP_MASK) >> ACPI_SLP_TYP_SHIFT;

		if (typ == ACPI_SLP_TYP_S5)
			power_off = true;
		else
			pm->pm1_sts |= PM1_STS_WAK; /* unsupported: wake now */
	}
	pthread_mutex_unlock(&pm->lock);
	/* Outside the lock: the sink may stop vCPUs that wait on it. */
	if (power_off)
		power_sink_event(&pm->power, POWER_OFF, 0);
}

static void reset_reg_read(void *dev, uint64_t offset, uint8_t *data,
			   uint32_t len)
{
	struct acpi_pm *pm = dev;
	uint8_t reg;

	pthread_mutex_lock(&pm->lock);
	reg = pm->reset_reg;
	pthread_mutex_unlock(&pm->lock);
	pm_read_bytes(offset, data, len, &reg, 1);
}

static void reset_reg_write(void *dev, uint64_t offset, const uint8_t *data,
			    uint32_t len)
{
	struct acpi_pm *pm = dev;

	if (!len || offset)
		return;
	pthread_mutex_lock(&pm->lock);
	pm->reset_reg = data[0] & RESET_KEPT_BITS;
	pthread_mutex_unlock(&pm->lock);
	if (data[0] & RESET_RST_CPU)
		power_sink_event(&pm->power, POWER_RESET, 0);
}

const struct bus_ops acpi_pm1_evt_bus_ops = {
	.read = pm1_evt_read,
	.write = pm1_evt_write,
};

const struct bus_ops acpi_pm1_cnt_bus_ops = {
	.read = pm1_cnt_read,
	.write = pm1_cnt_write,
};

const struct bus_ops acpi_reset_bus_ops = {
	.read = reset_reg_read,
	.write = reset_reg_write,
};

const struct bus_ops acpi_gpe0_bus_ops = {
	.read = gpe0_read,
	.write = gpe0_write,
};

struct acpi_pm *acpi_pm_create(struct power_sink power, struct irq_line sci)
{
	struct acpi_pm *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	if (pthread_mutex_init(&pm->lock, NULL)) {
		free(pm);
		return NULL;
	}
	pm->power = power;
	pm->sci = sci;
	return pm;
}

void acpi_pm_destroy(struct acpi_pm *pm)
{
	if (!pm)
		return;
	pthread_mutex_destroy(&pm->lock);
	free(pm);
}

void acpi_pm_save(struct acpi_pm *pm, struct acpi_pm_state *s)
{
	pthread_mutex_lock(&pm->lock);
	*s = (struct acpi_pm_state){ .pm1_sts = pm->pm1_sts,
				     .pm1_en = pm->pm1_en,
				     .pm1_cnt = pm->pm1_cnt,
				     .reset_reg = pm->reset_reg,
				     .gpe0_sts = pm->gpe0_sts,
				     .gpe0_en = pm->gpe0_en };
	pthread_mutex_unlock(&pm->lock);
}

int acpi_pm_load(struct acpi_pm *pm, const struct acpi_pm_state *s)
{
	if (s->pm1_sts & ~PM1_STS_WAK || s->pm1_en & ~PM1_EN_DEFINED ||
	    s->pm1_cnt & ~PM1_CNT_STORED || s->reset_reg & ~RESET_KEPT_BITS ||
	    s->reserved)
		return hvm_set_error(
			-EINVAL,
			"ACPI PM state: sts 0x%x en 0x%x cnt 0x%x reset 0x%x: expected only the bits 0x%x, 0x%x, 0x%x, 0x%x",
			s->pm1_sts, s->pm1_en, s->pm1_cnt, s->reset_reg,
			PM1_STS_WAK, PM1_EN_DEFINED, PM1_CNT_STORED,
			RESET_KEPT_BITS);
	pthread_mutex_lock(&pm->lock);
	pm->pm1_sts = s->pm1_sts;
	pm->pm1_en = s->pm1_en;
	pm->pm1_cnt = s->pm1_cnt;
	pm->reset_reg = s->reset_reg;
	pm->gpe0_sts = s->gpe0_sts;
	pm->gpe0_en = s->gpe0_en;
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
	return 0;
}
