// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-mmio (version 2) as an arm64 guest driver sees it: the register
 * file, the handshake, a request to virtio-rng through the real event
 * loop, and the level-triggered interrupt line with its acknowledge.
 * Skips without io_uring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "core/console_out.h"
#include "devices/virtio/virtio_console.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_rng.h"

#define RAM_SIZE 0x40000u
#define DESC 0x1000u
#define AVAIL 0x2000u
#define USED 0x3000u
#define BUF 0x8000u

static uint8_t *ram;

struct fixture {
	struct guest_memory mem;
	struct event_loop *loop;
	struct virtio_host host;
	struct virtio_device *vdev;
	struct virtio_mmio mmio;
	sem_t irq_raised;
	bool level;
	int raises;
	int pipe[2]; /* console output */
	struct console_out *out;
};

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	struct fixture *f = ctx;

	assert_int_equal(gsi, 42);
	if (level && !f->level) {
		f->raises++;
		sem_post(&f->irq_raised);
	}
	f->level = level;
	return 0;
}

static uint32_t rd(struct fixture *f, uint64_t off)
{
	uint32_t v = 0xdeadbeef;

	virtio_mmio_ops.read(&f->mmio, off, (uint8_t *)&v, 4);
	return v;
}

static void wr(struct fixture *f, uint64_t off, uint32_t v)
{
	virtio_mmio_ops.write(&f->mmio, off, (uint8_t *)&v, 4);
}

static struct fixture *make(bool console)
{
	struct fixture *f = calloc(1, sizeof(*f));

	memset(ram, 0, RAM_SIZE);
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, ram), 0);
	assert_int_equal(event_loop_create(&f->loop, 32), 0);
	sem_init(&f->irq_raised, 0, 0);
	f->host = (struct virtio_host){ .mem = &f->mem, .loop = f->loop };
	if (console) {
		assert_int_equal(pipe(f->pipe), 0);
		f->out = console_out_create(f->pipe[1]);
		assert_non_null(f->out);
		f->vdev = virtio_console_create(&f->host, f->out);
	} else {
		f->pipe[0] = f->pipe[1] = -1;
		f->vdev = virtio_rng_create(&f->host);
	}
	assert_non_null(f->vdev);
	assert_int_equal(virtio_device_attach_loop(f->vdev, f->loop), 0);
	virtio_mmio_init(&f->mmio, f->vdev, 0x0a000000,
			 (struct irq_line){
				 .set_level = set_level, .ctx = f, .gsi = 42 },
			 &f->host);
	assert_int_equal(event_loop_start(f->loop, "test-mmio"), 0);
	return f;
}

static int setup(void **state)
{
	*state = make(false);
	return 0;
}

static int setup_console(void **state)
{
	*state = make(true);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	event_loop_destroy(f->loop);
	f->vdev->ops->destroy(f->vdev);
	console_out_destroy(f->out);
	sem_destroy(&f->irq_raised);
	if (f->pipe[0] >= 0) {
		close(f->pipe[0]);
		close(f->pipe[1]);
	}
	free(f);
	return 0;
}

static void test_identity(void **state)
{
	struct fixture *f = *state;
	uint8_t b = 0x77;

	assert_int_equal(rd(f, 0x000), 0x74726976);
	assert_int_equal(rd(f, 0x004), 2);
	assert_int_equal(rd(f, 0x008), 4); /* VIRTIO_ID_RNG */
	wr(f, 0x014, 1);
	assert_int_equal(rd(f, 0x010), 1); /* VERSION_1 in the high word */
	wr(f, 0x030, 0);
	assert_int_equal(rd(f, 0x034), 64);
	wr(f, 0x030, 7); /* no such queue */
	assert_int_equal(rd(f, 0x034), 0);
	/* Narrow or unaligned register accesses do nothing. */
	virtio_mmio_ops.read(&f->mmio, 0x000, &b, 1);
	assert_int_equal(b, 0);
	virtio_mmio_ops.write(&f->mmio, 0x070, &b, 1);
	assert_int_equal(rd(f, 0x070), 0);
	assert_int_equal(rd(f, 0x002), 0);
	/* rng has no config space: reads are zero, writes ignored. */
	assert_int_equal(rd(f, 0x100), 0);
	wr(f, 0x1fc, 0xffffffff);
}

