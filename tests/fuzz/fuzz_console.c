// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the real virtio-console device model: guest output
 * goes into a console output buffer drained to /dev/null (the per-kick
 * cap included), host input records are keystrokes offered to the receive
 * queue. Records: device_harness.h.
 */
#include <fcntl.h>

#include "core/console_out.h"
#include "device_harness.h"
#include "devices/virtio/virtio_console.h"
#include "fuzz.h"

static struct console_out *out;

static int console_init(void)
{
	out = console_out_create(open("/dev/null", O_WRONLY | O_CLOEXEC));
	return out ? 0 : -1;
}

static struct virtio_device *console_create(const struct virtio_host *host)
{
	return virtio_console_create(host, out);
}

static void console_host_input(struct virtio_device *vdev, const uint8_t *buf,
			       size_t len)
{
	check(virtio_console_receive(vdev, buf, len) <= len);
}

static const struct fuzz_device console = {
	.init = console_init,
	.create = console_create,
	.host_input = console_host_input,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_device_init(&console);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_device_run(&console, data, size);
}
