// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/virtqueue.h"

/* Offsets inside the avail and used areas. */
#define AVAIL_IDX 2
#define AVAIL_RING 4
#define USED_IDX 2
#define USED_RING 4

/* One descriptor, copied out of guest memory. */
struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/*
 * The rings are shared with guest CPUs. 16-bit fields are naturally aligned
 * (checked at enable), so relaxed atomic accesses are single, untorn loads
 * and stores that the compiler may neither repeat nor split.
 */
static uint16_t load16(const uint8_t *p)
{
	return le16toh(__atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED));
}

static uint16_t load16_acquire(const uint8_t *p)
{
	return le16toh(__atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE));
}

static void store16(uint8_t *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, htole16(v), __ATOMIC_RELAXED);
}

static void store16_release(uint8_t *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, htole16(v), __ATOMIC_RELEASE);
}

static void store32(uint8_t *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, htole32(v), __ATOMIC_RELAXED);
}

/*
 * Copy a descriptor once. Indirect tables need not be 16-byte aligned, so
 * copy bytes and then stop the compiler from re-reading guest memory in
 * place of the local copy (that would be a double fetch the guest could
 * race): every check below is made on, and every use made of, the copy.
 */
static struct desc read_desc(const uint8_t *table, uint32_t idx)
{
	uint8_t raw[VIRTQ_DESC_SIZE];
	struct desc d;
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;

	memcpy(raw, table + (size_t)idx * VIRTQ_DESC_SIZE, sizeof(raw));
	__asm__ __volatile__("" : : : "memory");
	memcpy(&addr, raw, 8);
	memcpy(&len, raw + 8, 4);
	memcpy(&flags, raw + 12, 2);
	memcpy(&next, raw + 14, 2);
	d.addr = le64toh(addr);
	d.len = le32toh(len);
	d.flags = le16toh(flags);
	d.next = le16toh(next);
	return d;
}

struct virtq_chain *virtq_chain_alloc(uint16_t cap)
{
	struct virtq_chain *chain;

	chain = calloc(1, sizeof(*chain) + (size_t)cap * sizeof(struct iovec));
	if (chain)
		chain->iov_cap = cap;
	return chain;
}

void virtq_init(struct virtq *vq, const struct guest_memory *mem,
		uint16_t max_size)
{
	*vq = (struct virtq){ .mem = mem, .max_size = max_size };
	virtq_reset(vq);
}

void virtq_reset(struct virtq *vq)
{
	const struct guest_memory *mem = vq->mem;
	uint16_t max_size = vq->max_size;

	*vq = (struct virtq){
		.mem = mem,
		.max_size = max_size,
		.size = max_size,
	};
}

int virtq_set_size(struct virtq *vq, uint32_t size)
{
	if (vq->enabled)
		return -EBUSY;
	if (size == 0 || size > vq->max_size || (size & (size - 1)))
		return -EINVAL;
	vq->size = (uint16_t)size;
	return 0;
}

int virtq_error(struct virtq *vq, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The device logs it (rate-limited): a guest must not flood logs. */
	vq->broken = true;
	return hvm_set_error(-EINVAL, "virtqueue: %s", msg);
}

static void *ring_area(struct virtq *vq, const char *what, uint64_t gpa,
		       uint64_t len, uint64_t align)
{
	void *p;

	if (gpa & (align - 1)) {
		hvm_set_error(
			-EINVAL,
			"virtqueue %s area at 0x%llx is not %llu-byte aligned",
			what, (unsigned long long)gpa,
			(unsigned long long)align);
		return NULL;
	}
	p = guest_ptr(vq->mem, gpa, len);
	if (!p)
		hvm_set_error(
			-EINVAL,
			"virtqueue %s area 0x%llx+0x%llx is not guest RAM",
			what, (unsigned long long)gpa, (unsigned long long)len);
	return p;
}

