/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The virtio-vsock wire format (virtio 1.2, 5.10) and the pure rules the
 * device applies to it, kept apart from sockets and queues so that every
 * rule is unit-tested and fuzzed on its own:
 *
 * - the 44-byte packet header, decoded from and encoded to little endian;
 * - vsock_check_tx(): what to do with a packet the guest put on its tx
 *   queue (accept, drop silently, or answer with RST), field by field;
 * - the credit arithmetic of 5.10.6.3 (buf_alloc, fwd_cnt, tx_cnt), with
 *   every value the guest reports checked before it is believed;
 * - the host side's hybrid handshake line ("CONNECT <port>\n", the
 *   protocol Firecracker's users speak).
 */
#ifndef HVM_DEVICES_VIRTIO_VSOCK_PROTO_H
#define HVM_DEVICES_VIRTIO_VSOCK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_vsock.h>

#define VSOCK_HDR_LEN 44 /* sizeof(struct virtio_vsock_hdr), packed */
#define VSOCK_HOST_CID 2 /* VMADDR_CID_HOST */
/* Guest CIDs: 0-2 are reserved, 2^32-1 is VMADDR_CID_ANY. */
#define VSOCK_MIN_GUEST_CID 3ull
#define VSOCK_MAX_GUEST_CID 0xfffffffeull
/* The largest payload in one packet, either way (Linux's own limit). */
#define VSOCK_MAX_PKT_PAYLOAD (64u * 1024)
/* The feature bit for stream sockets (virtio 1.2, 5.10.3). */
#define VSOCK_F_STREAM 0
#define VSOCK_SHUTDOWN_BOTH \
	(VIRTIO_VSOCK_SHUTDOWN_RCV | VIRTIO_VSOCK_SHUTDOWN_SEND)
/* "CONNECT 4294967295\n" is 19 bytes; anything longer is not a request. */
#define VSOCK_CONNECT_LINE_MAX 32

/* A packet header in host byte order. */
struct vsock_hdr {
	uint64_t src_cid;
	uint64_t dst_cid;
	uint32_t src_port;
	uint32_t dst_port;
	uint32_t len;
	uint16_t type;
	uint16_t op;
	uint32_t flags;
	uint32_t buf_alloc;
	uint32_t fwd_cnt;
};

void vsock_hdr_decode(const uint8_t raw[VSOCK_HDR_LEN], struct vsock_hdr *h);
void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t raw[VSOCK_HDR_LEN]);

enum vsock_verdict {
	VSOCK_ACCEPT, /* well formed: hand it to the connection */
	VSOCK_DROP, /* not even worth an answer (spoofed, short, an RST) */
	VSOCK_RESET, /* answer with an RST to its sender */
};

/*
 * Judge a packet from the guest's tx queue: header H, OUT_LEN readable
 * bytes in its chain (header included), sent by the guest with GUEST_CID.
 * Rules: a chain shorter than a header, a source CID other than the
 * guest's and any malformed RST are dropped; a destination other than
 * the host, a type other than stream, an unknown op, a length that is not
 * exactly the payload the chain carries (or above VSOCK_MAX_PKT_PAYLOAD),
 * a payload on anything but RW and unknown SHUTDOWN flags get an RST.
 * *WHY says which rule (a static string), for the log.
 */
enum vsock_verdict vsock_check_tx(const struct vsock_hdr *h, uint32_t out_len,
				  uint64_t guest_cid, const char **why);

/* The RST answering H: addresses swapped, same type, no payload. */
void vsock_hdr_reset_reply(const struct vsock_hdr *h, struct vsock_hdr *rst);

/*
 * Bytes the peer can still take (5.10.6.3): its BUF_ALLOC minus what is
 * in flight (TX_CNT sent, FWD_CNT consumed), 0 when the peer shrank its
 * buffer below what is in flight.
 */
uint32_t vsock_peer_credit(uint32_t buf_alloc, uint32_t tx_cnt,
			   uint32_t fwd_cnt);

/*
 * Whether the peer's new fwd_cnt NEW_FWD is believable: it only moves
 * forward from OLD_FWD and never past TX_CNT, what was sent to it
 * (all modulo 2^32).
 */
bool vsock_fwd_cnt_valid(uint32_t old_fwd, uint32_t new_fwd, uint32_t tx_cnt);

/*
 * Whether a packet of LEN payload bytes fits the receive buffer we
 * advertised: BUF_ALLOC bytes, RX_CNT received and FWD_CNT forwarded.
 */
bool vsock_rx_fits(uint32_t buf_alloc, uint32_t rx_cnt, uint32_t fwd_cnt,
		   uint32_t len);

/*
 * Parse the host side's request "CONNECT <port>\n" at the start of BUF
 * (LEN bytes so far). Returns the length of the line (newline included)
 * with *PORT set, 0 when more bytes are needed, -EINVAL when it cannot
 * become a request (wrong word, not a decimal port below 2^32, leading
 * zeros, longer than VSOCK_CONNECT_LINE_MAX).
 */
int vsock_parse_connect(const char *buf, size_t len, uint32_t *port);

#endif
