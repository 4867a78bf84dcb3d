// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the virtio-vsock wire rules (vsock_proto.c): any
 * 44-byte header with any chain length gets a verdict whose promises
 * hold (an accepted packet is addressed to the host from the guest, of
 * stream type, a known op, with exactly the payload the chain carries);
 * the credit helpers never promise more than the window; the CONNECT
 * parser only accepts what it can also print back.
 */
#include <errno.h>
#include <stdio.h>

#include "devices/virtio/vsock_proto.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t raw[VSOCK_HDR_LEN] = { 0 }, again[VSOCK_HDR_LEN];
	struct vsock_hdr h;
	uint32_t out_len = 0, a, b, c, port;
	const char *why;
	char line[VSOCK_CONNECT_LINE_MAX + 1];
	int r;

	memcpy(raw, data, size < sizeof(raw) ? size : sizeof(raw));
	if (size >= VSOCK_HDR_LEN + 4)
		memcpy(&out_len, data + VSOCK_HDR_LEN, 4);
	vsock_hdr_decode(raw, &h);
	vsock_hdr_encode(&h, again);
	check(!memcmp(raw, again, sizeof(raw)));
	switch (vsock_check_tx(&h, out_len, 3, &why)) {
	case VSOCK_ACCEPT:
		check(h.src_cid == 3 && h.dst_cid == VSOCK_HOST_CID);
		check(h.type == VIRTIO_VSOCK_TYPE_STREAM);
		check(h.op >= 1 && h.op <= 7);
		check(h.len == out_len - VSOCK_HDR_LEN);
		check(h.len <= VSOCK_MAX_PKT_PAYLOAD);
		check(!h.len || h.op == VIRTIO_VSOCK_OP_RW);
		break;
	case VSOCK_RESET:
		check(why && h.op != VIRTIO_VSOCK_OP_RST);
		break;
	case VSOCK_DROP:
		check(why);
		break;
	}
	a = h.buf_alloc;
	b = h.fwd_cnt;
	c = h.len;
	check(vsock_peer_credit(a, b, c) <= a);
	if (vsock_rx_fits(a, b, c, h.src_port))
		check((uint32_t)(b - c) + (uint64_t)h.src_port <= a);
	if (vsock_fwd_cnt_valid(c, h.dst_port, b))
		check((uint32_t)(h.dst_port - c) <= (uint32_t)(b - c));
	r = vsock_parse_connect((const char *)data, size, &port);
	if (r > 0) {
		check(r <= VSOCK_CONNECT_LINE_MAX);
		snprintf(line, sizeof(line), "CONNECT %u\n", port);
		check((size_t)r == strlen(line) && !memcmp(line, data, r));
	}
	check(r >= -EINVAL);
	return 0;
}
