// SPDX-License-Identifier: LGPL-2.1-or-later
/* Device status handshake and feature negotiation, driver misbehaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "devices/virtio/virtio_device.h"

#define S_ACK VIRTIO_CONFIG_S_ACKNOWLEDGE
#define S_DRV VIRTIO_CONFIG_S_DRIVER
#define S_FOK VIRTIO_CONFIG_S_FEATURES_OK
#define S_DOK VIRTIO_CONFIG_S_DRIVER_OK
#define F_V1 VIRTIO_BIT(VIRTIO_F_VERSION_1)
#define F_EVIDX VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX)
#define F_DEV0 VIRTIO_BIT(0)

static uint8_t ram[0x4000] __attribute__((aligned(4096)));

struct test_dev {
	struct virtio_device vdev;
	uint8_t config[12];
	int activations, resets, config_signals, written_off;
	int activate_result;
};

static int fake_activate(struct virtio_device *vdev)
{
	struct test_dev *t = (struct test_dev *)vdev;

	t->activations++;
	return t->activate_result;
}

static void fake_reset(struct virtio_device *vdev)
{
	((struct test_dev *)vdev)->resets++;
}

static void fake_config_written(struct virtio_device *vdev, uint32_t off,
				uint32_t len)
{
	((struct test_dev *)vdev)->written_off = (int)off;
}

static int fake_signal_config(struct virtio_device *vdev)
{
	((struct test_dev *)vdev)->config_signals++;
	return 0;
}

static const struct virtio_device_ops fake_ops = {
	.activate = fake_activate,
	.reset = fake_reset,
	.config_written = fake_config_written,
};

static struct guest_memory mem;
static struct test_dev dev;

static int setup(void **state)
{
	memset(&mem, 0, sizeof(mem));
	assert_int_equal(guest_memory_add_region(&mem, 0, sizeof(ram), ram), 0);
	memset(&dev, 0, sizeof(dev));
	assert_int_equal(virtio_device_init(&dev.vdev, "test", &fake_ops, &mem,
					    4, F_DEV0 | F_EVIDX, 2, 8,
					    dev.config, sizeof(dev.config)),
			 0);
	dev.vdev.transport.signal_config = fake_signal_config;
	*state = &dev;
	return 0;
}

static int teardown(void **state)
{
	virtio_device_destroy(&dev.vdev);
	return 0;
}

static void negotiate(struct virtio_device *vdev, uint64_t features)
{
	virtio_set_status(vdev, S_ACK);
	virtio_set_status(vdev, S_ACK | S_DRV);
	virtio_driver_features_write(vdev, 0, (uint32_t)features);
	virtio_driver_features_write(vdev, 1, (uint32_t)(features >> 32));
	virtio_set_status(vdev, S_ACK | S_DRV | S_FOK);
}

static void test_features_check(void **state)
{
	assert_int_equal(virtio_features_check(F_V1 | F_DEV0, F_V1), 0);
	assert_int_equal(virtio_features_check(F_V1 | F_DEV0, F_V1 | F_DEV0),
			 0);
	/* Legacy drivers (no VERSION_1) are refused. */
	assert_int_equal(virtio_features_check(F_V1 | F_DEV0, F_DEV0), -EINVAL);
	assert_int_equal(virtio_features_check(F_V1, 0), -EINVAL);
	/* Anything not offered is refused, including high bits. */
	assert_int_equal(virtio_features_check(F_V1, F_V1 | VIRTIO_BIT(63)),
			 -EINVAL);
	assert_int_equal(virtio_features_check(F_V1, F_V1 | F_EVIDX), -EINVAL);
}

static void test_feature_words(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	/* VERSION_1 is always offered, in the high word. */
	assert_int_equal(virtio_device_features_word(vdev, 0),
			 (uint32_t)(F_DEV0 | F_EVIDX));
	assert_int_equal(virtio_device_features_word(vdev, 1), 1);
	assert_int_equal(virtio_device_features_word(vdev, 2), 0);
	assert_int_equal(virtio_device_features_word(vdev, 0xffffffff), 0);
}

static void test_good_handshake(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_V1 | F_EVIDX);
	assert_int_equal(vdev->status, S_ACK | S_DRV | S_FOK);
	assert_int_equal(vdev->driver_features, F_V1 | F_EVIDX);
	virtio_set_status(vdev, S_ACK | S_DRV | S_FOK | S_DOK);
	assert_int_equal(dev.activations, 1);
	assert_true(virtio_device_live(vdev));
	/* Setting DRIVER_OK again does not re-activate. */
	virtio_set_status(vdev, S_ACK | S_DRV | S_FOK | S_DOK);
	assert_int_equal(dev.activations, 1);
}