static void test_request_and_interrupt(void **state)
{
	struct fixture *f = *state;
	struct vring_desc d = { BUF, 32, VRING_DESC_F_WRITE, 0 };
	struct timespec deadline;
	uint32_t len;

	wr(f, 0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(f, 0x024, 1);
	wr(f, 0x020, 1); /* VERSION_1 */
	wr(f, 0x070,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		   VIRTIO_CONFIG_S_FEATURES_OK);
	assert_true(rd(f, 0x070) & VIRTIO_CONFIG_S_FEATURES_OK);
	wr(f, 0x030, 0);
	wr(f, 0x038, 16);
	wr(f, 0x080, DESC);
	wr(f, 0x084, 0);
	wr(f, 0x090, AVAIL);
	wr(f, 0x094, 0);
	wr(f, 0x0a0, USED);
	wr(f, 0x0a4, 0);
	wr(f, 0x044, 1);
	assert_int_equal(rd(f, 0x044), 1);
	/* Addresses are frozen once the queue is ready. */
	wr(f, 0x080, 0x5000);
	assert_int_equal(f->vdev->vqs[0].desc_gpa, DESC);
	wr(f, 0x070,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		   VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);

	memcpy(ram + DESC, &d, sizeof(d));
	*(uint16_t *)(ram + AVAIL + 4) = 0;
	__atomic_store_n((uint16_t *)(ram + AVAIL + 2), 1, __ATOMIC_RELEASE);
	wr(f, 0x050, 0); /* QueueNotify */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 30;
	assert_int_equal(sem_timedwait(&f->irq_raised, &deadline), 0);
	assert_int_equal(rd(f, 0x060), 1); /* used buffer */
	memcpy(&len, ram + USED + 8, 4);
	assert_int_equal(len, 32);
	wr(f, 0x064, 1); /* ACK */
	assert_int_equal(rd(f, 0x060), 0);
	assert_false(f->level);

	/* A hostile chain: NEEDS_RESET and a config interrupt. */
	d.addr = RAM_SIZE - 8;
	memcpy(ram + DESC, &d, sizeof(d));
	*(uint16_t *)(ram + AVAIL + 6) = 0;
	__atomic_store_n((uint16_t *)(ram + AVAIL + 2), 2, __ATOMIC_RELEASE);
	wr(f, 0x050, 0);
	assert_int_equal(sem_timedwait(&f->irq_raised, &deadline), 0);
	assert_int_equal(rd(f, 0x060), 2);
	assert_true(rd(f, 0x070) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* Reset clears everything, the line included. */
	wr(f, 0x070, 0);
	assert_int_equal(rd(f, 0x070), 0);
	assert_int_equal(rd(f, 0x060), 0);
	assert_false(f->level);
	assert_int_equal(rd(f, 0x044), 0);
}

/* Handshake with VERSION_1 and NQ queues of 16 entries at 0x1000 * (q+1). */
static void driver_up(struct fixture *f, unsigned int nq)
{
	wr(f, 0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(f, 0x024, 1);
	wr(f, 0x020, 1);
	wr(f, 0x070,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		   VIRTIO_CONFIG_S_FEATURES_OK);
	for (unsigned int q = 0; q < nq; q++) {
		uint32_t base = 0x10000 + 0x4000 * q;

		wr(f, 0x030, q);
		wr(f, 0x038, 16);
		wr(f, 0x080, base);
		wr(f, 0x090, base + 0x1000);
		wr(f, 0x0a0, base + 0x2000);
		wr(f, 0x044, 1);
	}
	wr(f, 0x070,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		   VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
}

static void post_one(struct fixture *f, unsigned int q, uint64_t addr,
		     uint32_t len, uint16_t flags)
{
	uint32_t base = 0x10000 + 0x4000 * q;
	struct vring_desc d = { addr, len, flags, 0 };
	uint16_t idx = *(uint16_t *)(ram + base + 0x1000 + 2);

	memcpy(ram + base + 16 * (idx % 16), &d, sizeof(d));
	*(uint16_t *)(ram + base + 0x1000 + 4 + 2 * (idx % 16)) = idx % 16;
	__atomic_store_n((uint16_t *)(ram + base + 0x1000 + 2),
			 (uint16_t)(idx + 1), __ATOMIC_RELEASE);
	wr(f, 0x050, q);
}

static void test_console(void **state)
{
	struct fixture *f = *state;
	char out[16] = { 0 };
	uint32_t len;

	/* No receive buffers yet (driver not ready): input waits. */
	assert_int_equal(
		virtio_console_receive(f->vdev, (const uint8_t *)"x", 1), 0);
	driver_up(f, 2);
	/* hvc0 output: the transmit queue goes to the output fd. */
	memcpy(ram + BUF, "hello hvc0", 10);
	post_one(f, 1, BUF, 10, 0);
	assert_int_equal(read(f->pipe[0], out, 10), 10);
	assert_string_equal(out, "hello hvc0");
	/* Input: fills posted receive buffers, the rest waits. */
	post_one(f, 0, BUF + 0x100, 4, VRING_DESC_F_WRITE);
	assert_int_equal(
		virtio_console_receive(f->vdev, (const uint8_t *)"abcdef", 6),
		4);
	assert_memory_equal(ram + BUF + 0x100, "abcd", 4);
	memcpy(&len, ram + 0x10000 + 0x2000 + 8, 4);
	assert_int_equal(len, 4);
	assert_true(f->level);
}

/* Wait up to 5 s for queue Q's used index to reach IDX. */
static bool used_reaches(unsigned int q, uint16_t idx)
{
	volatile uint16_t *used_idx =
		(uint16_t *)(ram + 0x10000 + 0x4000 * q + 0x2000 + 2);

	for (int i = 0; i < 5000; i++) {
		if (__atomic_load_n(used_idx, __ATOMIC_ACQUIRE) == idx)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * Nobody reads hintvm's stdout: guest output on hvc0 must neither block
 * the event loop (which serves every device of the VM) nor be kept: every
 * transmit buffer comes back, what the reader did not take is counted.
 */
static void test_console_stalled_reader(void **state)
{
	struct fixture *f = *state;
	const uint32_t chunk = 0x10000;

	driver_up(f, 2);
	memset(ram + 0x20000, 'z', chunk);
	/* 512 KiB: far more than a pipe and the console buffer hold. */
	for (uint16_t i = 1; i <= 8; i++) {
		post_one(f, 1, 0x20000, chunk, 0);
		assert_true(used_reaches(1, i));
	}
	assert_true(console_out_dropped(f->out) >= 512 * 1024 - 2 * 65536);
	/* And the device still takes input: the loop is alive. */
	post_one(f, 0, BUF + 0x100, 4, VRING_DESC_F_WRITE);
	assert_int_equal(
		virtio_console_receive(f->vdev, (const uint8_t *)"ping", 4), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_and_interrupt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_console, setup_console,
						teardown),
		cmocka_unit_test_setup_teardown(test_console_stalled_reader,
						setup_console, teardown),
	};
	struct event_loop *probe;
	int ret = event_loop_create(&probe, 4);

	if (ret == -ENOSYS || ret == -EPERM) {
		printf("SKIP: io_uring is not available here (%s)\n",
		       strerror(-ret));
		return 77;
	}
	event_loop_destroy(probe);
	log_set_level(LOG_ERROR);
	ram = aligned_alloc(4096, RAM_SIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
