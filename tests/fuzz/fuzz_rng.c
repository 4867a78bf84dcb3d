// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the real virtio-rng device model: every request
 * is filled from getrandom(2), only inside the buffers the chain names.
 * Records: device_harness.h.
 */
#include "device_harness.h"
#include "devices/virtio/virtio_rng.h"
#include "fuzz.h"

static struct virtio_device *rng_create(const struct virtio_host *host)
{
	return virtio_rng_create(host);
}

static const struct fuzz_device rng = { .create = rng_create };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_device_init(&rng);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_device_run(&rng, data, size);
}
