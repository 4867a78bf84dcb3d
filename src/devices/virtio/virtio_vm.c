// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/vm.h"
#include "devices/virtio/virtio_9p.h"
#include "devices/virtio/virtio_blk.h"
#include "devices/virtio/virtio_console.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_net.h"
#include "devices/virtio/virtio_pci.h"
#include "devices/virtio/virtio_rng.h"
#include "devices/virtio/virtio_vm.h"
#include "devices/virtio/virtio_vsock.h"

#define EVENT_LOOP_ENTRIES 256

/* What each device is, for the snapshot switch (no default case). */
enum virtio_vm_kind {
	VIRTIO_VM_BLK,
	VIRTIO_VM_NET,
	VIRTIO_VM_CONSOLE,
	VIRTIO_VM_RNG,
	VIRTIO_VM_VSOCK,
	VIRTIO_VM_9P,
};

struct virtio_vm {
	struct event_loop *loop;
	struct virtio_host host;
	struct virtio_device *devs[VIRTIO_VM_MAX_DEVICES];
	enum virtio_vm_kind kinds[VIRTIO_VM_MAX_DEVICES];
	struct virtio_device *vsock; /* also in devs[] */
	unsigned int nr;
	struct virtio_pci pci[VIRTIO_VM_MAX_DEVICES];
	struct virtio_mmio mmio[VIRTIO_VM_MAX_DEVICES];
	bool plugged[VIRTIO_VM_MAX_DEVICES]; /* on a transport */
};

static int kvm_ioeventfd(void *ctx, uint64_t addr, uint32_t len, bool datamatch,
			 uint64_t data, int fd, bool assign)
{
	struct vm *vm = ctx;
	struct kvm_ioeventfd ioev = {
		.datamatch = data,
		.addr = addr,
		.len = len,
		.fd = fd,
		.flags = (datamatch ? KVM_IOEVENTFD_FLAG_DATAMATCH : 0) |
			 (assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN),
	};

	return ioctl(vm->fd, KVM_IOEVENTFD, &ioev) < 0 ? -errno : 0;
}

static int kvm_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct vm *vm = ctx;
	struct kvm_msi msi = {
		.address_lo = (uint32_t)addr,
		.address_hi = (uint32_t)(addr >> 32),
		.data = data,
	};

	/* 0 means the guest blocked it (e.g. APIC disabled): not an error. */
	if (ioctl(vm->fd, KVM_SIGNAL_MSI, &msi) < 0)
		return -errno;
	vm_msi_injected(vm, addr); /* maybe boost the woken vCPU */
	return 0;
}

static int add(struct virtio_vm *v, struct virtio_device *dev,
	       enum virtio_vm_kind kind)
{
	if (!dev)
		return -EINVAL; /* the reason is in hvm_error_message() */
	if (v->nr == VIRTIO_VM_MAX_DEVICES) {
		dev->ops->destroy(dev);
		return hvm_set_error(-ENOSPC, "at most %d virtio devices",
				     VIRTIO_VM_MAX_DEVICES);
	}
	v->kinds[v->nr] = kind;
	v->devs[v->nr++] = dev;
	return 0;
}

/*
 * server=auto: once the VM's threads switch to an unprivileged user
 * (--user), only a process that stays root can give the guest root's view
 * of the share; without that switch the workers serve it themselves.
 */
static enum virtio_9p_server share_server(const struct vm *vm,
					  enum hvm_share_server asked)
{
	switch (asked) {
	case HVM_SHARE_SERVER_THREAD:
		return VIRTIO_9P_SERVER_THREAD;
	case HVM_SHARE_SERVER_PROCESS:
		return VIRTIO_9P_SERVER_PROCESS;
	case HVM_SHARE_SERVER_AUTO:
	default:
		return vm->identity.set ? VIRTIO_9P_SERVER_PROCESS
					: VIRTIO_9P_SERVER_THREAD;
	}
}

