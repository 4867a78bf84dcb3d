// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "devices/pci/pci.h"

/* Config address register (mechanism #1). */
#define CFG_ADDR_ENABLE 0x80000000u
#define CFG_ADDR_BUS(a) (((a) >> 16) & 0xff)
#define CFG_ADDR_SLOT(a) (((a) >> 11) & 0x1f)
#define CFG_ADDR_FN(a) (((a) >> 8) & 0x7)
#define CFG_ADDR_REG(a) ((a)&0xfc)

#define CAP_START 0x40

struct pci_host {
	pthread_mutex_t lock; /* config address and all config spaces */
	uint32_t cfg_addr;
	uint64_t mmio_base, mmio_size, mmio_next;
	struct pci_device *slots[PCI_MAX_SLOTS];
	struct pci_device bridge;
	const struct bus_ops *cf9_ops;
	void *cf9_dev;
};

void pci_device_init(struct pci_device *pdev, const char *name, uint16_t vendor,
		     uint16_t device, uint32_t class_code,
		     uint16_t subsys_vendor, uint16_t subsys_id)
{
	memset(pdev, 0, sizeof(*pdev));
	pdev->name = name;
	pdev->slot = -1;
	pci_cfg_set16(pdev, PCI_VENDOR_ID, vendor);
	pci_cfg_set16(pdev, PCI_DEVICE_ID, device);
	pdev->cfg[PCI_REVISION_ID] = 1;
	pdev->cfg[PCI_CLASS_PROG] = (uint8_t)class_code;
	pci_cfg_set16(pdev, PCI_CLASS_DEVICE, (uint16_t)(class_code >> 8));
	pci_cfg_set16(pdev, PCI_SUBSYSTEM_VENDOR_ID, subsys_vendor);
	pci_cfg_set16(pdev, PCI_SUBSYSTEM_ID, subsys_id);
	/* Guest-controlled command bits: memory decode, bus master, INTx. */
	pdev->wmask[PCI_COMMAND] = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	pdev->wmask[PCI_COMMAND + 1] = PCI_COMMAND_INTX_DISABLE >> 8;
	pdev->next_cap = CAP_START;
	pdev->last_cap_next = &pdev->cfg[PCI_CAPABILITY_LIST];
}

int pci_device_set_bar64(struct pci_device *pdev, unsigned int n, uint64_t size,
			 const struct bus_ops *ops, void *dev)
{
	uint32_t off = PCI_BASE_ADDRESS_0 + 4 * n;
	uint64_t mask;

	if (n + 1 >= PCI_NUM_BARS || size < 4096 || (size & (size - 1)))
		return -EINVAL;
	pdev->bars[n] =
		(struct pci_bar){ .size = size, .ops = ops, .dev = dev };
	pci_cfg_set32(pdev, off, PCI_BASE_ADDRESS_MEM_TYPE_64);
	mask = ~(size - 1);
	for (int i = 0; i < 8; i++)
		pdev->wmask[off + i] = (uint8_t)(mask >> (8 * i));
	pdev->wmask[off] &= 0xf0; /* type bits are read-only */
	return 0;
}

uint8_t pci_device_add_cap(struct pci_device *pdev, uint8_t id,
			   const void *body, uint8_t len)
{
	uint8_t off = pdev->next_cap;

	if (len < 2 || off + len > PCI_CFG_SIZE)
		return 0;
	memcpy(&pdev->cfg[off], body, len);
	pdev->cfg[off] = id;
	pdev->cfg[off + 1] = 0;
	*pdev->last_cap_next = off;
	pdev->last_cap_next = &pdev->cfg[off + 1];
	pdev->cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	/* Capabilities are dword aligned. */
	pdev->next_cap = (uint8_t)((off + len + 3) & ~3);
	if (off + len + 3 >= PCI_CFG_SIZE)
		pdev->next_cap = 0xff;
	return off;
}

uint64_t pci_device_bar_addr(const struct pci_device *pdev, unsigned int n)
{
	uint32_t off = PCI_BASE_ADDRESS_0 + 4 * n;
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | pdev->cfg[off + i];
	return v & ~0xfull;
}

struct pci_host *pci_host_create(uint64_t mmio_base, uint64_t mmio_size)
{
	struct pci_host *host = calloc(1, sizeof(*host));

	if (!host)
		return NULL;
	pthread_mutex_init(&host->lock, NULL);
	host->mmio_base = mmio_base;
	host->mmio_size = mmio_size;
	host->mmio_next = mmio_base;
	/* Slot 0: a host bridge, so the guest sees a conventional bus 0. */
	pci_device_init(&host->bridge, "pci-host", 0x1b36, 0x0008, 0x060000,
			0x1af4, 0x1100);
	host->bridge.wmask[PCI_COMMAND] = 0;
	host->bridge.wmask[PCI_COMMAND + 1] = 0;
	host->bridge.slot = 0;
	host->slots[0] = &host->bridge;
	return host;
}

