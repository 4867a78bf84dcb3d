// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SHA-256 at the block boundaries where padding changes shape, one-shot
 * and streamed in pieces of every size from 1 to 130 bytes (a template's
 * key hashes files block by block, docs/template.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "base/sha256.h"

static void test_sha256(void **state)
{
	static const struct {
		size_t len;
		const char *hex;
	} v[] = {
		{ 0,
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ 3,
		  "b361d0f9a938a2bb4fbdc9c21dc5a859788041b0040919d8a811c1888184f4df" },
		{ 55,
		  "576a1bf8d4478657e6dc4af9398544765c2a92cde28478b019235cfed315fc09" },
		{ 56,
		  "9b20501dfd1d99161c257950f3444f3e49230c351c5c8e0943ef369f85f5205d" },
		{ 63,
		  "30b345906b493f06f69444b6521113511c242f30e29840462950035043682f1e" },
		{ 64,
		  "d8bc63b4fc1156e5e7d95a418b9bf54cd3174bedbc2db40f74895349b229b3c0" },
		{ 65,
		  "1ee23b0fbcaecc1aff4a9e8f1645f35ab2c8e13609cd73b68df8b5e3f63ce073" },
		{ 119,
		  "7a6589821178918ca8d9edaba5abfc1e9b2669564f4469b66885379c1530b2c8" },
		{ 120,
		  "655250427d56b1b0eeb8497d21428704273458a01772d6881b65c0abac0f8a98" },
		{ 1000,
		  "89f4ff56a25dd1db06a4ce6033603775d705fb96f30f8693733fef602a1ca532" },
	};
	uint8_t data[1000], sum[32];
	char hex[65];

	(void)state;
	/* Bytes i*7: the values Python's hashlib gave for the digests. */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		sha256(data, v[i].len, sum);
		sha256_hex(sum, hex);
		assert_string_equal(hex, v[i].hex);
	}
}

/* Any split of the input gives the one-shot digest. */
static void test_sha256_streamed(void **state)
{
	uint8_t data[1000], one[32], streamed[32];

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	sha256(data, sizeof(data), one);
	for (size_t piece = 1; piece <= 130; piece++) {
		struct sha256_ctx ctx;

		sha256_init(&ctx);
		for (size_t off = 0; off < sizeof(data); off += piece)
			sha256_update(&ctx, data + off,
				      sizeof(data) - off < piece
					      ? sizeof(data) - off
					      : piece);
		sha256_final(&ctx, streamed);
		assert_memory_equal(one, streamed, 32);
	}
	/* And a changed byte changes it. */
	data[500] ^= 1;
	sha256(data, sizeof(data), streamed);
	assert_memory_not_equal(one, streamed, 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_sha256_streamed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