static void default_mac(uint8_t mac[6], unsigned int index)
{
	/* Locally administered, stable per NIC index. */
	static const uint8_t base[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(mac[5] + index);
}

int virtio_vm_create(struct vm *vm)
{
	const struct hvm_config *cfg = vm->cfg;
	struct virtio_vm *v;
	unsigned int wanted = cfg->nr_disks + cfg->nr_nets +
			      (cfg->rng ? 1 : 0) + cfg->nr_shares +
			      (cfg->console == CONSOLE_VIRTIO ? 1 : 0) +
			      (cfg->vsock.enabled ? 1 : 0);
	int r = 0;

	if (!wanted || vm->virtio)
		return 0;
	v = calloc(1, sizeof(*v));
	if (!v)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->virtio = v;
	r = event_loop_create(&v->loop, EVENT_LOOP_ENTRIES);
	if (r < 0)
		return hvm_set_error(r, "virtio devices need io_uring: %s",
				     hvm_error_message());
	v->host = (struct virtio_host){
		.mem = &vm->mem,
		.loop = v->loop,
		.ioeventfd = kvm_ioeventfd,
		.ioeventfd_ctx = vm,
		.msi = { .send = kvm_signal_msi, .ctx = vm },
		.guest_objects = &vm->guest_objects,
		.share_server_deaths = &vm->share_server_deaths,
		.share_objects = &vm->share_objects,
	};
	for (unsigned int i = 0; !r && i < cfg->nr_disks; i++) {
		r = add(v,
			virtio_blk_create(&v->host, cfg->disks[i].path,
					  cfg->disks[i].readonly,
					  cfg->disks[i].direct,
					  !cfg->disks[i].no_lock, i),
			VIRTIO_VM_BLK);
		if (!r && (cfg->disks[i].iops || cfg->disks[i].bw))
			r = virtio_blk_set_limits(v->devs[v->nr - 1],
						  cfg->disks[i].iops,
						  cfg->disks[i].bw);
	}
	for (unsigned int i = 0; !r && i < cfg->nr_nets; i++) {
		uint8_t mac[6];

		if (cfg->nets[i].mac_set)
			memcpy(mac, cfg->nets[i].mac, 6);
		else
			default_mac(mac, i);
		r = add(v,
			virtio_net_create(&v->host, cfg->nets[i].tap, mac, i),
			VIRTIO_VM_NET);
		if (!r && cfg->nets[i].bw)
			r = virtio_net_set_limit(v->devs[v->nr - 1],
						 cfg->nets[i].bw);
	}
	if (!r && cfg->console == CONSOLE_VIRTIO) {
		struct virtio_device *con =
			virtio_console_create(&v->host, vm->console_out);

		r = add(v, con, VIRTIO_VM_CONSOLE);
		if (!r)
			virtio_console_set_output_notify(con, vm_console_output,
							 vm);
		if (!r)
			vm->console_sink = (struct console_sink){
				.deliver = virtio_console_receive,
				.ctx = con,
			};
	}
	if (!r && cfg->rng)
		r = add(v, virtio_rng_create(&v->host), VIRTIO_VM_RNG);
	if (!r && cfg->vsock.enabled) {
		v->vsock = virtio_vsock_create(&v->host, cfg->vsock.cid,
					       cfg->vsock.uds);
		r = add(v, v->vsock, VIRTIO_VM_VSOCK);
		if (r)
			v->vsock = NULL;
	}
	for (unsigned int i = 0; !r && i < cfg->nr_shares; i++) {
		const struct hvm_share_config *c = &cfg->shares[i];
		struct virtio_9p_share share = {
			.dir = c->path,
			.tag = c->tag,
			.readonly = c->readonly,
			.ids = c->ids_mapped ? P9_IDS_MAPPED : P9_IDS_HOST,
			.server = share_server(vm, c->server),
		};

		r = add(v, virtio_9p_create(&v->host, &share, i), VIRTIO_VM_9P);
	}
	for (unsigned int i = 0; !r && i < v->nr; i++)
		r = virtio_device_attach_loop(v->devs[i], v->loop);
	if (!r)
		r = event_loop_start(v->loop, "hvm-virtio");
	return r < 0 ? r : 0;
}

struct virtio_device *virtio_vm_vsock(const struct vm *vm)
{
	return vm->virtio ? vm->virtio->vsock : NULL;
}

unsigned int virtio_vm_count(const struct vm *vm)
{
	return vm->virtio ? vm->virtio->nr : 0;
}

int virtio_vm_plug_pci(struct vm *vm, struct pci_host *host)
{
	struct virtio_vm *v = vm->virtio;
	int r;

	if (!v)
		return 0;
	for (unsigned int i = 0; i < v->nr; i++) {
		r = virtio_pci_init(&v->pci[i], v->devs[i], host, &v->host);
		if (r < 0)
			return r;
		v->plugged[i] = true;
	}
	return 0;
}

int virtio_vm_plug_mmio(struct vm *vm)
{
	struct virtio_vm *v;
	int r = virtio_vm_create(vm);

	v = vm->virtio;
	for (unsigned int i = 0; !r && v && i < v->nr; i++) {
		struct arch_virtio_mmio_slot slot;
		struct irq_line irq;

		if (v->plugged[i])
			continue;
		r = arch_virtio_mmio_slot(vm, &slot);
		if (r == -EOPNOTSUPP)
			return hvm_set_error(
				r,
				"%s: this architecture has no virtio-mmio slots",
				v->devs[i]->name);
		if (r < 0)
			return hvm_set_error(r, "%s: no virtio-mmio slot left",
					     v->devs[i]->name);
		irq = (struct irq_line){ .set_level = vm_irq_line_set,
					 .ctx = vm,
					 .gsi = slot.irq_gsi };
		if (slot.size < VIRTIO_MMIO_SIZE)
			return hvm_set_error(
				-EINVAL,
				"%s: virtio-mmio slot of 0x%llx bytes is too small",
				v->devs[i]->name,
				(unsigned long long)slot.size);
		virtio_mmio_init(&v->mmio[i], v->devs[i], slot.gpa, irq,
				 &v->host);
		r = vm_register_mmio(vm, slot.gpa, slot.size, &virtio_mmio_ops,
				     &v->mmio[i], v->devs[i]->name);
		v->plugged[i] = !r;
	}
	return r;
}

void virtio_vm_destroy(struct vm *vm)
{
	struct virtio_vm *v = vm->virtio;

	if (!v)
		return;
	/* First the loop: no callback may run on a freed device. */
	event_loop_destroy(v->loop);
	for (unsigned int i = 0; i < v->nr; i++)
		v->devs[i]->ops->destroy(v->devs[i]);
	free(v);
	vm->virtio = NULL;
}

/* ---- snapshots (docs/snapshot.md) ---- */

/*
 * Device I's own state beyond the transport and queues: its length in
 * EXTRA, or -EOPNOTSUPP (reason recorded) for a device that cannot be
 * snapshotted yet. No default case: -Wswitch makes a new kind decide.
 */
static int kind_state(const struct virtio_vm *v, unsigned int i, size_t *extra)
{
	const char *name = v->devs[i]->name;

	*extra = 0;
	if (!v->plugged[i] || v->pci[i].vdev != v->devs[i])
		return hvm_set_error(
			-EOPNOTSUPP,
			"device %s on virtio-mmio cannot be snapshotted yet",
			name);
	switch (v->kinds[i]) {
	case VIRTIO_VM_BLK:
		*extra = sizeof(struct virtio_blk_state);
		return 0;
	case VIRTIO_VM_CONSOLE: /* fixed config; input waits in the host */
	case VIRTIO_VM_RNG: /* no state: every request is fresh getrandom() */
		return 0;
	/* Receive buffers stay in the avail ring until a frame fills them,
	 * so at rest none is held; the tap is named, not kept. */
	case VIRTIO_VM_NET:
		*extra = sizeof(struct virtio_net_state);
		return 0;
	case VIRTIO_VM_VSOCK:
		*extra = sizeof(struct virtio_vsock_state);
		return 0;
	/*
	 * Only while the guest has sent it nothing (virtio_9p_save): a fid
	 * is an open host file or a walked directory in the 9P server (or
	 * its file-server process), and a path does not bring back a file
	 * unlinked or renamed since, a lock, or an open O_TMPFILE; a
	 * restored mount that lost its fids would fail every request. An
	 * unused share has none, and a restore may name another directory
	 * for it: how a template's clone gets its container's files.
	 */
	case VIRTIO_VM_9P:
		*extra = sizeof(struct virtio_9p_state);
		return 0;
	}
	return hvm_set_error(-EOPNOTSUPP, "device %s of unknown kind %d", name,
			     (int)v->kinds[i]);
}

int virtio_vm_check_snapshot(const struct vm *vm)
{
	const struct virtio_vm *v = vm->virtio;
	size_t extra;
	int r;

	for (unsigned int i = 0; v && i < v->nr; i++) {
		r = kind_state(v, i, &extra);
		if (r < 0)
			return r;
	}
	return 0;
}

static unsigned int in_flight(struct virtio_vm *v, unsigned int i)
{
	struct virtio_device *vdev = v->devs[i];
	unsigned int n = 0;

	pthread_mutex_lock(&vdev->lock);
	switch (v->kinds[i]) {
	case VIRTIO_VM_BLK:
		n = virtio_blk_in_flight(vdev);
		break;
	case VIRTIO_VM_NET: /* a frame the bw= limit holds; its timer sends it */
		n = virtio_net_in_flight(vdev);
		break;
	/* Serve each chain as they pop it (vsock: its host side waits
	 * while frozen, epoll_ready()): never one in flight. */
	case VIRTIO_VM_CONSOLE:
	case VIRTIO_VM_RNG:
	case VIRTIO_VM_VSOCK:
	/* A used share is refused by its save, an unused one has none. */
	case VIRTIO_VM_9P:
		break;
	}
	pthread_mutex_unlock(&vdev->lock);
	return n;
}

#define DRAIN_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)

int virtio_vm_freeze(struct vm *vm)
{
	struct virtio_vm *v = vm->virtio;
	uint64_t deadline = hvm_monotonic_ns() + DRAIN_TIMEOUT_NS;

	for (unsigned int i = 0; v && i < v->nr; i++)
		virtio_device_freeze(v->devs[i]);
	for (unsigned int i = 0; v && i < v->nr; i++) {
		unsigned int n;

		while ((n = in_flight(v, i)) != 0) {
			if (hvm_monotonic_ns() > deadline) {
				virtio_vm_thaw(vm);
				return hvm_set_error(
					-ETIMEDOUT,
					"cannot snapshot: %s still has %u requests in flight after %llu s",
					v->devs[i]->name, n,
					DRAIN_TIMEOUT_NS / 1000000000ull);
			}
			usleep(200);
		}
	}
	return 0;
}

void virtio_vm_thaw(struct vm *vm)
{
	struct virtio_vm *v = vm->virtio;

	for (unsigned int i = 0; v && i < v->nr; i++)
		virtio_device_thaw(v->devs[i]);
}

static size_t state_size(const struct virtio_vm *v, unsigned int i,
			 size_t extra)
{
	return virtio_device_state_size(v->devs[i]) +
	       sizeof(struct virtio_pci_state) + extra;
}

int virtio_vm_device_state(const struct vm *vm, unsigned int i,
			   const char **name, size_t *len)
{
	const struct virtio_vm *v = vm->virtio;
	size_t extra;
	int r = kind_state(v, i, &extra);

	*name = v->devs[i]->name;
	*len = r < 0 ? 0 : state_size(v, i, extra);
	return r;
}

int virtio_vm_save_device(struct vm *vm, unsigned int i, void *buf)
{
	struct virtio_vm *v = vm->virtio;
	struct virtio_device *vdev = v->devs[i];
	uint8_t *p = buf;
	size_t extra, common = virtio_device_state_size(vdev);
	int r = kind_state(v, i, &extra);

	if (r < 0)
		return r;
	pthread_mutex_lock(&vdev->lock);
	/* Drained; a queue the driver broke keeps its last chain until
	 * the reset, as does a device that needs one. */
	for (uint16_t q = 0; q < vdev->nr_vqs; q++)
		if (vdev->vqs[q].enabled && !vdev->vqs[q].broken &&
		    virtio_device_live(vdev) &&
		    vdev->vqs[q].last_avail != vdev->vqs[q].used_idx)
			r = hvm_set_error(
				-EBUSY,
				"cannot snapshot: %s queue %u has requests in flight",
				vdev->name, q);
	virtio_device_save(vdev, p);
	virtio_pci_save(&v->pci[i], (void *)(p + common));
	if (v->kinds[i] == VIRTIO_VM_BLK)
		virtio_blk_save(
			vdev,
			(void *)(p + common + sizeof(struct virtio_pci_state)));
	if (v->kinds[i] == VIRTIO_VM_VSOCK)
		virtio_vsock_save(
			vdev,
			(void *)(p + common + sizeof(struct virtio_pci_state)));
	if (v->kinds[i] == VIRTIO_VM_NET)
		virtio_net_save(
			vdev,
			(void *)(p + common + sizeof(struct virtio_pci_state)));
	if (v->kinds[i] == VIRTIO_VM_9P) {
		int used = virtio_9p_save(
			vdev,
			(void *)(p + common + sizeof(struct virtio_pci_state)));

		if (used < 0)
			r = used;
	}
	pthread_mutex_unlock(&vdev->lock);
	return r;
}

int virtio_vm_load_device(struct vm *vm, unsigned int i, const void *buf)
{
	struct virtio_vm *v = vm->virtio;
	struct virtio_device *vdev = v->devs[i];
	size_t extra, common = virtio_device_state_size(vdev);
	const uint8_t *data = buf;
	struct virtio_pci_state *ps;
	int r = kind_state(v, i, &extra);

	if (r < 0)
		return r;
	ps = malloc(sizeof(*ps));
	if (!ps)
		return hvm_set_error(-ENOMEM, "out of memory");
	memcpy(ps, data + common, sizeof(*ps));
	pthread_mutex_lock(&vdev->lock);
	/* The tag first: its length shapes the config space PCI checks. */
	if (v->kinds[i] == VIRTIO_VM_9P) {
		struct virtio_9p_state s9;

		memcpy(&s9, data + common + sizeof(*ps), sizeof(s9));
		r = virtio_9p_load(vdev, &s9);
	}
	if (r == 0)
		r = virtio_device_load(vdev, data, common);
	if (r == 0)
		r = virtio_pci_load(&v->pci[i], ps);
	if (r == 0 && v->kinds[i] == VIRTIO_VM_BLK) {
		struct virtio_blk_state bs;

		memcpy(&bs, data + common + sizeof(*ps), sizeof(bs));
		r = virtio_blk_load(vdev, &bs);
	}
	if (r == 0 && v->kinds[i] == VIRTIO_VM_VSOCK) {
		struct virtio_vsock_state vss;

		memcpy(&vss, data + common + sizeof(*ps), sizeof(vss));
		r = virtio_vsock_load(vdev, &vss);
	}
	if (r == 0 && v->kinds[i] == VIRTIO_VM_NET) {
		struct virtio_net_state ns;

		memcpy(&ns, data + common + sizeof(*ps), sizeof(ns));
		r = virtio_net_load(vdev, &ns);
	}
	pthread_mutex_unlock(&vdev->lock);
	free(ps);
	return r;
}

void virtio_vm_section_hint(const char *name, const void *state, size_t len,
			    char *buf, size_t size)
{
	struct virtio_net_state ns;
	size_t n;

	buf[0] = '\0';
	/* The net state ends the section, whatever the queue count. */
	if (strncmp(name, "virtio-net", 10) || len < sizeof(ns))
		return;
	memcpy(&ns, (const uint8_t *)state + len - sizeof(ns), sizeof(ns));
	n = strnlen(ns.tap, sizeof(ns.tap));
	if (n == 0 || n == sizeof(ns.tap))
		return;
	for (size_t i = 0; i < n; i++)
		if (ns.tap[i] <= ' ' || ns.tap[i] > '~')
			return;
	snprintf(buf, size, " (on tap %s: give --net tap=%s)", ns.tap, ns.tap);
}

void virtio_vm_restored(struct vm *vm)
{
	struct virtio_vm *v = vm->virtio;

	/* Look at what the driver queued before the snapshot: a kick per
	 * enabled queue of a live device (a spurious one finds nothing). */
	for (unsigned int i = 0; v && i < v->nr; i++)
		for (uint16_t q = 0; q < v->devs[i]->nr_vqs; q++)
			if (virtio_device_live(v->devs[i]) &&
			    v->devs[i]->vqs[q].enabled)
				virtio_device_kick(v->devs[i], q);
}
