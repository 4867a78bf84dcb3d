// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "devices/pci/msix.h"

#define MSIX_CTRL 2 /* message control, in the capability */
#define MSIX_CTRL_ENABLE 0x8000
#define MSIX_CTRL_MASKALL 0x4000
#define ENTRY_ADDR_LO 0
#define ENTRY_ADDR_HI 4
#define ENTRY_DATA 8
#define ENTRY_CTRL 12
#define ENTRY_CTRL_MASKED 1u

static uint32_t entry32(const struct msix *m, uint16_t v, uint32_t field)
{
	const uint8_t *p = &m->table[v * MSIX_ENTRY_SIZE + field];

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

int msix_init(struct msix *m, struct pci_device *pdev, uint16_t nr, uint8_t bar,
	      uint32_t table_off, uint32_t pba_off, struct msi_sink sink)
{
	uint8_t body[12] = { 0 };

	if (nr == 0 || nr > MSIX_MAX_VECTORS || bar >= PCI_NUM_BARS ||
	    (table_off & 7) || (pba_off & 7))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->pdev = pdev;
	m->nr = nr;
	m->sink = sink;
	for (uint16_t v = 0; v < nr; v++)
		m->table[v * MSIX_ENTRY_SIZE + ENTRY_CTRL] = ENTRY_CTRL_MASKED;
	body[MSIX_CTRL] = (uint8_t)(nr - 1);
	body[MSIX_CTRL + 1] = (uint8_t)((nr - 1) >> 8);
	memcpy(&body[4], &(uint32_t){ table_off | bar }, 4);
	memcpy(&body[8], &(uint32_t){ pba_off | bar }, 4);
	m->cap = pci_device_add_cap(pdev, PCI_CAP_ID_MSIX, body, sizeof(body));
	if (!m->cap)
		return -ENOSPC;
	/* The guest controls only the enable and function-mask bits. */
	pdev->wmask[m->cap + MSIX_CTRL + 1] =
		(MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL) >> 8;
	return 0;
}

static bool vector_masked(const struct msix *m, uint16_t v)
{
	return m->function_masked ||
	       (entry32(m, v, ENTRY_CTRL) & ENTRY_CTRL_MASKED);
}

static int deliver(struct msix *m, uint16_t v)
{
	uint64_t addr = (uint64_t)entry32(m, v, ENTRY_ADDR_HI) << 32 |
			entry32(m, v, ENTRY_ADDR_LO);

	m->pending &= ~(1ull << v);
	if (!m->sink.send)
		return 0;
	return m->sink.send(m->sink.ctx, addr, entry32(m, v, ENTRY_DATA));
}

/* Deliver every pending vector that is no longer masked. */
static void flush_pending(struct msix *m)
{
	if (!m->enabled)
		return;
	for (uint16_t v = 0; v < m->nr; v++)
		if ((m->pending & (1ull << v)) && !vector_masked(m, v))
			deliver(m, v);
}

int msix_notify(struct msix *m, uint16_t vector)
{
	if (vector >= m->nr)
		return -EINVAL;
	if (!m->enabled || vector_masked(m, vector)) {
		m->pending |= 1ull << vector;
		return 0;
	}
	return deliver(m, vector);
}

void msix_config_written(struct msix *m, uint32_t off, uint32_t len)
{
	uint32_t ctrl_off = m->cap + MSIX_CTRL;
	uint16_t ctrl;

	if (off + len <= ctrl_off || off > ctrl_off + 1)
		return;
	ctrl = pci_cfg_read16(m->pdev, m->cap + MSIX_CTRL);
	m->enabled = ctrl & MSIX_CTRL_ENABLE;
	m->function_masked = ctrl & MSIX_CTRL_MASKALL;
	flush_pending(m);
}

static bool table_access_ok(const struct msix *m, uint64_t off, uint32_t len)
{
	return (len == 4 || len == 8) && !(off & (len - 1)) &&
	       off < (uint64_t)m->nr * MSIX_ENTRY_SIZE;
}

void msix_table_read(struct msix *m, uint64_t off, uint8_t *data, uint32_t len)
{
	if (!table_access_ok(m, off, len)) {
		memset(data, 0, len);
		return;
	}
	memcpy(data, &m->table[off], len);
}

void msix_table_write(struct msix *m, uint64_t off, const uint8_t *data,
		      uint32_t len)
{
	uint16_t v;

	if (!table_access_ok(m, off, len))
		return;
	v = (uint16_t)(off / MSIX_ENTRY_SIZE);
	for (uint32_t i = 0; i < len; i++) {
		uint64_t field = (off + i) % MSIX_ENTRY_SIZE;

		if (field < ENTRY_CTRL)
			m->table[off + i] = data[i];
		else if (field == ENTRY_CTRL) /* only the mask bit is RW */
			m->table[off + i] = data[i] & ENTRY_CTRL_MASKED;
	}
	if ((m->pending & (1ull << v)) && m->enabled && !vector_masked(m, v))
		deliver(m, v);
}

void msix_pba_read(struct msix *m, uint64_t off, uint8_t *data, uint32_t len)
{
	memset(data, 0, len);
	/* One 64-bit word holds every vector we support. */
	for (uint32_t i = 0; i < len; i++)
		if (off + i < 8)
			data[i] = (uint8_t)(m->pending >> (8 * (off + i)));
}
