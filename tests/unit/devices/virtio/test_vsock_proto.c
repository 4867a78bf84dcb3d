// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The virtio-vsock wire rules on their own: header round trip, the verdict
 * on every kind of guest packet, credit arithmetic at the 2^32 wrap, and
 * the hybrid CONNECT line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "devices/virtio/vsock_proto.h"

static struct vsock_hdr good(uint16_t op, uint32_t len)
{
	return (struct vsock_hdr){ .src_cid = 3,
				   .dst_cid = 2,
				   .src_port = 1025,
				   .dst_port = 80,
				   .len = len,
				   .type = VIRTIO_VSOCK_TYPE_STREAM,
				   .op = op };
}

static void test_header_round_trip(void **state)
{
	struct vsock_hdr h = { 0x1122334455667788ull,
			       2,
			       0xa1a2a3a4,
			       5,
			       6,
			       1,
			       5,
			       0xf0,
			       0x10000,
			       0xfffffffe },
			 back;
	uint8_t raw[VSOCK_HDR_LEN];

	vsock_hdr_encode(&h, raw);
	assert_int_equal(raw[0], 0x88); /* little endian */
	assert_int_equal(raw[30], 5); /* op at byte 30 */
	vsock_hdr_decode(raw, &back);
	assert_true(back.src_cid == h.src_cid && back.dst_cid == h.dst_cid &&
		    back.src_port == h.src_port &&
		    back.dst_port == h.dst_port && back.len == h.len &&
		    back.type == h.type && back.op == h.op &&
		    back.flags == h.flags && back.buf_alloc == h.buf_alloc &&
		    back.fwd_cnt == h.fwd_cnt);
}

static void test_verdicts(void **state)
{
	const char *why;
	struct vsock_hdr h;

	h = good(VIRTIO_VSOCK_OP_RW, 10);
	assert_int_equal(vsock_check_tx(&h, 54, 3, &why), VSOCK_ACCEPT);
	assert_null(why);
	/* Too short for a header, spoofed source: dropped. */
	assert_int_equal(vsock_check_tx(&h, 43, 3, &why), VSOCK_DROP);
	assert_int_equal(vsock_check_tx(&h, 54, 4, &why), VSOCK_DROP);
	/* len must be exactly the payload carried. */
	assert_int_equal(vsock_check_tx(&h, 53, 3, &why), VSOCK_RESET);
	assert_int_equal(vsock_check_tx(&h, 55, 3, &why), VSOCK_RESET);
	h = good(VIRTIO_VSOCK_OP_RW, VSOCK_MAX_PKT_PAYLOAD + 1);
	assert_int_equal(vsock_check_tx(&h, VSOCK_HDR_LEN + h.len, 3, &why),
			 VSOCK_RESET);
	h = good(VIRTIO_VSOCK_OP_REQUEST, 1);
	assert_int_equal(vsock_check_tx(&h, 45, 3, &why), VSOCK_RESET);
	h = good(VIRTIO_VSOCK_OP_REQUEST, 0);
	h.dst_cid = 3;
	assert_int_equal(vsock_check_tx(&h, 44, 3, &why), VSOCK_RESET);
	h = good(VIRTIO_VSOCK_OP_REQUEST, 0);
	h.type = VIRTIO_VSOCK_TYPE_SEQPACKET;
	assert_int_equal(vsock_check_tx(&h, 44, 3, &why), VSOCK_RESET);
	for (uint16_t op = 0; op < 12; op++) {
		h = good(op, 0);
		assert_int_equal(vsock_check_tx(&h, 44, 3, &why),
				 op >= 1 && op <= 7 ? VSOCK_ACCEPT
						    : VSOCK_RESET);
	}
	h = good(VIRTIO_VSOCK_OP_SHUTDOWN, 0);
	h.flags = 3;
	assert_int_equal(vsock_check_tx(&h, 44, 3, &why), VSOCK_ACCEPT);
	h.flags = 4;
	assert_int_equal(vsock_check_tx(&h, 44, 3, &why), VSOCK_RESET);
	/* A broken RST is dropped, never answered with another. */
	h = good(VIRTIO_VSOCK_OP_RST, 0);
	h.type = 7;
	assert_int_equal(vsock_check_tx(&h, 44, 3, &why), VSOCK_DROP);
	assert_non_null(why);
}

