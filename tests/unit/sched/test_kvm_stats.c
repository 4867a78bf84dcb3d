// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The binary-statistics reader against crafted images (every corner a
 * hostile or newer kernel could produce) and against images recorded from a
 * real VM and vCPU on a development host (data/, see
 * tests/tools/record_stats_images.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/kvm.h>

#include "sched/kvm_stats.h"

#define NAME_SIZE 48
#define MAX_STATS 8

struct image_stat {
	const char *name;
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t bucket_size;
	uint64_t values[40];
};

struct image {
	struct kvm_stats_header hdr;
	size_t nr;
	struct image_stat stats[MAX_STATS];
	size_t truncate_to; /* 0: full file */
};

/*
 * Lay out an image the way KVM does: header, id, descriptors, data. Returns
 * a memfd holding it.
 */
static int image_fd(struct image *img)
{
	size_t stride = sizeof(struct kvm_stats_desc) + NAME_SIZE;
	size_t id_off = sizeof(struct kvm_stats_header);
	size_t desc_off = id_off + NAME_SIZE;
	size_t data_off = desc_off + stride * img->nr;
	size_t data_len = 0, total;
	uint8_t *buf;
	int fd;

	for (size_t i = 0; i < img->nr; i++)
		data_len += img->stats[i].size * sizeof(uint64_t);
	total = data_off + data_len;
	buf = calloc(1, total);
	assert_non_null(buf);

	if (!img->hdr.name_size) {
		img->hdr.name_size = NAME_SIZE;
		img->hdr.num_desc = (uint32_t)img->nr;
		img->hdr.id_offset = (uint32_t)id_off;
		img->hdr.desc_offset = (uint32_t)desc_off;
		img->hdr.data_offset = (uint32_t)data_off;
	}
	memcpy(buf, &img->hdr, sizeof(img->hdr));
	strcpy((char *)buf + id_off, "kvm-test/vcpu-0");
	for (size_t i = 0, data = 0; i < img->nr; i++) {
		const struct image_stat *s = &img->stats[i];
		struct kvm_stats_desc d = {
			.flags = s->flags,
			.exponent = s->exponent,
			.size = s->size,
			.offset = (uint32_t)data,
			.bucket_size = s->bucket_size,
		};
		uint8_t *p = buf + desc_off + i * stride;

		memcpy(p, &d, sizeof(d));
		strncpy((char *)p + sizeof(d), s->name, NAME_SIZE);
		memcpy(buf + data_off + data, s->values,
		       s->size * sizeof(uint64_t));
		data += s->size * sizeof(uint64_t);
	}

	fd = memfd_create("stats", 0);
	assert_true(fd >= 0);
	if (img->truncate_to)
		total = img->truncate_to;
	assert_int_equal(write(fd, buf, total), (ssize_t)total);
	free(buf);
	return fd;
}

#define NS (KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)

static struct image typical_image(void)
{
	struct image img = {
		.nr = 5,
		.stats = {
			{ "exits", KVM_STATS_TYPE_CUMULATIVE, 0, 1, 0, { 42 } },
			{ "halt_poll_success_ns", KVM_STATS_TYPE_CUMULATIVE | NS,
			  -9, 1, 0, { 1000 } },
			{ "halt_wait_hist", KVM_STATS_TYPE_LOG_HIST | NS, -9, 32,
			  0, { 0, 1, 2, 3 } },
			{ "blocking", KVM_STATS_TYPE_INSTANT |
					      KVM_STATS_UNIT_BOOLEAN,
			  0, 1, 0, { 1 } },
			{ "lin", KVM_STATS_TYPE_LINEAR_HIST, 0, 4, 16,
			  { 5, 6, 7, 8 } },
		},
	};
	return img;
}

static void test_parses_typical_image(void **state)
{
	struct image img = typical_image();
	struct kvm_stats st;
	const struct kvm_stat_desc *d;
	uint64_t *v;

	assert_int_equal(kvm_stats_open(&st, image_fd(&img)), 0);
	assert_string_equal(st.id, "kvm-test/vcpu-0");
	assert_int_equal(st.nr_descs, 5);
	assert_int_equal(st.nr_values, 1 + 1 + 32 + 1 + 4);

	d = kvm_stats_find(&st, "halt_wait_hist");
	assert_non_null(d);
	assert_int_equal(d->type, KVM_STAT_LOG_HIST);
	assert_int_equal(d->unit, KVM_STAT_UNIT_SECONDS);
	assert_int_equal(d->exponent, -9);
	assert_string_equal(kvm_stat_unit_name(d), "ns");
	assert_int_equal(d->size, 32);
	d = kvm_stats_find(&st, "lin");
	assert_int_equal(d->type, KVM_STAT_LINEAR_HIST);
	assert_int_equal(d->bucket_size, 16);
	assert_int_equal(kvm_stats_find(&st, "blocking")->unit,
			 KVM_STAT_UNIT_BOOLEAN);
	assert_null(kvm_stats_find(&st, "nonexistent"));

	v = calloc(st.nr_values, sizeof(*v));
	assert_int_equal(kvm_stats_read(&st, v), 0);
	assert_int_equal(kvm_stats_get(&st, v, "exits", 0, 0), 42);
	assert_int_equal(kvm_stats_get(&st, v, "halt_poll_success_ns", 0, 0),
			 1000);
	assert_int_equal(kvm_stats_get(&st, v, "halt_wait_hist", 3, 0), 3);
	assert_int_equal(kvm_stats_get(&st, v, "lin", 3, 0), 8);
	/* Out-of-range bucket and missing names give the default. */
	assert_int_equal(kvm_stats_get(&st, v, "lin", 4, 99), 99);
	assert_int_equal(kvm_stats_get(&st, v, "nope", 0, 7), 7);
	free(v);
	kvm_stats_close(&st);
}

static void test_delta_per_type(void **state)
{
	struct image img = typical_image();
	struct kvm_stats st;
	uint64_t *a, *b, *delta;
	const struct kvm_stat_desc *hist, *exits, *blocking;

	assert_int_equal(kvm_stats_open(&st, image_fd(&img)), 0);
	a = calloc(st.nr_values, sizeof(*a));
	b = calloc(st.nr_values, sizeof(*b));
	delta = calloc(st.nr_values, sizeof(*delta));
	assert_int_equal(kvm_stats_read(&st, a), 0);
	memcpy(b, a, st.nr_values * sizeof(*b));
	exits = kvm_stats_find(&st, "exits");
	hist = kvm_stats_find(&st, "halt_wait_hist");
	blocking = kvm_stats_find(&st, "blocking");
	b[exits->index] = 50;
	b[hist->index + 2] = 10;
	b[blocking->index] = 0;
	/* A counter going backwards (reset) must not wrap to 2^64 - n. */
	b[hist->index + 3] = 1;

	kvm_stats_delta(&st, a, b, delta);
	assert_int_equal(delta[exits->index], 8);
	assert_int_equal(delta[hist->index + 2], 8);
	assert_int_equal(delta[hist->index + 3], 0);
	assert_int_equal(delta[hist->index + 1], 0);
	assert_int_equal(delta[blocking->index], 0); /* instant: new value */
	free(a);
	free(b);
	free(delta);
	kvm_stats_close(&st);
}

static void test_unknown_type_skipped(void **state)
{
	struct image img = typical_image();
	struct kvm_stats st;
	uint64_t v[64];

	/* Type 0xF does not exist (yet): skipped, the rest still read. */
	img.stats[1].flags = 0xF | NS;
	assert_int_equal(kvm_stats_open(&st, image_fd(&img)), 0);
	assert_int_equal(st.nr_descs, 4);
	assert_int_equal(st.nr_skipped, 1);
	assert_null(kvm_stats_find(&st, "halt_poll_success_ns"));
	assert_int_equal(kvm_stats_read(&st, v), 0);
	assert_int_equal(kvm_stats_get(&st, v, "exits", 0, 0), 42);
	assert_int_equal(kvm_stats_get(&st, v, "lin", 0, 0), 5);
	kvm_stats_close(&st);
}

static void test_unknown_unit_kept(void **state)
{
	struct image img = typical_image();
	struct kvm_stats st;

	img.stats[0].flags = KVM_STATS_TYPE_CUMULATIVE | (0xE << 4);
	assert_int_equal(kvm_stats_open(&st, image_fd(&img)), 0);
	assert_int_equal(kvm_stats_find(&st, "exits")->unit,
			 KVM_STAT_UNIT_UNKNOWN);
	kvm_stats_close(&st);
}

static void expect_rejected(struct image *img, int err)
{
	struct kvm_stats st;

	assert_int_equal(kvm_stats_open(&st, image_fd(img)), err);
	/* Nothing left behind: a closed, empty reader. */
	assert_int_equal(st.fd, -1);
	assert_null(st.descs);
}

static void test_truncated_files_rejected(void **state)
{
	struct image img = typical_image();
	struct image probe = typical_image();
	size_t full;
	int fd = image_fd(&probe);

	full = (size_t)lseek(fd, 0, SEEK_END);
	close(fd);
	/* Cut inside the header, the id, the descriptors and the data. */
	size_t cuts[] = { 1, sizeof(struct kvm_stats_header) + 4,
			  sizeof(struct kvm_stats_header) + NAME_SIZE + 10,
			  full - 8 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		img = typical_image();
		img.truncate_to = cuts[i];
		expect_rejected(&img, -EIO);
	}
	img = typical_image();
	img.truncate_to = 0;
}

static void test_empty_file_rejected(void **state)
{
	struct kvm_stats st;
	int fd = memfd_create("empty", 0);

	assert_int_equal(kvm_stats_open(&st, fd), -EIO);
}

static void test_absurd_header_rejected(void **state)
{
	struct image img;

	img = typical_image();
	img.hdr = (struct kvm_stats_header){ .name_size = 0, .num_desc = 5 };
	/* name_size 0 means "fill in" for image_fd; force a bad one below. */
	img.hdr.name_size = KVM_STATS_MAX_NAME + 1;
	img.hdr.id_offset = 24;
	expect_rejected(&img, -EINVAL);

	img = typical_image();
	close(image_fd(&img)); /* fills in the header */
	img.hdr.num_desc = 0x7fffffff;
	expect_rejected(&img, -EINVAL);

	/* Offsets pointing far beyond the end of the file. */
	img = typical_image();
	close(image_fd(&img));
	img.hdr.desc_offset = 0xfffffff0;
	expect_rejected(&img, -EIO);
	img = typical_image();
	close(image_fd(&img));
	img.hdr.data_offset = 0xfffffff0;
	expect_rejected(&img, -EIO);
	img = typical_image();
	close(image_fd(&img));
	img.hdr.id_offset = 0xffffffff;
	expect_rejected(&img, -EIO);
}

static void test_bad_descriptors_rejected(void **state)
{
	struct image img;

	/* A counter claiming more than one value. */
	img = typical_image();
	img.stats[0].size = 2;
	expect_rejected(&img, -EINVAL);

	/* A histogram with no buckets. */
	img = typical_image();
	img.stats[4].size = 0;
	expect_rejected(&img, -EINVAL);

	/* A name that fills its field with no NUL. */
	img = typical_image();
	img.stats[0].name =
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	expect_rejected(&img, -EINVAL);

	/* An empty name, and one with control characters. */
	img = typical_image();
	img.stats[2].name = "";
	expect_rejected(&img, -EINVAL);
	img = typical_image();
	img.stats[2].name = "bad\nname";
	expect_rejected(&img, -EINVAL);
}

static void test_value_offset_beyond_limit_rejected(void **state)
{
	struct image img = typical_image();
	struct kvm_stats_desc d;
	size_t stride = sizeof(d) + NAME_SIZE;
	size_t desc_off = sizeof(struct kvm_stats_header) + NAME_SIZE;
	struct kvm_stats st;
	int fd = image_fd(&img);

	/* Patch descriptor 0's data offset to 4 GiB - 8. */
	assert_int_equal(pread(fd, &d, sizeof(d), (off_t)desc_off),
			 (ssize_t)sizeof(d));
	d.offset = 0xfffffff8;
	assert_int_equal(pwrite(fd, &d, sizeof(d), (off_t)desc_off),
			 (ssize_t)sizeof(d));
	assert_int_equal(kvm_stats_open(&st, fd), -EINVAL);
	(void)stride;
}

static void test_zero_stats_is_valid(void **state)
{
	struct image img = { .nr = 0 };
	struct kvm_stats st;
	uint64_t v[1];

	assert_int_equal(kvm_stats_open(&st, image_fd(&img)), 0);
	assert_int_equal(st.nr_descs, 0);
	assert_int_equal(kvm_stats_read(&st, v), 0);
	kvm_stats_close(&st);
}

static void test_not_a_stats_file(void **state)
{
	struct kvm_stats st;
	int fd = open("/dev/null", O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(kvm_stats_open(&st, fd), -EIO);
}

/* ---- images recorded from a real VM and vCPU ------------------------ */

static int open_recorded(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", STATS_DATA_DIR, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("recorded image %s missing", path);
	return fd;
}

static void test_recorded_vcpu_image(void **state)
{
	struct kvm_stats st;
	const struct kvm_stat_desc *d;
	uint64_t *v;

	assert_int_equal(kvm_stats_open(&st, open_recorded("vcpu-stats.bin")),
			 0);
	assert_int_equal(st.nr_skipped, 0);
	assert_true(st.nr_descs >= 40);
	assert_non_null(strstr(st.id, "vcpu-0"));

	d = kvm_stats_find(&st, "halt_poll_success_ns");
	assert_non_null(d);
	assert_int_equal(d->type, KVM_STAT_CUMULATIVE);
	assert_int_equal(d->unit, KVM_STAT_UNIT_SECONDS);
	assert_int_equal(d->exponent, -9);

	d = kvm_stats_find(&st, "halt_wait_hist");
	assert_non_null(d);
	assert_int_equal(d->type, KVM_STAT_LOG_HIST);
	assert_int_equal(d->size, 32);
	assert_string_equal(kvm_stat_unit_name(d), "ns");

	d = kvm_stats_find(&st, "halt_successful_poll");
	assert_non_null(d);
	assert_int_equal(d->type, KVM_STAT_CUMULATIVE);
	assert_int_equal(d->unit, KVM_STAT_UNIT_NONE);
	assert_non_null(kvm_stats_find(&st, "halt_attempted_poll"));
	assert_non_null(kvm_stats_find(&st, "directed_yield_successful"));

	d = kvm_stats_find(&st, "blocking");
	assert_non_null(d);
	assert_int_equal(d->type, KVM_STAT_INSTANT);
	assert_int_equal(d->unit, KVM_STAT_UNIT_BOOLEAN);

	/*
	 * The recording ran a port write and a hlt: both exits were counted
	 * (this nested host emulates real mode, so the port write shows up
	 * as instruction emulation rather than in io_exits).
	 */
	v = calloc(st.nr_values, sizeof(*v));
	assert_int_equal(kvm_stats_read(&st, v), 0);
	assert_true(kvm_stats_get(&st, v, "exits", 0, 0) >= 2);
	assert_true(kvm_stats_get(&st, v, "halt_exits", 0, 0) >= 1);
	free(v);
	kvm_stats_close(&st);
}

static void test_recorded_vm_image(void **state)
{
	struct kvm_stats st;
	const struct kvm_stat_desc *d;

	assert_int_equal(kvm_stats_open(&st, open_recorded("vm-stats.bin")), 0);
	assert_int_equal(st.nr_skipped, 0);
	assert_true(st.nr_descs >= 10);
	d = kvm_stats_find(&st, "max_mmu_page_hash_collisions");
	if (d)
		assert_int_equal(d->type, KVM_STAT_PEAK);
	d = kvm_stats_find(&st, "remote_tlb_flush");
	assert_non_null(d);
	assert_int_equal(d->type, KVM_STAT_CUMULATIVE);
	kvm_stats_close(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_typical_image),
		cmocka_unit_test(test_delta_per_type),
		cmocka_unit_test(test_unknown_type_skipped),
		cmocka_unit_test(test_unknown_unit_kept),
		cmocka_unit_test(test_truncated_files_rejected),
		cmocka_unit_test(test_empty_file_rejected),
		cmocka_unit_test(test_absurd_header_rejected),
		cmocka_unit_test(test_bad_descriptors_rejected),
		cmocka_unit_test(test_value_offset_beyond_limit_rejected),
		cmocka_unit_test(test_zero_stats_is_valid),
		cmocka_unit_test(test_not_a_stats_file),
		cmocka_unit_test(test_recorded_vcpu_image),
		cmocka_unit_test(test_recorded_vm_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
