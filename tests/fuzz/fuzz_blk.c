// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the real virtio-blk device model on a real file
 * (a 64 KiB memfd, opened by path as --disk opens an image, locks and
 * all): reads, writes, flushes, discards and GET_ID go through io_uring,
 * and their completions run when the input turns the event loop. Records:
 * device_harness.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device_harness.h"
#include "devices/virtio/virtio_blk.h"
#include "fuzz.h"

#define DISK_SIZE (64 * 1024)

static int disk_fd = -1;
static char disk_path[64];

static int blk_init(void)
{
	disk_fd = memfd_create("fuzz-disk", MFD_CLOEXEC);
	snprintf(disk_path, sizeof(disk_path), "/proc/self/fd/%d", disk_fd);
	return disk_fd < 0 ? -1 : 0;
}

static struct virtio_device *blk_create(const struct virtio_host *host)
{
	/* Every input starts from the same, all-zero disk. */
	if (ftruncate(disk_fd, 0) < 0 || ftruncate(disk_fd, DISK_SIZE) < 0)
		abort();
	return virtio_blk_create(host, disk_path, false, false, true, 0);
}

static const struct fuzz_device blk = {
	.init = blk_init,
	.create = blk_create,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_device_init(&blk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_device_run(&blk, data, size);
}