static void test_reset_reply(void **state)
{
	struct vsock_hdr h = good(VIRTIO_VSOCK_OP_REQUEST, 0), r;

	h.dst_cid = 9;
	vsock_hdr_reset_reply(&h, &r);
	assert_int_equal(r.src_cid, 9);
	assert_int_equal(r.dst_cid, 3);
	assert_int_equal(r.src_port, 80);
	assert_int_equal(r.dst_port, 1025);
	assert_int_equal(r.op, VIRTIO_VSOCK_OP_RST);
	assert_int_equal(r.len, 0);
}

static void test_credit(void **state)
{
	assert_int_equal(vsock_peer_credit(1000, 300, 100), 800);
	assert_int_equal(vsock_peer_credit(1000, 1100, 100), 0);
	/* The peer shrank its buffer below what is in flight. */
	assert_int_equal(vsock_peer_credit(100, 1100, 100), 0);
	/* Counters wrap at 2^32. */
	assert_int_equal(vsock_peer_credit(1000, 10, 0xfffffff0u), 974);
	assert_true(vsock_fwd_cnt_valid(0, 0, 0));
	assert_true(vsock_fwd_cnt_valid(100, 150, 200));
	assert_true(vsock_fwd_cnt_valid(100, 200, 200));
	assert_false(vsock_fwd_cnt_valid(100, 201, 200));
	assert_false(vsock_fwd_cnt_valid(100, 99, 200)); /* backwards */
	assert_true(vsock_fwd_cnt_valid(0xfffffff0u, 5, 10));
	assert_false(vsock_fwd_cnt_valid(0xfffffff0u, 11, 10));
	assert_true(vsock_rx_fits(1000, 500, 0, 500));
	assert_false(vsock_rx_fits(1000, 500, 0, 501));
	assert_true(vsock_rx_fits(1000, 5, 0xfffffff0u, 979));
	assert_false(vsock_rx_fits(1000, 5, 0xfffffff0u, 980));
	assert_false(vsock_rx_fits(1000, 2000, 0, 0)); /* already over */
}

static void test_connect_line(void **state)
{
	uint32_t port = 0;

	assert_int_equal(vsock_parse_connect("CONNECT 52\n", 11, &port), 11);
	assert_int_equal(port, 52);
	assert_int_equal(vsock_parse_connect("CONNECT 0\nxyz", 13, &port), 10);
	assert_int_equal(port, 0);
	assert_int_equal(vsock_parse_connect("CONNECT 4294967295\n", 19, &port),
			 19);
	assert_int_equal(port, 4294967295u);
	/* Not yet complete. */
	assert_int_equal(vsock_parse_connect("CONN", 4, &port), 0);
	assert_int_equal(vsock_parse_connect("CONNECT 52", 10, &port), 0);
	/* Never a request. */
	assert_int_equal(vsock_parse_connect("connect 5\n", 10, &port),
			 -EINVAL);
	assert_int_equal(vsock_parse_connect("CONNECT \n", 9, &port), -EINVAL);
	assert_int_equal(vsock_parse_connect("CONNECT 05\n", 11, &port),
			 -EINVAL);
	assert_int_equal(vsock_parse_connect("CONNECT 5 \n", 11, &port),
			 -EINVAL);
	assert_int_equal(vsock_parse_connect("CONNECT -5\n", 11, &port),
			 -EINVAL);
	assert_int_equal(vsock_parse_connect("CONNECT 4294967296\n", 19, &port),
			 -EINVAL);
	assert_int_equal(
		vsock_parse_connect("CONNECT 1111111111111111111111111", 33,
				    &port),
		-EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_round_trip),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_reset_reply),
		cmocka_unit_test(test_credit),
		cmocka_unit_test(test_connect_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
