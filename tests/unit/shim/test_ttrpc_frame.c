// SPDX-License-Identifier: LGPL-2.1-or-later
/* ttrpc's frame: header codec, the incremental reader, the output buffer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shim/ttrpc_frame.h"

/* The header as the protocol description draws it, byte by byte. */
static void test_header_layout(void **state)
{
	struct ttrpc_header h = { .length = 0x00123456,
				  .stream_id = 0x89abcdef,
				  .type = TTRPC_MSG_RESPONSE,
				  .flags = 0x01 };
	const uint8_t want[TTRPC_HEADER_LEN] = { 0x00, 0x12, 0x34, 0x56, 0x89,
						 0xab, 0xcd, 0xef, 0x02, 0x01 };
	uint8_t raw[TTRPC_HEADER_LEN];
	struct ttrpc_header back;

	ttrpc_header_encode(&h, raw);
	assert_memory_equal(raw, want, sizeof(want));
	assert_int_equal(ttrpc_header_decode(raw, &back), 0);
	assert_int_equal(back.length, h.length);
	assert_int_equal(back.stream_id, h.stream_id);
	assert_int_equal(back.type, h.type);
	assert_int_equal(back.flags, h.flags);
}

/* Every type and flag byte and the extreme ids survive a round trip. */
static void test_header_round_trip(void **state)
{
	const uint32_t ids[] = { 0, 1, 2, 0x7fffffff, 0xffffffff };
	const uint32_t lens[] = { 0, 1, 4096, TTRPC_MAX_DATA };

	for (unsigned int t = 0; t < 256; t++)
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]);
			     l++) {
				struct ttrpc_header h = { lens[l], ids[i],
							  (uint8_t)t,
							  (uint8_t)(255 - t) },
						    back;
				uint8_t raw[TTRPC_HEADER_LEN];

				ttrpc_header_encode(&h, raw);
				assert_int_equal(
					ttrpc_header_decode(raw, &back), 0);
				assert_int_equal(back.length, h.length);
				assert_int_equal(back.stream_id, h.stream_id);
				assert_int_equal(back.type, h.type);
				assert_int_equal(back.flags, h.flags);
			}
}

/* Lengths over 4 MiB, the reserved first byte set among them, are refused
 * with the header still decoded (the server names the length). */
static void test_header_oversized(void **state)
{
	const uint32_t bad[] = { TTRPC_MAX_DATA + 1, 0x01000000, 0x80000000,
				 0xffffffff };
	struct ttrpc_header h;
	uint8_t raw[TTRPC_HEADER_LEN] = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ttrpc_header in = { .length = bad[i], .stream_id = 3 };

		ttrpc_header_encode(&in, raw);
		assert_int_equal(ttrpc_header_decode(raw, &h), -EMSGSIZE);
		assert_int_equal(h.length, bad[i]);
		assert_int_equal(h.stream_id, 3);
	}
}

/* A frame: header + N bytes of a pattern. */
static size_t make_frame(uint8_t *buf, uint32_t id, uint8_t type, uint32_t n)
{
	struct ttrpc_header h = { .length = n, .stream_id = id, .type = type };

	ttrpc_header_encode(&h, buf);
	for (uint32_t i = 0; i < n; i++)
		buf[TTRPC_HEADER_LEN + i] = (uint8_t)(i * 7 + id);
	return TTRPC_HEADER_LEN + n;
}

