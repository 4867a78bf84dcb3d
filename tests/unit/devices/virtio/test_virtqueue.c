// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The split virtqueue against rings crafted the way a hostile driver would:
 * every rule the device relies on is broken once and must be refused
 * without touching memory outside the fake guest RAM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <linux/virtio_ring.h>

#include "core/guest_memory.h"
#include "devices/virtio/virtqueue.h"

#define RAM_GPA 0x10000ull
#define RAM_SIZE 0x10000ull
#define DESC_GPA 0x10000ull
#define AVAIL_GPA 0x11000ull
#define USED_GPA 0x12000ull
#define BUF_GPA 0x14000ull
#define QSIZE 16

#define F_INDIRECT (1ull << VIRTIO_RING_F_INDIRECT_DESC)
#define F_EVENT_IDX (1ull << VIRTIO_RING_F_EVENT_IDX)

static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));

struct fixture {
	struct guest_memory mem;
	struct virtq vq;
	struct virtq_chain *chain;
	uint16_t avail_idx;
};

static uint8_t *host(uint64_t gpa)
{
	return ram + (gpa - RAM_GPA);
}

static void put16(uint64_t gpa, uint16_t v)
{
	memcpy(host(gpa), &v, 2);
}

static uint16_t get16(uint64_t gpa)
{
	uint16_t v;

	memcpy(&v, host(gpa), 2);
	return v;
}

static uint32_t get32(uint64_t gpa)
{
	uint32_t v;

	memcpy(&v, host(gpa), 4);
	return v;
}

static void set_desc_at(uint64_t table, uint16_t i, uint64_t addr, uint32_t len,
			uint16_t flags, uint16_t next)
{
	uint8_t *d = host(table + 16ull * i);

	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

static void set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	set_desc_at(DESC_GPA, i, addr, len, flags, next);
}

static void make_avail(struct fixture *f, uint16_t head)
{
	put16(AVAIL_GPA + 4 + 2 * (f->avail_idx % f->vq.size), head);
	f->avail_idx++;
	put16(AVAIL_GPA + 2, f->avail_idx);
}

static struct fixture *setup_with(uint64_t features, uint16_t cap)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	memset(ram, 0, sizeof(ram));
	assert_int_equal(
		guest_memory_add_region(&f->mem, RAM_GPA, RAM_SIZE, ram), 0);
	virtq_init(&f->vq, &f->mem, QSIZE);
	f->vq.desc_gpa = DESC_GPA;
	f->vq.avail_gpa = AVAIL_GPA;
	f->vq.used_gpa = USED_GPA;
	assert_int_equal(virtq_enable(&f->vq, features), 0);
	f->chain = virtq_chain_alloc(cap);
	assert_non_null(f->chain);
	return f;
}

static int setup(void **state)
{
	*state = setup_with(F_INDIRECT | F_EVENT_IDX, QSIZE);
	return 0;
}

static int setup_plain(void **state)
{
	*state = setup_with(0, QSIZE);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->chain);
	free(f);
	return 0;
}

/* Pop must fail, break the queue and keep failing until reset. */
static void assert_pop_rejected(struct fixture *f)
{
	assert_int_equal(virtq_pop(&f->vq, f->chain), -EINVAL);
	assert_true(f->vq.broken);
	assert_int_equal(virtq_pop(&f->vq, f->chain), -EIO);
}

static void test_simple_chain(void **state)
{
	struct fixture *f = *state;

	set_desc(3, BUF_GPA, 16, VRING_DESC_F_NEXT, 7);
	set_desc(7, BUF_GPA + 0x100, 512,
		 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	set_desc(1, BUF_GPA + 0x400, 1, VRING_DESC_F_WRITE, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 0);
	make_avail(f, 3);
	assert_true(virtq_has_avail(&f->vq));
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(f->chain->head, 3);
	assert_int_equal(f->chain->nr_out, 1);
	assert_int_equal(f->chain->nr_in, 2);
	assert_int_equal(f->chain->out_len, 16);
	assert_int_equal(f->chain->in_len, 513);
	assert_ptr_equal(f->chain->iov[0].iov_base, host(BUF_GPA));
	assert_ptr_equal(virtq_chain_in(f->chain)[0].iov_base,
			 host(BUF_GPA + 0x100));
	assert_int_equal(virtq_chain_in(f->chain)[1].iov_len, 1);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 0);

	virtq_push(&f->vq, 3, 100);
	assert_int_equal(get16(USED_GPA + 2), 1);
	assert_int_equal(get32(USED_GPA + 4), 3);
	assert_int_equal(get32(USED_GPA + 8), 100);
}

