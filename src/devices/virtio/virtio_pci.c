// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include <linux/virtio_ids.h>
#include <linux/virtio_pci.h>

#include "base/log.h"
#include "devices/virtio/virtio_pci.h"

static uint32_t class_of(uint32_t device_id)
{
	switch (device_id) {
	case VIRTIO_ID_NET:
		return 0x020000; /* network controller, ethernet */
	case VIRTIO_ID_BLOCK:
		return 0x018000; /* mass storage, other */
	case VIRTIO_ID_CONSOLE:
		return 0x078000; /* communication, other */
	default:
		return 0x00ff00; /* unclassified */
	}
}

static void put_le(uint8_t *p, uint64_t v, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned int len)
{
	uint64_t v = 0;

	for (unsigned int i = len; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static struct virtq *selected_queue(struct virtio_pci *vp)
{
	struct virtio_device *vdev = vp->vdev;

	return vp->queue_select < vdev->nr_vqs ? &vdev->vqs[vp->queue_select]
					       : NULL;
}

/* A vector the device can use, or NO_VECTOR (how a refusal reads back). */
static uint16_t checked_vector(struct virtio_pci *vp, uint16_t v)
{
	return v < vp->msix.nr ? v : VIRTIO_MSI_NO_VECTOR;
}

static void common_read(struct virtio_pci *vp, uint64_t off, uint8_t *data,
			uint32_t len)
{
	struct virtio_device *vdev = vp->vdev;
	struct virtq *vq = selected_queue(vp);
	uint8_t img[VIRTIO_PCI_COMMON_LEN] = { 0 };

	memset(data, 0, len);
	if (off >= sizeof(img) || len > sizeof(img) - off)
		return;
	put_le(img + VIRTIO_PCI_COMMON_DFSELECT, vp->dfselect, 4);
	put_le(img + VIRTIO_PCI_COMMON_DF,
	       virtio_device_features_word(vdev, vp->dfselect), 4);
	put_le(img + VIRTIO_PCI_COMMON_GFSELECT, vp->gfselect, 4);
	put_le(img + VIRTIO_PCI_COMMON_GF,
	       virtio_driver_features_word(vdev, vp->gfselect), 4);
	put_le(img + VIRTIO_PCI_COMMON_MSIX, vp->config_vector, 2);
	put_le(img + VIRTIO_PCI_COMMON_NUMQ, vdev->nr_vqs, 2);
	img[VIRTIO_PCI_COMMON_STATUS] = vdev->status;
	img[VIRTIO_PCI_COMMON_CFGGENERATION] = vdev->config_generation;
	put_le(img + VIRTIO_PCI_COMMON_Q_SELECT, vp->queue_select, 2);
	if (vq) {
		put_le(img + VIRTIO_PCI_COMMON_Q_SIZE, vq->size, 2);
		put_le(img + VIRTIO_PCI_COMMON_Q_MSIX,
		       vp->queue_vectors[vp->queue_select], 2);
		put_le(img + VIRTIO_PCI_COMMON_Q_ENABLE, vq->enabled, 2);
		put_le(img + VIRTIO_PCI_COMMON_Q_NOFF, vp->queue_select, 2);
		put_le(img + VIRTIO_PCI_COMMON_Q_DESCLO, vq->desc_gpa, 8);
		put_le(img + VIRTIO_PCI_COMMON_Q_AVAILLO, vq->avail_gpa, 8);
		put_le(img + VIRTIO_PCI_COMMON_Q_USEDLO, vq->used_gpa, 8);
	}
	memcpy(data, img + off, len);
}

/* Write half or all of a 64-bit ring address, only while disabled. */
static void write_addr(struct virtq *vq, uint64_t *field, uint64_t off_in,
		       uint64_t v, uint32_t len)
{
	if (!vq || vq->enabled)
		return;
	if (len == 8 && off_in == 0)
		*field = v;
	else if (len == 4 && off_in == 0)
		*field = (*field & ~0xffffffffull) | v;
	else if (len == 4 && off_in == 4)
		*field = (*field & 0xffffffffull) | v << 32;
}

static void reset_transport(struct virtio_pci *vp)
{
	vp->config_vector = VIRTIO_MSI_NO_VECTOR;
	for (unsigned int i = 0; i < MSIX_MAX_VECTORS; i++)
		vp->queue_vectors[i] = VIRTIO_MSI_NO_VECTOR;
	vp->isr = 0;
}

static void common_write(struct virtio_pci *vp, uint64_t off,
			 const uint8_t *data, uint32_t len)
{
	struct virtio_device *vdev = vp->vdev;
	struct virtq *vq = selected_queue(vp);
	uint64_t v = get_le(data, len);

	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		if (len == 4)
			vp->dfselect = (uint32_t)v;
		break;
	case VIRTIO_PCI_COMMON_GFSELECT:
		if (len == 4)
			vp->gfselect = (uint32_t)v;
		break;
	case VIRTIO_PCI_COMMON_GF:
		if (len == 4)
			virtio_driver_features_write(vdev, vp->gfselect,
						     (uint32_t)v);
		break;
	case VIRTIO_PCI_COMMON_MSIX:
		if (len == 2)
			vp->config_vector = checked_vector(vp, (uint16_t)v);
		break;
	case VIRTIO_PCI_COMMON_STATUS:
		if (len != 1)
			break;
		virtio_set_status(vdev, (uint8_t)v);
		if (v == 0)
			reset_transport(vp);
		break;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		if (len == 2)
			vp->queue_select = (uint16_t)v;
		break;
	case VIRTIO_PCI_COMMON_Q_SIZE:
		/* A bad size is ignored: the driver reads back what stuck. */
		if (len == 2 && vq)
			virtq_set_size(vq, (uint16_t)v);
		break;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		if (len == 2 && vq)
			vp->queue_vectors[vp->queue_select] =
				checked_vector(vp, (uint16_t)v);
		break;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		/* Writing 0 is forbidden to drivers; only reset disables. */
		if (len == 2 && vq && v == 1 && !vq->enabled)
			virtio_queue_enable(vdev, vp->queue_select);
		break;
	case VIRTIO_PCI_COMMON_Q_DESCLO:
	case VIRTIO_PCI_COMMON_Q_DESCHI:
		if (vq)
			write_addr(vq, &vq->desc_gpa,
				   off - VIRTIO_PCI_COMMON_Q_DESCLO, v, len);
		break;
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
		if (vq)
			write_addr(vq, &vq->avail_gpa,
				   off - VIRTIO_PCI_COMMON_Q_AVAILLO, v, len);
		break;
	case VIRTIO_PCI_COMMON_Q_USEDLO:
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		if (vq)
			write_addr(vq, &vq->used_gpa,
				   off - VIRTIO_PCI_COMMON_Q_USEDLO, v, len);
		break;
	default:
		break; /* read-only or not a field start: ignored */
	}
}

static void bar_read(void *dev, uint64_t off, uint8_t *data, uint32_t len)
{
	struct virtio_pci *vp = dev;
	struct virtio_device *vdev = vp->vdev;

	memset(data, 0, len);
	pthread_mutex_lock(&vdev->lock);
	if (off < VIRTIO_PCI_ISR_OFF) {
		common_read(vp, off - VIRTIO_PCI_COMMON_OFF, data, len);
	} else if (off < VIRTIO_PCI_DEVCFG_OFF) {
		if (off == VIRTIO_PCI_ISR_OFF) {
			data[0] = vp->isr; /* reading acknowledges */
			vp->isr = 0;
		}
	} else if (off < VIRTIO_PCI_NOTIFY_OFF) {
		virtio_config_read(vdev,
				   (uint32_t)(off - VIRTIO_PCI_DEVCFG_OFF),
				   data, len);
	} else if (off >= VIRTIO_PCI_MSIX_PBA_OFF) {
		msix_pba_read(&vp->msix, off - VIRTIO_PCI_MSIX_PBA_OFF, data,
			      len);
	} else if (off >= VIRTIO_PCI_MSIX_TABLE_OFF) {
		msix_table_read(&vp->msix, off - VIRTIO_PCI_MSIX_TABLE_OFF,
				data, len);
	}
	pthread_mutex_unlock(&vdev->lock);
}

static void bar_write(void *dev, uint64_t off, const uint8_t *data,
		      uint32_t len)
{
	struct virtio_pci *vp = dev;
	struct virtio_device *vdev = vp->vdev;

	if (off >= VIRTIO_PCI_NOTIFY_OFF && off < VIRTIO_PCI_MSIX_TABLE_OFF) {
		uint64_t q =
			(off - VIRTIO_PCI_NOTIFY_OFF) / VIRTIO_PCI_NOTIFY_MULT;

		/* The notify address names the queue; the value is ignored. */
		if (q < vdev->nr_vqs)
			virtio_device_kick(vdev, (uint16_t)q);
		return;
	}
	pthread_mutex_lock(&vdev->lock);
	if (off < VIRTIO_PCI_ISR_OFF)
		common_write(vp, off - VIRTIO_PCI_COMMON_OFF, data, len);
	else if (off >= VIRTIO_PCI_DEVCFG_OFF && off < VIRTIO_PCI_NOTIFY_OFF)
		virtio_config_write(vdev,
				    (uint32_t)(off - VIRTIO_PCI_DEVCFG_OFF),
				    data, len);
	else if (off >= VIRTIO_PCI_MSIX_TABLE_OFF &&
		 off < VIRTIO_PCI_MSIX_PBA_OFF)
		msix_table_write(&vp->msix, off - VIRTIO_PCI_MSIX_TABLE_OFF,
				 data, len);
	pthread_mutex_unlock(&vdev->lock);
}

const struct bus_ops virtio_pci_bar_ops = {
	.read = bar_read,
	.write = bar_write,
};

/* Offsets inside struct virtio_pci_cfg_cap. */
#define CFG_CAP_BAR 4
#define CFG_CAP_OFFSET 8
#define CFG_CAP_LENGTH 12
#define CFG_CAP_DATA 16
#define CFG_CAP_SIZE 20

/* [OFF, OFF + LEN) overlaps the pci_cfg_data bytes of the PCI_CFG cap. */
static bool touches_cfg_data(struct virtio_pci *vp, uint32_t off, uint32_t len)
{
	uint32_t data = vp->pci_cfg_cap + CFG_CAP_DATA;

	return vp->pci_cfg_cap && off < data + 4 && off + len > data;
}

/*
 * The BAR access the guest programmed into the PCI_CFG capability, if it
 * is one the spec allows: our BAR, 1, 2 or 4 bytes, aligned, inside it.
 */
static bool cfg_window(struct virtio_pci *vp, uint32_t *off, uint32_t *len)
{
	const uint8_t *cap = &vp->pdev.cfg[vp->pci_cfg_cap];

	*off = (uint32_t)get_le(cap + CFG_CAP_OFFSET, 4);
	*len = (uint32_t)get_le(cap + CFG_CAP_LENGTH, 4);
	return cap[CFG_CAP_BAR] == VIRTIO_PCI_BAR &&
	       (*len == 1 || *len == 2 || *len == 4) && !(*off % *len) &&
	       *off < VIRTIO_PCI_BAR_SIZE && *len <= VIRTIO_PCI_BAR_SIZE - *off;
}

static void bar_read(void *dev, uint64_t off, uint8_t *data, uint32_t len);
static void bar_write(void *dev, uint64_t off, const uint8_t *data,
		      uint32_t len);

/* Where the notify area decodes now: 0 when the BAR does not decode. */
static uint64_t notify_addr_now(const struct virtio_pci *vp)
{
	uint64_t bar = pci_device_bar_addr(&vp->pdev, VIRTIO_PCI_BAR);

	if (!(vp->pdev.cfg[PCI_COMMAND] & PCI_COMMAND_MEMORY) ||
	    bar < vp->window_base || bar - vp->window_base >= vp->window_size ||
	    VIRTIO_PCI_BAR_SIZE > vp->window_size - (bar - vp->window_base))
		return 0;
	return bar + VIRTIO_PCI_NOTIFY_OFF;
}

static int notify_eventfd(struct virtio_pci *vp, uint64_t base, uint16_t q,
			  bool assign)
{
	return vp->vhost->ioeventfd(vp->vhost->ioeventfd_ctx,
				    base + VIRTIO_PCI_NOTIFY_MULT * q, 2, false,
				    0, vp->vdev->kicks[q].fd, assign);
}

/*
 * Keep the queue-notify ioeventfds where the BAR decodes: a guest may
 * move it, size it (all-ones, then the address back) or turn memory
 * decode off, and the old address must then kick nothing. A queue left
 * without an ioeventfd still works: its write exits and bar_write kicks.
 */
static void update_notify_eventfds(struct virtio_pci *vp)
{
	uint64_t want = notify_addr_now(vp);
	uint16_t q;
	int ret = 0;

	if (!vp->vhost || !vp->vhost->ioeventfd || want == vp->notify_addr)
		return;
	for (q = 0; q < vp->notify_queues; q++)
		notify_eventfd(vp, vp->notify_addr, q, false);
	vp->notify_addr = want;
	vp->notify_queues = 0;
	for (q = 0; want && q < vp->vdev->nr_vqs; q++) {
		ret = notify_eventfd(vp, want, q, true);
		if (ret)
			break;
		vp->notify_queues = q + 1;
	}
	if (ret)
		pr_warn_ratelimited(
			"%s: no ioeventfd for queue %u at 0x%llx (%s): kicks exit to userspace",
			vp->vdev->name, q, (unsigned long long)want,
			strerror(-ret));
}

/* Does [OFF, OFF + LEN) touch the command register or our BAR? */
static bool touches_decode(uint32_t off, uint32_t len)
{
	uint32_t bar = PCI_BASE_ADDRESS_0 + 4 * VIRTIO_PCI_BAR;

	return (off < PCI_COMMAND + 2 && off + len > PCI_COMMAND) ||
	       (off < bar + 8 && off + len > bar);
}

/* Called with the PCI host's config lock held. */
static void pci_config_written(struct pci_device *pdev, uint32_t off,
			       uint32_t len)
{
	struct virtio_pci *vp = pdev->owner;
	uint32_t win_off, win_len;

	if (touches_decode(off, len))
		update_notify_eventfds(vp);

	pthread_mutex_lock(&vp->vdev->lock);
	msix_config_written(&vp->msix, off, len);
	pthread_mutex_unlock(&vp->vdev->lock);
	if (touches_cfg_data(vp, off, len) &&
	    cfg_window(vp, &win_off, &win_len))
		bar_write(vp, win_off,
			  &pdev->cfg[vp->pci_cfg_cap + CFG_CAP_DATA], win_len);
}

/* Fill pci_cfg_data from the BAR before the guest reads it. */
static void pci_config_read(struct pci_device *pdev, uint32_t off, uint32_t len)
{
	struct virtio_pci *vp = pdev->owner;
	uint32_t win_off, win_len;

	if (touches_cfg_data(vp, off, len) &&
	    cfg_window(vp, &win_off, &win_len))
		bar_read(vp, win_off,
			 &pdev->cfg[vp->pci_cfg_cap + CFG_CAP_DATA], win_len);
}

/* Locked (device handlers hold vdev->lock when they push). */
static int signal_queue(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_pci *vp = vdev->transport.ctx;
	uint16_t vector = vp->queue_vectors[q];

	vp->isr |= 1;
	if (vector == VIRTIO_MSI_NO_VECTOR)
		return 0; /* no INTx: nothing to raise */
	return msix_notify(&vp->msix, vector);
}

static int signal_config(struct virtio_device *vdev)
{
	struct virtio_pci *vp = vdev->transport.ctx;

	vp->isr |= VIRTIO_PCI_ISR_CONFIG;
	if (vp->config_vector == VIRTIO_MSI_NO_VECTOR)
		return 0;
	return msix_notify(&vp->msix, vp->config_vector);
}

static int add_virtio_cap(struct pci_device *pdev, uint8_t type,
			  uint32_t offset, uint32_t length, uint32_t mult)
{
	uint8_t cap[20] = { 0 };
	uint8_t len = type == VIRTIO_PCI_CAP_NOTIFY_CFG ? 20 : 16;

	cap[2] = len;
	cap[3] = type;
	cap[4] = VIRTIO_PCI_BAR;
	put_le(cap + 8, offset, 4);
	put_le(cap + 12, length, 4);
	put_le(cap + 16, mult, 4);
	return pci_device_add_cap(pdev, PCI_CAP_ID_VNDR, cap, len) ? 0
								   : -ENOSPC;
}

int virtio_pci_init(struct virtio_pci *vp, struct virtio_device *vdev,
		    struct pci_host *host, const struct virtio_host *vhost)
{
	struct pci_device *pdev = &vp->pdev;
	uint16_t nr_vectors = vdev->nr_vqs + 1;
	int ret;

	if (vdev->nr_vqs >= MSIX_MAX_VECTORS ||
	    vdev->config_size > VIRTIO_PCI_NOTIFY_OFF - VIRTIO_PCI_DEVCFG_OFF)
		return hvm_set_error(-EINVAL, "%s: %u queues do not fit",
				     vdev->name, vdev->nr_vqs);
	memset(vp, 0, sizeof(*vp));
	vp->vdev = vdev;
	reset_transport(vp);
	pci_device_init(pdev, vdev->name, PCI_VENDOR_ID_REDHAT_QUMRANET,
			(uint16_t)(0x1040 + vdev->device_id),
			class_of(vdev->device_id),
			PCI_VENDOR_ID_REDHAT_QUMRANET,
			(uint16_t)(0x40 + vdev->device_id));
	pdev->owner = vp;
	pdev->config_written = pci_config_written;
	pdev->config_read = pci_config_read;
	ret = pci_device_set_bar64(pdev, VIRTIO_PCI_BAR, VIRTIO_PCI_BAR_SIZE,
				   &virtio_pci_bar_ops, vp);
	if (!ret)
		ret = msix_init(&vp->msix, pdev, nr_vectors, VIRTIO_PCI_BAR,
				VIRTIO_PCI_MSIX_TABLE_OFF,
				VIRTIO_PCI_MSIX_PBA_OFF, vhost->msi);
	if (!ret)
		ret = add_virtio_cap(pdev, VIRTIO_PCI_CAP_COMMON_CFG,
				     VIRTIO_PCI_COMMON_OFF,
				     VIRTIO_PCI_COMMON_LEN, 0);
	if (!ret)
		ret = add_virtio_cap(pdev, VIRTIO_PCI_CAP_ISR_CFG,
				     VIRTIO_PCI_ISR_OFF, 1, 0);
	if (!ret && vdev->config_size)
		ret = add_virtio_cap(pdev, VIRTIO_PCI_CAP_DEVICE_CFG,
				     VIRTIO_PCI_DEVCFG_OFF, vdev->config_size,
				     0);
	if (!ret) {
		/* Its bar, offset, length and data are the guest's to set. */
		uint8_t cap[CFG_CAP_SIZE] = { 0, 0, CFG_CAP_SIZE,
					      VIRTIO_PCI_CAP_PCI_CFG };

		vp->pci_cfg_cap = pci_device_add_cap(pdev, PCI_CAP_ID_VNDR, cap,
						     sizeof(cap));
		if (!vp->pci_cfg_cap) {
			ret = -ENOSPC;
		} else {
			uint8_t *w = &pdev->wmask[vp->pci_cfg_cap];

			w[CFG_CAP_BAR] = 0xff;
			memset(w + CFG_CAP_OFFSET, 0xff,
			       CFG_CAP_SIZE - CFG_CAP_OFFSET);
		}
	}
	if (!ret)
		ret = add_virtio_cap(pdev, VIRTIO_PCI_CAP_NOTIFY_CFG,
				     VIRTIO_PCI_NOTIFY_OFF,
				     VIRTIO_PCI_NOTIFY_MULT * vdev->nr_vqs,
				     VIRTIO_PCI_NOTIFY_MULT);
	if (ret)
		return hvm_set_error(ret, "%s: PCI capabilities: %s",
				     vdev->name, strerror(-ret));
	ret = pci_host_add_device(host, pdev);
	if (ret)
		return ret;
	vdev->transport = (struct virtio_transport){
		.signal_queue = signal_queue,
		.signal_config = signal_config,
		.ctx = vp,
	};
	/* Kicks: in-kernel when possible, else the exit path kicks. */
	vp->vhost = vhost;
	pci_host_window(host, &vp->window_base, &vp->window_size);
	update_notify_eventfds(vp);
	return 0;
}

/* ---- snapshots ---- */

void virtio_pci_save(const struct virtio_pci *vp, struct virtio_pci_state *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->cfg, vp->pdev.cfg, sizeof(s->cfg));
	memcpy(s->msix_table, vp->msix.table, sizeof(s->msix_table));
	s->msix_pending = vp->msix.pending;
	s->dfselect = vp->dfselect;
	s->gfselect = vp->gfselect;
	s->queue_select = vp->queue_select;
	s->config_vector = vp->config_vector;
	s->isr = vp->isr;
	memcpy(s->queue_vectors, vp->queue_vectors, sizeof(s->queue_vectors));
}