void pci_host_destroy(struct pci_host *host)
{
	if (!host)
		return;
	pthread_mutex_destroy(&host->lock);
	free(host);
}

void pci_host_window(const struct pci_host *host, uint64_t *base,
		     uint64_t *size)
{
	*base = host->mmio_base;
	*size = host->mmio_size;
}

void pci_host_set_cf9_handler(struct pci_host *host, const struct bus_ops *ops,
			      void *dev)
{
	host->cf9_ops = ops;
	host->cf9_dev = dev;
}

int pci_host_add_device(struct pci_host *host, struct pci_device *pdev)
{
	uint64_t next = host->mmio_next;
	unsigned int slot;

	for (slot = 1; slot < PCI_MAX_SLOTS && host->slots[slot]; slot++)
		;
	if (slot == PCI_MAX_SLOTS)
		return hvm_set_error(-ENOSPC, "PCI bus 0 is full (%d slots)",
				     PCI_MAX_SLOTS);
	for (unsigned int n = 0; n < PCI_NUM_BARS; n++) {
		uint64_t size = pdev->bars[n].size;

		if (!size)
			continue;
		next = (next + size - 1) & ~(size - 1); /* natural alignment */
		if (next - host->mmio_base + size > host->mmio_size)
			return hvm_set_error(
				-ENOSPC,
				"PCI MMIO window 0x%llx+0x%llx has no room for %s",
				(unsigned long long)host->mmio_base,
				(unsigned long long)host->mmio_size,
				pdev->name);
		pci_cfg_set32(pdev, PCI_BASE_ADDRESS_0 + 4 * n,
			      (uint32_t)next | PCI_BASE_ADDRESS_MEM_TYPE_64);
		pci_cfg_set32(pdev, PCI_BASE_ADDRESS_0 + 4 * (n + 1),
			      (uint32_t)(next >> 32));
		next += size;
	}
	/* No firmware: memory decode starts enabled, as if BIOS had run. */
	pdev->cfg[PCI_COMMAND] |= PCI_COMMAND_MEMORY;
	host->mmio_next = next;
	pdev->slot = (int)slot;
	host->slots[slot] = pdev;
	return 0;
}

static struct pci_device *cfg_target(struct pci_host *host, uint32_t addr)
{
	if (!(addr & CFG_ADDR_ENABLE) || CFG_ADDR_BUS(addr) ||
	    CFG_ADDR_FN(addr))
		return NULL;
	return host->slots[CFG_ADDR_SLOT(addr)];
}

static void config_read_locked(struct pci_device *pdev, uint32_t off,
			       uint8_t *data, uint32_t len)
{
	if (!pdev || off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off) {
		memset(data, 0xff, len);
		return;
	}
	if (pdev->config_read)
		pdev->config_read(pdev, off, len);
	memcpy(data, &pdev->cfg[off], len);
}

