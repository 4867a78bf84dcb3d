// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The 9P wire codec: a request whose size field lies, a field past the
 * end, a string longer than the caller's buffer or holding a NUL byte are
 * all caught; replies never run past their buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "devices/virtio/p9_proto.h"

static void test_round_trip(void **state)
{
	uint8_t buf[64];
	struct p9_writer w;
	struct p9_reader r;
	struct p9_qid qid = { P9_QTDIR, 7, 0x1122334455667788ull };
	char name[16];
	uint8_t type;
	uint16_t tag;
	size_t len;

	(void)state;
	p9_writer_init(&w, buf, sizeof(buf), P9_TWALK, 0x1234);
	p9_put_u32(&w, 0xdeadbeef);
	p9_put_u64(&w, 42);
	p9_put_str(&w, "name", 4);
	p9_put_qid(&w, &qid);
	len = p9_writer_finish(&w);
	assert_int_equal(len, 7 + 4 + 8 + 2 + 4 + 13);
	assert_int_equal(buf[0], len); /* little-endian size first */
	assert_int_equal(p9_reader_init(&r, buf, len, &type, &tag), 0);
	assert_int_equal(type, P9_TWALK);
	assert_int_equal(tag, 0x1234);
	assert_int_equal(p9_get_u32(&r), 0xdeadbeef);
	assert_int_equal(p9_get_u64(&r), 42);
	p9_get_str(&r, name, sizeof(name));
	assert_string_equal(name, "name");
	assert_int_equal(p9_get_u8(&r), P9_QTDIR);
	assert_int_equal(p9_get_u32(&r), 7);
	assert_int_equal(p9_get_u64(&r), 0x1122334455667788ull);
	assert_true(p9_reader_ok(&r));
	assert_int_equal(p9_reader_left(&r), 0);
	/* One more byte is past the end: bad, and zero from then on. */
	assert_int_equal(p9_get_u8(&r), 0);
	assert_false(p9_reader_ok(&r));
	assert_int_equal(p9_get_u32(&r), 0);
}

static void test_size_field_must_match(void **state)
{
	uint8_t msg[11] = { 11, 0, 0, 0, P9_TCLUNK, 1, 0, 5, 0, 0, 0 };
	struct p9_reader r;
	uint8_t type;
	uint16_t tag;

	(void)state;
	assert_int_equal(p9_reader_init(&r, msg, sizeof(msg), &type, &tag), 0);
	assert_int_equal(p9_get_u32(&r), 5);
	msg[0] = 12; /* claims more than there is */
	assert_int_equal(p9_reader_init(&r, msg, sizeof(msg), &type, &tag),
			 -EINVAL);
	msg[0] = 10; /* claims less */
	assert_int_equal(p9_reader_init(&r, msg, sizeof(msg), &type, &tag),
			 -EINVAL);
	assert_int_equal(p9_reader_init(&r, msg, 6, &type, &tag), -EINVAL);
}

static void test_bad_strings(void **state)
{
	/* len 3 "a\0b", then len 5 with only 2 bytes left */
	uint8_t body[] = { 3, 0, 'a', 0, 'b', 5, 0, 'x', 'y' };
	uint8_t fits[] = { 4, 0, 'a', 'b', 'c', 'd' };
	struct p9_reader r = { .buf = body, .len = sizeof(body) };
	char s[8];

	(void)state;
	p9_get_str(&r, s, sizeof(s));
	assert_false(p9_reader_ok(&r)); /* an embedded NUL */
	r = (struct p9_reader){ .buf = body + 5, .len = 4 };
	p9_get_str(&r, s, sizeof(s));
	assert_false(p9_reader_ok(&r)); /* runs past the end */
	r = (struct p9_reader){ .buf = fits, .len = sizeof(fits) };
	p9_get_str(&r, s, 4); /* 4 bytes need 5 with the NUL */
	assert_false(p9_reader_ok(&r));
	r = (struct p9_reader){ .buf = fits, .len = sizeof(fits) };
	p9_get_str(&r, s, 5);
	assert_true(p9_reader_ok(&r));
	assert_string_equal(s, "abcd");
	r = (struct p9_reader){ .buf = fits, .len = sizeof(fits) };
	assert_null(p9_get_bytes(&r, 7));
	assert_false(p9_reader_ok(&r));
}

static void test_writer_overflow(void **state)
{
	uint8_t buf[12];
	struct p9_writer w;

	(void)state;
	p9_writer_init(&w, buf, sizeof(buf), P9_TREAD + 1, 1);
	p9_put_u32(&w, 1);
	assert_int_equal(p9_writer_finish(&w), 11);
	p9_put_u16(&w, 2); /* 13 > 12 */
	assert_true(w.overflow);
	assert_int_equal(p9_writer_finish(&w), 0);
	assert_null(p9_put_space(&w, 1));
	assert_int_equal(p9_build_lerror(buf, sizeof(buf), 9, EIO), 11);
	assert_int_equal(buf[4], P9_RLERROR);
	assert_int_equal(buf[5], 9);
	assert_int_equal(buf[7], EIO);
	assert_int_equal(p9_build_lerror(buf, 10, 9, EIO), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_size_field_must_match),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_writer_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