static bool vector_ok(const struct virtio_pci *vp, uint16_t v)
{
	return v == VIRTIO_MSI_NO_VECTOR || v < vp->msix.nr;
}

int virtio_pci_load(struct virtio_pci *vp, const struct virtio_pci_state *s)
{
	struct pci_device *pdev = &vp->pdev;
	const char *name = vp->vdev->name;

	for (unsigned int i = 0; i < PCI_CFG_SIZE; i++)
		if ((s->cfg[i] ^ pdev->cfg[i]) & ~pdev->wmask[i])
			return hvm_set_error(
				-EINVAL,
				"%s: PCI config byte 0x%02x is 0x%02x; this build's is 0x%02x (bits 0x%02x are read-only)",
				name, i, s->cfg[i], pdev->cfg[i],
				(uint8_t)~pdev->wmask[i]);
	for (unsigned int i = vp->msix.nr * MSIX_ENTRY_SIZE;
	     i < sizeof(s->msix_table); i++)
		if (s->msix_table[i])
			return hvm_set_error(
				-EINVAL,
				"%s: MSI-X table byte %u is set, beyond its %u vectors",
				name, i, vp->msix.nr);
	if (s->msix_pending >> vp->msix.nr || s->isr > 3 || s->reserved[0] ||
	    s->reserved[1] || s->reserved[2])
		return hvm_set_error(
			-EINVAL,
			"%s: MSI-X pending bits 0x%llx, ISR 0x%x; expected bits below %u and ISR bits 0-1",
			name, (unsigned long long)s->msix_pending, s->isr,
			vp->msix.nr);
	if (!vector_ok(vp, s->config_vector))
		return hvm_set_error(-EINVAL,
				     "%s: config vector %u; it has %u vectors",
				     name, s->config_vector, vp->msix.nr);
	for (unsigned int q = 0; q < MSIX_MAX_VECTORS; q++) {
		uint16_t v = s->queue_vectors[q];

		if (q < vp->vdev->nr_vqs ? !vector_ok(vp, v)
					 : v != VIRTIO_MSI_NO_VECTOR)
			return hvm_set_error(
				-EINVAL,
				"%s: queue %u has vector %u; it has %u queues and %u vectors",
				name, q, v, vp->vdev->nr_vqs, vp->msix.nr);
	}
	memcpy(pdev->cfg, s->cfg, sizeof(s->cfg));
	memcpy(vp->msix.table, s->msix_table, sizeof(s->msix_table));
	vp->dfselect = s->dfselect;
	vp->gfselect = s->gfselect;
	vp->queue_select = s->queue_select;
	vp->config_vector = s->config_vector;
	vp->isr = s->isr;
	memcpy(vp->queue_vectors, s->queue_vectors, sizeof(vp->queue_vectors));
	/* Enable and function mask from the control word; nothing pending
	 * yet, so nothing is sent before the pending bits are back. */
	vp->msix.pending = 0;
	msix_config_written(&vp->msix, vp->msix.cap, 4);
	vp->msix.pending = s->msix_pending;
	update_notify_eventfds(vp);
	return 0;
}