static void config_write_locked(struct pci_device *pdev, uint32_t off,
				const uint8_t *data, uint32_t len)
{
	if (!pdev || off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return;
	for (uint32_t i = 0; i < len; i++) {
		uint8_t m = pdev->wmask[off + i];

		pdev->cfg[off + i] =
			(uint8_t)((pdev->cfg[off + i] & ~m) | (data[i] & m));
	}
	if (pdev->config_written)
		pdev->config_written(pdev, off, len);
}

void pci_host_config_read(struct pci_host *host, unsigned int slot,
			  uint32_t off, uint8_t *data, uint32_t len)
{
	pthread_mutex_lock(&host->lock);
	config_read_locked(slot < PCI_MAX_SLOTS ? host->slots[slot] : NULL, off,
			   data, len);
	pthread_mutex_unlock(&host->lock);
}

void pci_host_config_write(struct pci_host *host, unsigned int slot,
			   uint32_t off, const uint8_t *data, uint32_t len)
{
	pthread_mutex_lock(&host->lock);
	config_write_locked(slot < PCI_MAX_SLOTS ? host->slots[slot] : NULL,
			    off, data, len);
	pthread_mutex_unlock(&host->lock);
}

static void cfg_port_read(void *dev, uint64_t offset, uint8_t *data,
			  uint32_t len)
{
	struct pci_host *host = dev;

	memset(data, 0xff, len);
	if (offset == 1 && len == 1 && host->cf9_ops) {
		host->cf9_ops->read(host->cf9_dev, 0, data, len);
		return;
	}
	pthread_mutex_lock(&host->lock);
	if (offset == 0 && len == 4) {
		memcpy(data, &host->cfg_addr, 4);
	} else if (offset >= 4 && (offset & 3) + len <= 4) {
		struct pci_device *pdev = cfg_target(host, host->cfg_addr);

		config_read_locked(pdev,
				   CFG_ADDR_REG(host->cfg_addr) + (offset & 3),
				   data, len);
	}
	pthread_mutex_unlock(&host->lock);
}

static void cfg_port_write(void *dev, uint64_t offset, const uint8_t *data,
			   uint32_t len)
{
	struct pci_host *host = dev;

	if (offset == 1 && len == 1 && host->cf9_ops) {
		host->cf9_ops->write(host->cf9_dev, 0, data, len);
		return;
	}
	pthread_mutex_lock(&host->lock);
	if (offset == 0 && len == 4) {
		memcpy(&host->cfg_addr, data, 4);
		host->cfg_addr &= 0x80fffffcu; /* reserved bits read as 0 */
	} else if (offset >= 4 && (offset & 3) + len <= 4) {
		struct pci_device *pdev = cfg_target(host, host->cfg_addr);

		config_write_locked(pdev,
				    CFG_ADDR_REG(host->cfg_addr) + (offset & 3),
				    data, len);
	}
	pthread_mutex_unlock(&host->lock);
}

const struct bus_ops pci_host_cfg_ops = {
	.read = cfg_port_read,
	.write = cfg_port_write,
};

/* Find the BAR decoding [ADDR, ADDR + LEN); offset inside it in *OFF. */
static const struct pci_bar *decode(struct pci_host *host, uint64_t addr,
				    uint32_t len, uint64_t *off)
{
	const struct pci_bar *found = NULL;

	pthread_mutex_lock(&host->lock);
	for (unsigned int s = 1; s < PCI_MAX_SLOTS && !found; s++) {
		struct pci_device *pdev = host->slots[s];

		if (!pdev || !(pdev->cfg[PCI_COMMAND] & PCI_COMMAND_MEMORY))
			continue;
		for (unsigned int n = 0; n < PCI_NUM_BARS; n++) {
			const struct pci_bar *bar = &pdev->bars[n];
			uint64_t o = addr - pci_device_bar_addr(pdev, n);

			if (bar->size && o < bar->size &&
			    len <= bar->size - o) {
				found = bar;
				*off = o;
				break;
			}
		}
	}
	pthread_mutex_unlock(&host->lock);
	return found;
}

static void window_read(void *dev, uint64_t offset, uint8_t *data, uint32_t len)
{
	struct pci_host *host = dev;
	const struct pci_bar *bar;
	uint64_t off;

	bar = decode(host, host->mmio_base + offset, len, &off);
	if (bar)
		bar->ops->read(bar->dev, off, data, len);
	else
		memset(data, 0xff, len);
}

static void window_write(void *dev, uint64_t offset, const uint8_t *data,
			 uint32_t len)
{
	struct pci_host *host = dev;
	const struct pci_bar *bar;
	uint64_t off;

	bar = decode(host, host->mmio_base + offset, len, &off);
	if (bar)
		bar->ops->write(bar->dev, off, data, len);
}

const struct bus_ops pci_host_mmio_ops = {
	.read = window_read,
	.write = window_write,
};

void pci_host_save(struct pci_host *host, struct pci_host_state *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&host->lock);
	s->cfg_addr = host->cfg_addr;
	memcpy(s->bridge_cfg, host->bridge.cfg, sizeof(s->bridge_cfg));
	pthread_mutex_unlock(&host->lock);
}

int pci_host_load(struct pci_host *host, const struct pci_host_state *s)
{
	const struct pci_device *b = &host->bridge;

	if (s->cfg_addr & ~0x80fffffcu || s->reserved)
		return hvm_set_error(
			-EINVAL,
			"PCI host state: config address 0x%08x has reserved bits set (expected within 0x80fffffc)",
			s->cfg_addr);
	for (unsigned int i = 0; i < PCI_CFG_SIZE; i++)
		if ((s->bridge_cfg[i] ^ b->cfg[i]) & ~b->wmask[i])
			return hvm_set_error(
				-EINVAL,
				"PCI host bridge config byte 0x%02x is 0x%02x; the guest cannot write it and this hintvm's is 0x%02x",
				i, s->bridge_cfg[i], b->cfg[i]);
	pthread_mutex_lock(&host->lock);
	host->cfg_addr = s->cfg_addr;
	for (unsigned int i = 0; i < PCI_CFG_SIZE; i++)
		host->bridge.cfg[i] =
			(uint8_t)((b->cfg[i] & ~b->wmask[i]) |
				  (s->bridge_cfg[i] & b->wmask[i]));
	pthread_mutex_unlock(&host->lock);
	return 0;
}