static void check_frame(const struct ttrpc_reader *r, uint32_t id, uint32_t n)
{
	assert_int_equal(r->h.stream_id, id);
	assert_int_equal(r->h.length, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(r->data[i], (uint8_t)(i * 7 + id));
}

static void test_reader_whole(void **state)
{
	uint8_t buf[256];
	size_t len = make_frame(buf, 5, TTRPC_MSG_REQUEST, 100), used;
	struct ttrpc_reader r;

	ttrpc_reader_init(&r);
	assert_false(ttrpc_reader_partial(&r));
	assert_int_equal(ttrpc_reader_feed(&r, buf, len, &used), 1);
	assert_int_equal(used, len);
	check_frame(&r, 5, 100);
	assert_false(ttrpc_reader_partial(&r));
	ttrpc_reader_free(&r);
}

/* One byte per call: every split point of header and data. */
static void test_reader_byte_by_byte(void **state)
{
	uint8_t buf[64];
	size_t len = make_frame(buf, 7, TTRPC_MSG_REQUEST, 40), used;
	struct ttrpc_reader r;

	ttrpc_reader_init(&r);
	for (size_t i = 0; i < len; i++) {
		int ret = ttrpc_reader_feed(&r, buf + i, 1, &used);

		assert_int_equal(used, 1);
		assert_int_equal(ret, i + 1 == len);
		if (i + 1 < len)
			assert_true(ttrpc_reader_partial(&r));
	}
	check_frame(&r, 7, 40);
	ttrpc_reader_free(&r);
}

/* Several frames in one read: each call stops at its frame's end. */
static void test_reader_back_to_back(void **state)
{
	uint8_t buf[512];
	size_t len = 0, off = 0, used;
	struct ttrpc_reader r;
	const uint32_t sizes[] = { 3, 0, 200, 1 };

	for (size_t i = 0; i < 4; i++)
		len += make_frame(buf + len, (uint32_t)(2 * i + 1),
				  TTRPC_MSG_REQUEST, sizes[i]);
	ttrpc_reader_init(&r);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(
			ttrpc_reader_feed(&r, buf + off, len - off, &used), 1);
		assert_int_equal(used, TTRPC_HEADER_LEN + sizes[i]);
		check_frame(&r, (uint32_t)(2 * i + 1), sizes[i]);
		off += used;
	}
	assert_int_equal(off, len);
	assert_int_equal(ttrpc_reader_feed(&r, buf, 0, &used), 0);
	assert_int_equal(used, 0);
	ttrpc_reader_free(&r);
}

/* An oversized header is refused at its 10th byte, before any data
 * buffer exists; the bytes after it are not taken. */
static void test_reader_oversized(void **state)
{
	struct ttrpc_header h = { .length = TTRPC_MAX_DATA + 1,
				  .stream_id = 1,
				  .type = TTRPC_MSG_REQUEST };
	uint8_t buf[TTRPC_HEADER_LEN + 4] = { 0 };
	struct ttrpc_reader r;
	size_t used;

	ttrpc_header_encode(&h, buf);
	ttrpc_reader_init(&r);
	assert_int_equal(ttrpc_reader_feed(&r, buf, 4, &used), 0);
	assert_int_equal(ttrpc_reader_feed(&r, buf + 4, sizeof(buf) - 4, &used),
			 -EMSGSIZE);
	assert_int_equal(used, TTRPC_HEADER_LEN - 4);
	assert_null(r.data);
	ttrpc_reader_free(&r);
}

/* A header promising 4 MiB costs only what arrives; the buffer of a big
 * frame is let go when the next one starts. */