int virtq_enable(struct virtq *vq, uint64_t features)
{
	if (vq->size == 0 || vq->size > vq->max_size ||
	    (vq->size & (vq->size - 1)))
		return hvm_set_error(-EINVAL, "virtqueue size %u is invalid",
				     vq->size);
	vq->desc = ring_area(vq, "descriptor", vq->desc_gpa,
			     virtq_desc_bytes(vq->size), VIRTQ_DESC_ALIGN);
	vq->avail = ring_area(vq, "available", vq->avail_gpa,
			      virtq_avail_bytes(vq->size), VIRTQ_AVAIL_ALIGN);
	vq->used = ring_area(vq, "used", vq->used_gpa,
			     virtq_used_bytes(vq->size), VIRTQ_USED_ALIGN);
	if (!vq->desc || !vq->avail || !vq->used) {
		vq->desc = vq->avail = vq->used = NULL;
		return -EINVAL;
	}
	vq->event_idx = features & (1ull << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = features & (1ull << VIRTIO_RING_F_INDIRECT_DESC);
	vq->last_avail = 0;
	vq->used_idx = 0;
	vq->signalled_used_valid = false;
	vq->broken = false;
	vq->enabled = true;
	return 0;
}

/* How many chains the driver has made available; -EINVAL when bogus. */
static int avail_count(struct virtq *vq)
{
	uint16_t idx = load16_acquire(vq->avail + AVAIL_IDX);
	uint16_t pending = (uint16_t)(idx - vq->last_avail);

	if (pending > vq->size)
		return virtq_error(
			vq,
			"avail idx %u is %u ahead of %u, more than queue size %u",
			idx, pending, vq->last_avail, vq->size);
	return pending;
}

bool virtq_has_avail(struct virtq *vq)
{
	if (!vq->enabled || vq->broken)
		return false;
	return avail_count(vq) > 0;
}

/* State of one chain walk. */
struct walk {
	struct virtq_chain *chain;
	uint32_t buffers; /* descriptors seen, including zero-length ones */
	bool seen_writable;
};

/* Add one buffer of a chain after validating it against RAM and order. */
static int add_buffer(struct virtq *vq, struct walk *w, const struct desc *d)
{
	struct virtq_chain *chain = w->chain;
	bool writable = d->flags & VRING_DESC_F_WRITE;
	uint32_t *total = writable ? &chain->in_len : &chain->out_len;
	void *hva;

	/* Bounds the work per chain, whatever the tables look like. */
	if (++w->buffers > chain->iov_cap)
		return virtq_error(vq, "chain %u: more than %u buffers",
				   chain->head, chain->iov_cap);
	if (!writable && w->seen_writable)
		return virtq_error(
			vq,
			"chain %u: readable descriptor after a writable one",
			chain->head);
	w->seen_writable |= writable;
	/* Zero-length buffers carry nothing: accept and skip them. */
	if (d->len == 0)
		return 0;
	hva = guest_ptr(vq->mem, d->addr, d->len);
	if (!hva)
		return virtq_error(
			vq, "chain %u: buffer 0x%llx+0x%x is not RAM",
			chain->head, (unsigned long long)d->addr, d->len);
	if (__builtin_add_overflow(*total, d->len, total))
		return virtq_error(vq, "chain %u: total length exceeds 4 GiB",
				   chain->head);
	chain->iov[chain->nr_out + chain->nr_in] =
		(struct iovec){ .iov_base = hva, .iov_len = d->len };
	if (writable)
		chain->nr_in++;
	else
		chain->nr_out++;
	return 0;
}

/* Walk an indirect table (virtio 1.x 2.7.5.3). */
static int walk_indirect(struct virtq *vq, struct walk *w,
			 const struct desc *ind)
{
	struct virtq_chain *chain = w->chain;
	const uint8_t *table;
	uint32_t n, idx = 0, count = 0;
	int ret;

	if (!vq->indirect)
		return virtq_error(
			vq,
			"chain %u: indirect descriptor without INDIRECT_DESC",
			chain->head);
	if (ind->flags & VRING_DESC_F_NEXT)
		return virtq_error(
			vq, "chain %u: indirect descriptor with NEXT set",
			chain->head);
	if (ind->len == 0 || ind->len % VIRTQ_DESC_SIZE)
		return virtq_error(
			vq,
			"chain %u: indirect table length %u is not a non-zero multiple of 16",
			chain->head, ind->len);
	table = guest_ptr(vq->mem, ind->addr, ind->len);
	if (!table)
		return virtq_error(
			vq, "chain %u: indirect table 0x%llx+0x%x is not RAM",
			chain->head, (unsigned long long)ind->addr, ind->len);
	n = ind->len / VIRTQ_DESC_SIZE;
	for (;;) {
		struct desc d = read_desc(table, idx);

		/* A chain visiting more entries than the table has loops. */
		if (++count > n)
			return virtq_error(vq, "chain %u: indirect chain loops",
					   chain->head);
		if (d.flags & VRING_DESC_F_INDIRECT)
			return virtq_error(
				vq, "chain %u: nested indirect descriptor",
				chain->head);
		ret = add_buffer(vq, w, &d);
		if (ret)
			return ret;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		if (d.next >= n)
			return virtq_error(
				vq,
				"chain %u: indirect next %u beyond table of %u",
				chain->head, d.next, n);
		idx = d.next;
	}
}

int virtq_pop(struct virtq *vq, struct virtq_chain *chain)
{
	struct walk w = { .chain = chain };
	uint32_t count = 0;
	uint16_t head, idx;
	int pending, ret;

	if (!vq->enabled)
		return 0;
	if (vq->broken)
		return -EIO;
	pending = avail_count(vq);
	if (pending <= 0)
		return pending;
	/* avail->idx was loaded with acquire: the ring entry is visible. */
	head = load16(vq->avail + AVAIL_RING +
		      2u * (vq->last_avail & (vq->size - 1)));
	if (head >= vq->size)
		return virtq_error(vq, "avail ring head %u >= queue size %u",
				   head, vq->size);
	vq->last_avail++;

	chain->head = head;
	chain->nr_out = chain->nr_in = 0;
	chain->out_len = chain->in_len = 0;
	idx = head;
	for (;;) {
		struct desc d = read_desc(vq->desc, idx);

		if (++count > vq->size)
			return virtq_error(vq, "chain %u loops", head);
		if (d.flags & VRING_DESC_F_INDIRECT) {
			ret = walk_indirect(vq, &w, &d);
			if (ret)
				return ret;
			break;
		}
		ret = add_buffer(vq, &w, &d);
		if (ret)
			return ret;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (d.next >= vq->size)
			return virtq_error(vq,
					   "chain %u: next %u >= queue size %u",
					   head, d.next, vq->size);
		idx = d.next;
	}
	return 1;
}

void virtq_unpop(struct virtq *vq)
{
	vq->last_avail--;
}

void virtq_push(struct virtq *vq, uint16_t head, uint32_t written)
{
	uint8_t *elem;

	if (!vq->enabled)
		return;
	elem = vq->used + USED_RING + 8u * (vq->used_idx & (vq->size - 1));
	store32(elem, head);
	store32(elem + 4, written);
	vq->used_idx++;
	/* The element must be visible before the index that publishes it. */
	store16_release(vq->used + USED_IDX, vq->used_idx);
}

bool virtq_should_notify(struct virtq *vq)
{
	uint16_t old, event;

	if (!vq->enabled)
		return false;
	/*
	 * Order our used->idx store before reading the driver's suppression
	 * state, pairing with the driver's barrier between publishing its
	 * suppression and re-reading used->idx (virtio 1.x 2.7.7).
	 */
	atomic_thread_fence(memory_order_seq_cst);
	if (!vq->event_idx)
		return !(load16(vq->avail) & VRING_AVAIL_F_NO_INTERRUPT);
	old = vq->signalled_used;
	vq->signalled_used = vq->used_idx;
	if (!vq->signalled_used_valid) {
		vq->signalled_used_valid = true;
		return true;
	}
	event = load16(vq->avail + AVAIL_RING + 2u * vq->size);
	return virtq_need_event(event, vq->used_idx, old);
}

void virtq_disable_notify(struct virtq *vq)
{
	if (!vq->enabled || vq->event_idx)
		return; /* with EVENT_IDX, avail_event is simply not advanced */
	store16(vq->used, load16(vq->used) | VRING_USED_F_NO_NOTIFY);
}

bool virtq_enable_notify(struct virtq *vq)
{
	if (!vq->enabled || vq->broken)
		return false;
	if (vq->event_idx)
		store16(vq->used + USED_RING + 8u * vq->size, vq->last_avail);
	else
		store16(vq->used, load16(vq->used) & ~VRING_USED_F_NO_NOTIFY);
	/* Publish the request before looking for buffers added meanwhile. */
	atomic_thread_fence(memory_order_seq_cst);
	return avail_count(vq) > 0;
}
