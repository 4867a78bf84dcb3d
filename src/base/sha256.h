/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SHA-256 (FIPS 180-4), one-shot or streamed: the shim names its socket
 * as containerd 1.6's shims do, by the hash of (address, namespace, id);
 * a VM template is keyed by the hash of its kernel, initramfs, agent and
 * settings (docs/template.md). Not for secrets: no constant-time care is
 * taken.
 */
#ifndef HVM_BASE_SHA256_H
#define HVM_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64]; /* the unfinished block */
	size_t fill;
};

void sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(struct sha256_ctx *ctx, uint8_t out[32]);

/* The three above in one call. */
void sha256(const void *data, size_t len, uint8_t out[32]);

/* OUT gets the 64 lower-case hex digits of SUM and a NUL. */
void sha256_hex(const uint8_t sum[32], char out[65]);

#endif