static void test_used_ring_wraps(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, 0, 0);
	for (unsigned int i = 0; i < 3 * QSIZE + 5; i++) {
		make_avail(f, 0);
		assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
		virtq_push(&f->vq, 0, i);
	}
	assert_int_equal(get16(USED_GPA + 2), 3 * QSIZE + 5);
	/* Entry (3 * 16 + 4) % 16 == 4 holds the last push. */
	assert_int_equal(get32(USED_GPA + 4 + 8 * 4 + 4), 3 * QSIZE + 4);
}

static void test_avail_index_wraps_16_bits(void **state)
{
	struct fixture *f = *state;

	/* A driver may start anywhere; only the distance matters. */
	f->vq.last_avail = 0xfffe;
	f->avail_idx = 0xfffe;
	set_desc(0, BUF_GPA, 8, 0, 0);
	for (int i = 0; i < 4; i++) {
		make_avail(f, 0);
		assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	}
	assert_int_equal(f->vq.last_avail, 2);
}

static void test_head_out_of_range(void **state)
{
	struct fixture *f = *state;

	make_avail(f, QSIZE);
	assert_pop_rejected(f);
}

static void test_next_out_of_range(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, VRING_DESC_F_NEXT, QSIZE);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_next_far_out_of_range(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, VRING_DESC_F_NEXT, 0xffff);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_loop(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(1, BUF_GPA, 8, VRING_DESC_F_NEXT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_self_loop_of_zero_length(void **state)
{
	struct fixture *f = *state;

	/* Zero-length descriptors must still count towards the bound. */
	set_desc(5, BUF_GPA, 0, VRING_DESC_F_NEXT, 5);
	make_avail(f, 5);
	assert_pop_rejected(f);
}

static void test_longest_chain_is_queue_size(void **state)
{
	struct fixture *f = *state;

	for (uint16_t i = 0; i < QSIZE; i++)
		set_desc(i, BUF_GPA + i, 1,
			 i + 1 < QSIZE ? VRING_DESC_F_NEXT : 0, i + 1);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(f->chain->nr_out, QSIZE);
	assert_int_equal(f->chain->out_len, QSIZE);
}

static void test_chain_beyond_capacity(void **state)
{
	struct fixture *f = *state;

	/* A device may allocate chains smaller than the queue. */
	free(f->chain);
	f->chain = virtq_chain_alloc(4);
	for (uint16_t i = 0; i < 5; i++)
		set_desc(i, BUF_GPA, 1, i < 4 ? VRING_DESC_F_NEXT : 0, i + 1);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_buffer_outside_ram(void **state)
{
	struct fixture *f = *state;

	set_desc(0, RAM_GPA + RAM_SIZE, 1, 0, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_buffer_runs_off_ram(void **state)
{
	struct fixture *f = *state;

	set_desc(0, RAM_GPA + RAM_SIZE - 8, 9, VRING_DESC_F_WRITE, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_buffer_ending_at_ram_end(void **state)
{
	struct fixture *f = *state;

	set_desc(0, RAM_GPA + RAM_SIZE - 8, 8, VRING_DESC_F_WRITE, 0);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
}

static void test_buffer_wraps_address_space(void **state)
{
	struct fixture *f = *state;

	set_desc(0, UINT64_MAX - 0xf, 0x20, 0, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_buffer_wraps_into_ram(void **state)
{
	struct fixture *f = *state;

	/* addr + len wraps to exactly RAM_GPA + 0x10: still refused. */
	set_desc(0, UINT64_MAX - RAM_GPA + 1, (uint32_t)(2 * RAM_GPA + 0x10), 0,
		 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_readable_after_writable(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(1, BUF_GPA + 8, 8, 0, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_zero_length_skipped(void **state)
{
	struct fixture *f = *state;

	/* Address is not even RAM: a zero-length buffer is never touched. */
	set_desc(0, BUF_GPA, 4, VRING_DESC_F_NEXT, 1);
	set_desc(1, 0xdead0000, 0, VRING_DESC_F_NEXT, 2);
	set_desc(2, BUF_GPA + 8, 4, VRING_DESC_F_WRITE, 0);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(f->chain->nr_out, 1);
	assert_int_equal(f->chain->nr_in, 1);
}

static void test_total_length_overflow(void **state)
{
	struct fixture *f = *state;
	const uint64_t big_gpa = 1ull << 40, big_size = 5ull << 30;
	/* 5 GiB of address space, never touched: only guest_ptr sees it. */
	void *big = mmap(NULL, big_size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (big == MAP_FAILED)
		skip();
	assert_int_equal(
		guest_memory_add_region(&f->mem, big_gpa, big_size, big), 0);
	set_desc(0, big_gpa, 0xffffffffu,
		 VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(1, big_gpa, 1, VRING_DESC_F_WRITE, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
	munmap(big, big_size);
}

static void test_avail_idx_jumps(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, 0, 0);
	put16(AVAIL_GPA + 2, QSIZE + 1);
	assert_false(virtq_has_avail(&f->vq));
	assert_true(f->vq.broken);
	assert_int_equal(virtq_pop(&f->vq, f->chain), -EIO);
}

static void test_avail_idx_exactly_full(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, 0, 0);
	for (int i = 0; i < QSIZE; i++)
		make_avail(f, 0);
	for (int i = 0; i < QSIZE; i++)
		assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 0);
}

static void test_reset_clears_broken(void **state)
{
	struct fixture *f = *state;

	make_avail(f, QSIZE);
	assert_pop_rejected(f);
	virtq_reset(&f->vq);
	assert_false(f->vq.broken);
	assert_false(f->vq.enabled);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 0);
}

/* ---- indirect descriptors ---- */

#define IND_GPA 0x13000ull

static void test_indirect_chain(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 2);
	set_desc_at(IND_GPA, 2, BUF_GPA + 0x100, 32, VRING_DESC_F_NEXT, 1);
	set_desc_at(IND_GPA, 1, BUF_GPA + 0x200, 1, VRING_DESC_F_WRITE, 0);
	set_desc(4, IND_GPA, 3 * 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 4);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(f->chain->head, 4);
	assert_int_equal(f->chain->nr_out, 2);
	assert_int_equal(f->chain->nr_in, 1);
	assert_int_equal(f->chain->out_len, 48);
	assert_ptr_equal(virtq_chain_in(f->chain)[0].iov_base,
			 host(BUF_GPA + 0x200));
}

static void test_direct_then_indirect(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, BUF_GPA + 0x100, 4, VRING_DESC_F_WRITE, 0);
	set_desc(0, BUF_GPA, 4, VRING_DESC_F_NEXT, 1);
	set_desc(1, IND_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(f->chain->nr_out, 1);
	assert_int_equal(f->chain->nr_in, 1);
}

static void test_indirect_unaligned_table(void **state)
{
	struct fixture *f = *state;

	/* No alignment rule for indirect tables: copied bytewise. */
	set_desc_at(IND_GPA + 3, 0, BUF_GPA, 4, 0, 0);
	set_desc(0, IND_GPA + 3, 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_int_equal(f->chain->out_len, 4);
}

static void test_indirect_not_negotiated(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, BUF_GPA, 16, 0, 0);
	set_desc(0, IND_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_bad_length(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, BUF_GPA, 16, 0, 0);
	set_desc(0, IND_GPA, 17, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_zero_length(void **state)
{
	struct fixture *f = *state;

	set_desc(0, IND_GPA, 0, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_table_outside_ram(void **state)
{
	struct fixture *f = *state;

	set_desc(0, RAM_GPA + RAM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_nested(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, IND_GPA + 0x100, 16, VRING_DESC_F_INDIRECT, 0);
	set_desc_at(IND_GPA + 0x100, 0, BUF_GPA, 16, 0, 0);
	set_desc(0, IND_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_with_next(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, BUF_GPA, 16, 0, 0);
	set_desc(0, IND_GPA, 16, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
	set_desc(1, BUF_GPA, 16, 0, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_next_beyond_table(void **state)
{
	struct fixture *f = *state;

	/* Index 2 is inside the direct queue but not inside the table. */
	set_desc_at(IND_GPA, 0, BUF_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc_at(IND_GPA, 1, BUF_GPA, 16, VRING_DESC_F_NEXT, 2);
	set_desc(0, IND_GPA, 2 * 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_loop(void **state)
{
	struct fixture *f = *state;

	set_desc_at(IND_GPA, 0, BUF_GPA, 0, VRING_DESC_F_NEXT, 1);
	set_desc_at(IND_GPA, 1, BUF_GPA, 0, VRING_DESC_F_NEXT, 0);
	set_desc(0, IND_GPA, 2 * 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_direction_order(void **state)
{
	struct fixture *f = *state;

	/* A writable direct descriptor, then readable ones in the table. */
	set_desc_at(IND_GPA, 0, BUF_GPA, 4, 0, 0);
	set_desc(0, BUF_GPA, 4, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(1, IND_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

static void test_indirect_huge_table_is_bounded(void **state)
{
	struct fixture *f = *state;
	const uint64_t table = BUF_GPA, len = RAM_GPA + RAM_SIZE - BUF_GPA;

	/*
	 * A 3072-entry table of zero-length entries chained in order: the
	 * walk must stop at the chain capacity, not walk the whole table.
	 */

	for (uint16_t i = 0; i < len / 16; i++)
		set_desc_at(table, i, 0, 0, VRING_DESC_F_NEXT, i + 1);
	set_desc(0, table, len, VRING_DESC_F_INDIRECT, 0);
	make_avail(f, 0);
	assert_pop_rejected(f);
}

/* ---- ring setup ---- */

static void test_enable_validation(void **state)
{
	struct fixture *f = *state;
	struct virtq *vq = &f->vq;

	virtq_reset(vq);
	assert_int_equal(virtq_set_size(vq, 0), -EINVAL);
	assert_int_equal(virtq_set_size(vq, 12), -EINVAL);
	assert_int_equal(virtq_set_size(vq, 32), -EINVAL); /* > max 16 */
	assert_int_equal(virtq_set_size(vq, 65536 + 8), -EINVAL);
	assert_int_equal(virtq_set_size(vq, 8), 0);

	vq->avail_gpa = AVAIL_GPA;
	vq->used_gpa = USED_GPA;
	vq->desc_gpa = DESC_GPA + 8; /* not 16-aligned */
	assert_int_equal(virtq_enable(vq, 0), -EINVAL);
	vq->desc_gpa = RAM_GPA + RAM_SIZE - 16 * 8 + 16; /* runs off RAM */
	assert_int_equal(virtq_enable(vq, 0), -EINVAL);
	vq->desc_gpa = DESC_GPA;
	vq->avail_gpa = AVAIL_GPA + 1;
	assert_int_equal(virtq_enable(vq, 0), -EINVAL);
	vq->avail_gpa = AVAIL_GPA;
	vq->used_gpa = USED_GPA + 2;
	assert_int_equal(virtq_enable(vq, 0), -EINVAL);
	/* used: 6 + 8 * 8 = 70 bytes, must all be RAM */
	vq->used_gpa = RAM_GPA + RAM_SIZE - 68;
	assert_int_equal(virtq_enable(vq, 0), -EINVAL);
	vq->used_gpa = UINT64_MAX - 3;
	assert_int_equal(virtq_enable(vq, 0), -EINVAL);
	assert_false(vq->enabled);
	vq->used_gpa = RAM_GPA + RAM_SIZE - 72;
	assert_int_equal(virtq_enable(vq, 0), 0);
	assert_true(vq->enabled);
	assert_int_equal(virtq_set_size(vq, 4), -EBUSY);
}

static void test_disabled_queue_does_nothing(void **state)
{
	struct fixture *f = *state;

	virtq_reset(&f->vq);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 0);
	virtq_push(&f->vq, 0, 0);
	assert_false(virtq_should_notify(&f->vq));
}

/* ---- notifications ---- */

static void test_need_event_math(void **state)
{
	/* The driver asked to hear when used idx passes 5. */
	assert_true(virtq_need_event(5, 6, 5));
	assert_true(virtq_need_event(5, 10, 0));
	assert_false(virtq_need_event(5, 5, 0));
	assert_false(virtq_need_event(5, 12, 6));
	/* Across the 16-bit wrap. */
	assert_true(virtq_need_event(0xffff, 0x0001, 0xfffe));
	assert_true(virtq_need_event(0xfffe, 0x0000, 0xfffd));
	assert_false(virtq_need_event(0x0002, 0x0001, 0xfffe));
	assert_false(virtq_need_event(7, 7, 7)); /* nothing new */
}

static void test_should_notify_event_idx(void **state)
{
	struct fixture *f = *state;
	uint64_t used_event = AVAIL_GPA + 4 + 2 * QSIZE;

	set_desc(0, BUF_GPA, 8, 0, 0);
	put16(used_event, 1);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	virtq_push(&f->vq, 0, 0);
	/* First decision always notifies. */
	assert_true(virtq_should_notify(&f->vq));
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	virtq_push(&f->vq, 0, 0); /* used idx 1 -> 2, crosses event 1 */
	assert_true(virtq_should_notify(&f->vq));
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	virtq_push(&f->vq, 0, 0); /* 2 -> 3, event still 1 */
	assert_false(virtq_should_notify(&f->vq));
	put16(used_event, 3);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	virtq_push(&f->vq, 0, 0); /* 3 -> 4 crosses 3 */
	assert_true(virtq_should_notify(&f->vq));
}

static void test_should_notify_flags(void **state)
{
	struct fixture *f = *state;

	set_desc(0, BUF_GPA, 8, 0, 0);
	make_avail(f, 0);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	virtq_push(&f->vq, 0, 0);
	assert_true(virtq_should_notify(&f->vq));
	put16(AVAIL_GPA, VRING_AVAIL_F_NO_INTERRUPT);
	assert_false(virtq_should_notify(&f->vq));
}

static void test_enable_notify_event_idx(void **state)
{
	struct fixture *f = *state;
	uint64_t avail_event = USED_GPA + 4 + 8 * QSIZE;

	set_desc(0, BUF_GPA, 8, 0, 0);
	make_avail(f, 0);
	make_avail(f, 0);
	virtq_disable_notify(&f->vq);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_true(virtq_enable_notify(&f->vq)); /* one still pending */
	assert_int_equal(get16(avail_event), 1);
	assert_int_equal(virtq_pop(&f->vq, f->chain), 1);
	assert_false(virtq_enable_notify(&f->vq));
	assert_int_equal(get16(avail_event), 2);
}

static void test_enable_notify_flags(void **state)
{
	struct fixture *f = *state;

	virtq_disable_notify(&f->vq);
	assert_int_equal(get16(USED_GPA), VRING_USED_F_NO_NOTIFY);
	assert_false(virtq_enable_notify(&f->vq));
	assert_int_equal(get16(USED_GPA), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TP(fn) cmocka_unit_test_setup_teardown(fn, setup_plain, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_simple_chain),
		T(test_used_ring_wraps),
		T(test_avail_index_wraps_16_bits),
		T(test_head_out_of_range),
		T(test_next_out_of_range),
		T(test_next_far_out_of_range),
		T(test_loop),
		T(test_self_loop_of_zero_length),
		T(test_longest_chain_is_queue_size),
		T(test_chain_beyond_capacity),
		T(test_buffer_outside_ram),
		T(test_buffer_runs_off_ram),
		T(test_buffer_ending_at_ram_end),
		T(test_buffer_wraps_address_space),
		T(test_buffer_wraps_into_ram),
		T(test_readable_after_writable),
		T(test_zero_length_skipped),
		T(test_total_length_overflow),
		T(test_avail_idx_jumps),
		T(test_avail_idx_exactly_full),
		T(test_reset_clears_broken),
		T(test_indirect_chain),
		T(test_direct_then_indirect),
		T(test_indirect_unaligned_table),
		TP(test_indirect_not_negotiated),
		T(test_indirect_bad_length),
		T(test_indirect_zero_length),
		T(test_indirect_table_outside_ram),
		T(test_indirect_nested),
		T(test_indirect_with_next),
		T(test_indirect_next_beyond_table),
		T(test_indirect_loop),
		T(test_indirect_direction_order),
		T(test_indirect_huge_table_is_bounded),
		T(test_enable_validation),
		T(test_disabled_queue_does_nothing),
		T(test_need_event_math),
		T(test_should_notify_event_idx),
		TP(test_should_notify_flags),
		T(test_enable_notify_event_idx),
		TP(test_enable_notify_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