static void test_reader_grows_with_data(void **state)
{
	struct ttrpc_header h = { .length = TTRPC_MAX_DATA,
				  .stream_id = 9,
				  .type = TTRPC_MSG_REQUEST };
	uint8_t hdr[TTRPC_HEADER_LEN], *chunk = calloc(1, 65536), small[32];
	struct ttrpc_reader r;
	size_t used, got = 0;
	int ret = 0;

	assert_non_null(chunk);
	ttrpc_header_encode(&h, hdr);
	ttrpc_reader_init(&r);
	assert_int_equal(ttrpc_reader_feed(&r, hdr, sizeof(hdr), &used), 0);
	assert_null(r.data);
	assert_int_equal(ttrpc_reader_feed(&r, chunk, 100, &used), 0);
	assert_true(r.data_cap <= TTRPC_READER_MIN_CAP);
	got = 100;
	while (got < TTRPC_MAX_DATA) {
		size_t n = TTRPC_MAX_DATA - got < 65536 ? TTRPC_MAX_DATA - got
							: 65536;

		ret = ttrpc_reader_feed(&r, chunk, n, &used);
		assert_int_equal(used, n);
		got += n;
		assert_true(r.data_cap <= 2 * got ||
			    r.data_cap == TTRPC_MAX_DATA);
	}
	assert_int_equal(ret, 1);
	assert_int_equal(r.data_cap, TTRPC_MAX_DATA);
	assert_int_equal(ttrpc_reader_feed(&r, small,
					   make_frame(small, 11, 1, 10), &used),
			 1);
	assert_true(r.data_cap <= TTRPC_READER_KEEP_CAP);
	check_frame(&r, 11, 10);
	ttrpc_reader_free(&r);
	free(chunk);
}

static void test_outbuf(void **state)
{
	struct ttrpc_outbuf o;
	const uint8_t data[5] = { 1, 2, 3, 4, 5 };
	struct ttrpc_header h;

	ttrpc_outbuf_init(&o, 2 * (TTRPC_HEADER_LEN + 5));
	assert_int_equal(
		ttrpc_outbuf_frame(&o, 3, TTRPC_MSG_RESPONSE, 0, data, 5), 0);
	assert_int_equal(ttrpc_outbuf_pending(&o), 15);
	assert_int_equal(ttrpc_header_decode(o.buf, &h), 0);
	assert_int_equal(h.length, 5);
	assert_int_equal(h.stream_id, 3);
	assert_int_equal(h.type, TTRPC_MSG_RESPONSE);
	assert_memory_equal(o.buf + TTRPC_HEADER_LEN, data, 5);
	assert_int_equal(ttrpc_outbuf_frame(&o, 5, 2, 0, data, 5), 0);
	/* Full: a third frame would pass the bound. */
	assert_int_equal(ttrpc_outbuf_frame(&o, 7, 2, 0, data, 5), -ENOBUFS);
	/* Written bytes make room again. */
	ttrpc_outbuf_consume(&o, 12);
	assert_int_equal(ttrpc_outbuf_pending(&o), 18);
	assert_int_equal(ttrpc_outbuf_frame(&o, 7, 2, 0, data, 5), -ENOBUFS);
	assert_int_equal(ttrpc_outbuf_frame(&o, 7, 2, 0, NULL, 0), 0);
	assert_int_equal(ttrpc_outbuf_pending(&o), 28);
	/* The unwritten rest moved to the front, in order. */
	assert_int_equal(ttrpc_header_decode(o.buf + o.off + 3, &h), 0);
	assert_int_equal(h.stream_id, 5);
	assert_int_equal(ttrpc_header_decode(o.buf + o.off + 18, &h), 0);
	assert_int_equal(h.stream_id, 7);
	assert_int_equal(h.length, 0);
	ttrpc_outbuf_consume(&o, 28);
	assert_int_equal(ttrpc_outbuf_pending(&o), 0);
	ttrpc_outbuf_free(&o);
	/* No frame over the protocol's limit, whatever the buffer allows. */
	ttrpc_outbuf_init(&o, 3 * TTRPC_MAX_DATA);
	assert_int_equal(ttrpc_outbuf_frame(&o, 1, 2, 0, data,
					    (size_t)TTRPC_MAX_DATA + 1),
			 -EMSGSIZE);
	ttrpc_outbuf_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_header_round_trip),
		cmocka_unit_test(test_header_oversized),
		cmocka_unit_test(test_reader_whole),
		cmocka_unit_test(test_reader_byte_by_byte),
		cmocka_unit_test(test_reader_back_to_back),
		cmocka_unit_test(test_reader_oversized),
		cmocka_unit_test(test_reader_grows_with_data),
		cmocka_unit_test(test_outbuf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