static void test_features_not_offered(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_V1 | VIRTIO_BIT(5));
	assert_false(vdev->status & S_FOK);
	/* DRIVER_OK now is a protocol violation. */
	virtio_set_status(vdev, S_ACK | S_DRV | S_FOK | S_DOK);
	assert_int_equal(dev.activations, 0);
	assert_true(vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_false(virtio_device_live(vdev));
}

static void test_legacy_driver_refused(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_EVIDX);
	assert_false(vdev->status & S_FOK);
}

static void test_features_frozen_after_features_ok(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_V1);
	virtio_driver_features_write(vdev, 0, (uint32_t)F_EVIDX);
	assert_int_equal(vdev->driver_features, F_V1);
	/* The feature-select beyond the two words is ignored. */
	virtio_driver_features_write(vdev, 7, 0xffffffff);
	assert_int_equal(vdev->driver_features, F_V1);
}

static void test_features_ignored_before_driver(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	virtio_set_status(vdev, S_ACK);
	virtio_driver_features_write(vdev, 0, 1);
	assert_int_equal(vdev->driver_features, 0);
	/* FEATURES_OK without DRIVER does not stick. */
	virtio_set_status(vdev, S_ACK | S_FOK);
	assert_false(vdev->status & S_FOK);
}

static void test_status_bits_cannot_be_cleared(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_V1);
	virtio_set_status(vdev, S_ACK);
	assert_int_equal(vdev->status, S_ACK | S_DRV | S_FOK);
	/* The driver cannot set NEEDS_RESET either. */
	virtio_set_status(vdev, S_ACK | VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_false(vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void test_reset(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_V1);
	vdev->vqs[1].enabled = true;
	virtio_set_status(vdev, 0);
	assert_int_equal(vdev->status, 0);
	assert_int_equal(vdev->driver_features, 0);
	assert_int_equal(dev.resets, 1);
	assert_false(vdev->vqs[1].enabled);
}

static void test_activation_failure_needs_reset(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	dev.activate_result = -EIO;
	negotiate(vdev, F_V1);
	virtio_set_status(vdev, S_ACK | S_DRV | S_FOK | S_DOK);
	assert_true(vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_int_equal(dev.config_signals, 1);
	assert_false(virtio_device_live(vdev));
}

static void test_queue_enable_bad_address_needs_reset(void **state)
{
	struct virtio_device *vdev = &dev.vdev;

	negotiate(vdev, F_V1);
	vdev->vqs[0].desc_gpa = 0x10000; /* beyond the 16 KiB of RAM */
	vdev->vqs[0].avail_gpa = 0x1000;
	vdev->vqs[0].used_gpa = 0x2000;
	assert_int_equal(virtio_queue_enable(vdev, 0), -EINVAL);
	assert_true(vdev->status & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_int_equal(virtio_queue_enable(vdev, 2), -EINVAL);
}

static void test_config_access_bounds(void **state)
{
	struct virtio_device *vdev = &dev.vdev;
	uint8_t buf[8];

	memcpy(dev.config, "0123456789ab", 12);
	assert_int_equal(virtio_config_read(vdev, 8, buf, 4), 0);
	assert_memory_equal(buf, "89ab", 4);
	memset(buf, 0x55, sizeof(buf));
	assert_int_equal(virtio_config_read(vdev, 10, buf, 4), -EINVAL);
	assert_int_equal(buf[0], 0); /* refused reads return zeros */
	assert_int_equal(virtio_config_read(vdev, 0xfffffffe, buf, 4), -EINVAL);
	assert_int_equal(virtio_config_write(vdev, 12, buf, 1), -EINVAL);
	assert_int_equal(virtio_config_write(vdev, 0xffffffff, buf, 2),
			 -EINVAL);
	assert_int_equal(virtio_config_write(vdev, 4, (const uint8_t *)"zz", 2),
			 0);
	assert_int_equal(dev.written_off, 4);
	assert_memory_equal(dev.config + 4, "zz", 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_features_check),
		T(test_feature_words),
		T(test_good_handshake),
		T(test_features_not_offered),
		T(test_legacy_driver_refused),
		T(test_features_frozen_after_features_ok),
		T(test_features_ignored_before_driver),
		T(test_status_bits_cannot_be_cleared),
		T(test_reset),
		T(test_activation_failure_needs_reset),
		T(test_queue_enable_bad_address_needs_reset),
		T(test_config_access_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
