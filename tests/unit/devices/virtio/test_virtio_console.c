// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-console's input side with the console thread in front of it
 * (core/console.c), as a user typing during the guest's boot sees it:
 * keys typed before the driver exists, and more than its receive buffers
 * hold, wait and arrive later in order, none lost. Driven over virtio-mmio
 * with crafted rings in fake guest RAM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "core/console.h"
#include "core/guest_memory.h"
#include "devices/virtio/virtio_console.h"
#include "devices/virtio/virtio_mmio.h"
#include "mmio_access.h"

#define RAM_SIZE 0x100000u
#define QSIZE 16
/* queue q: desc at RING(q), avail +0x800, used +0x1000 */
#define RING(q) (0x10000u + 0x4000u * (q))
#define RX_BUF 0x40000u
#define RX_LEN 8

static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));

struct fixture {
	struct guest_memory mem;
	struct virtio_host host;
	struct virtio_device *vdev;
	struct virtio_mmio mmio;
	uint16_t avail;
};

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	return 0;
}

/* The guest's driver: VERSION_1, both queues, DRIVER_OK. */
static void driver_start(struct fixture *f)
{
	mmio_negotiate(&f->mmio, 0);
	for (uint32_t q = 0; q < 2; q++) {
		mmio_queue(&f->mmio, q, QSIZE, RING(q));
	}
	mmio_wr(&f->mmio, 0x070,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK |
			VIRTIO_CONFIG_S_DRIVER_OK);
}

/* Post receive buffer HEAD (RX_LEN bytes, device-writable) on queue 0. */
static void post_rx(struct fixture *f, uint16_t head)
{
	struct vring_desc d = { RX_BUF + RX_LEN * head, RX_LEN,
				VRING_DESC_F_WRITE, 0 };
	uint8_t *avail = ram + RING(0) + 0x800;

	memcpy(ram + RING(0) + 16 * head, &d, sizeof(d));
	memcpy(avail + 4 + 2 * (f->avail % QSIZE), &head, 2);
	f->avail++;
	__atomic_store_n((uint16_t *)(avail + 2), f->avail, __ATOMIC_RELEASE);
}

static uint16_t used_idx(void)
{
	return __atomic_load_n((uint16_t *)(ram + RING(0) + 0x1000 + 2),
			       __ATOMIC_ACQUIRE);
}

/* Up to 10 s for the device to have used N receive buffers. */
static bool wait_used(uint16_t n)
{
	for (int i = 0; i < 10000 && used_idx() < n; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	return used_idx() >= n;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	memset(ram, 0, sizeof(ram));
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, ram), 0);
	f->host = (struct virtio_host){ .mem = &f->mem };
	f->vdev = virtio_console_create(&f->host, NULL);
	assert_non_null(f->vdev);
	assert_int_equal(
		virtio_mmio_init(
			&f->mmio, f->vdev, 0,
			(struct irq_line){ .set_level = set_level, .ctx = f },
			&f->host),
		0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	f->vdev->ops->destroy(f->vdev);
	free(f);
	return 0;
}

/* Before a driver, and without receive buffers, the device takes nothing. */
static void test_no_buffers_takes_nothing(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(
		virtio_console_receive(f->vdev, (const uint8_t *)"a", 1), 0);
	driver_start(f);
	assert_int_equal(
		virtio_console_receive(f->vdev, (const uint8_t *)"a", 1), 0);
	post_rx(f, 0);
	assert_int_equal(virtio_console_receive(
				 f->vdev, (const uint8_t *)"abcdefghij", 10),
			 RX_LEN);
	assert_memory_equal(ram + RX_BUF, "abcdefgh", RX_LEN);
}

/*
 * 30 bytes typed while the guest boots, before its driver: the console
 * thread holds them (one wait counted); the driver posts 8-byte buffers
 * one at a time and gets every byte, in order.
 */
static void test_typeahead_waits_for_receive_buffers(void **state)
{
	struct fixture *f = *state;
	const char *typed = "echo typed-before-hvc0-existed";
	struct console_in_stats stats = { 0 };
	struct console_sink sink = { .deliver = virtio_console_receive,
				     .ctx = f->vdev };
	struct console *con;
	size_t len = strlen(typed);
	uint8_t got[64] = { 0 };
	size_t n = 0;
	int fds[2];

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	con = console_start(fds[0], sink, &stats);
	assert_non_null(con);
	assert_int_equal(write(fds[1], typed, len), (ssize_t)len);
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	assert_int_equal(atomic_load(&stats.bytes), 0);
	assert_int_equal(atomic_load(&stats.waits), 1);

	driver_start(f);
	for (uint16_t head = 0; n < len; head++) {
		uint32_t used_len;

		post_rx(f, head);
		assert_true(wait_used((uint16_t)(head + 1)));
		memcpy(&used_len,
		       ram + RING(0) + 0x1000 + 4 + 8 * (head % QSIZE) + 4, 4);
		assert_true(used_len <= RX_LEN);
		memcpy(got + n, ram + RX_BUF + RX_LEN * head, used_len);
		n += used_len;
	}
	assert_int_equal(n, len);
	assert_memory_equal(got, typed, len);
	assert_int_equal(atomic_load(&stats.bytes), len);
	console_stop(con);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_buffers_takes_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_typeahead_waits_for_receive_buffers, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
