/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SHA-256 (FIPS 180-4), one-shot: the shim names its socket as containerd
 * 1.6's shims do, by the hash of (address, namespace, id). Not for
 * secrets: no constant-time care is needed for a path name.
 */
#ifndef HVM_SHIM_SHA256_H
#define HVM_SHIM_SHA256_H

#include <stddef.h>
#include <stdint.h>

void shim_sha256(const void *data, size_t len, uint8_t out[32]);

#endif
