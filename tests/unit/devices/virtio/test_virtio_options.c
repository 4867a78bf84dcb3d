// SPDX-License-Identifier: LGPL-2.1-or-later
/* --disk, --net, --rng and --console virtio in the option table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/config.h"
#include "core/log.h"

static void test_disk(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct hvm_config *copy;

	assert_int_equal(hvm_config_set(cfg, "disk", "/img/a.raw"), 0);
	assert_int_equal(hvm_config_set(cfg, "disk", "/img/b.raw,ro,direct"),
			 0);
	assert_int_equal(cfg->nr_disks, 2);
	assert_string_equal(cfg->disks[0].path, "/img/a.raw");
	assert_false(cfg->disks[0].readonly);
	assert_true(cfg->disks[1].readonly);
	assert_true(cfg->disks[1].direct);
	/* Errors name the option and what was expected; nothing is added. */
	assert_int_equal(hvm_config_set(cfg, "disk", "/img/c.raw,rw"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "'rw'"));
	assert_int_equal(hvm_config_set(cfg, "disk", ""), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "disk", ",ro"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "disk", NULL), -EINVAL);
	assert_int_equal(cfg->nr_disks, 2);
	/* The VM's private copy owns its own strings. */
	copy = config_dup(cfg);
	assert_non_null(copy);
	assert_ptr_not_equal(copy->disks[1].path, cfg->disks[1].path);
	assert_string_equal(copy->disks[1].path, "/img/b.raw");
	hvm_config_free(cfg);
	assert_string_equal(copy->disks[0].path, "/img/a.raw");
	hvm_config_free(copy);
}

static void test_disk_limit(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	for (int i = 0; i < HVM_MAX_DISKS; i++)
		assert_int_equal(hvm_config_set(cfg, "disk", "/x"), 0);
	assert_int_equal(hvm_config_set(cfg, "disk", "/x"), -EINVAL);
	hvm_config_free(cfg);
}

static void test_net(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

	assert_int_equal(hvm_config_set(cfg, "net", "tap=tap0"), 0);
	assert_int_equal(
		hvm_config_set(cfg, "net", "tap=tap1,mac=52:54:00:ab:cd:ef"),
		0);
	assert_int_equal(cfg->nr_nets, 2);
	assert_string_equal(cfg->nets[0].tap, "tap0");
	assert_false(cfg->nets[0].mac_set);
	assert_true(cfg->nets[1].mac_set);
	assert_memory_equal(cfg->nets[1].mac, mac, 6);
	/* Bad input: no tap, long name, multicast / zero / malformed MAC. */
	assert_int_equal(hvm_config_set(cfg, "net", "mac=52:54:00:ab:cd:ef"),
			 -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "net", "tap=0123456789abcdef"),
			 -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "net", "tap="), -EINVAL);
	assert_int_equal(
		hvm_config_set(cfg, "net", "tap=t,mac=01:00:5e:00:00:01"),
		-EINVAL);
	assert_int_equal(
		hvm_config_set(cfg, "net", "tap=t,mac=00:00:00:00:00:00"),
		-EINVAL);
	assert_int_equal(hvm_config_set(cfg, "net", "tap=t,mac=52:54:00:ab:cd"),
			 -EINVAL);
	assert_int_equal(
		hvm_config_set(cfg, "net", "tap=t,mac=52:54:00:ab:cd:ef:00"),
		-EINVAL);
	assert_int_equal(hvm_config_set(cfg, "net", "tap=t,vhost=on"), -EINVAL);
	assert_int_equal(cfg->nr_nets, 2);
	hvm_config_free(cfg);
}

static void test_rng_and_console(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_false(cfg->rng);
	assert_int_equal(hvm_config_set(cfg, "rng", NULL), 0);
	assert_true(cfg->rng);
	assert_int_equal(hvm_config_set(cfg, "rng", "off"), 0);
	assert_false(cfg->rng);
	assert_int_equal(hvm_config_set(cfg, "console", "virtio"), 0);
	assert_int_equal(cfg->console, CONSOLE_VIRTIO);
	assert_int_equal(hvm_config_set(cfg, "console", "hvc"), -EINVAL);
	hvm_config_free(cfg);
}

static void test_config_file(void **state)
{
	char path[] = "/tmp/hvm-opts-XXXXXX";
	int fd = mkstemp(path);
	struct hvm_config *cfg = hvm_config_new();
	const char *text = "disk = /img/a.raw,ro\n"
			   "net = tap=tap9\n"
			   "rng\n";

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(hvm_config_load_file(cfg, path), 0);
	assert_int_equal(cfg->nr_disks, 1);
	assert_true(cfg->disks[0].readonly);
	assert_string_equal(cfg->nets[0].tap, "tap9");
	assert_true(cfg->rng);
	unlink(path);
	hvm_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk),
		cmocka_unit_test(test_disk_limit),
		cmocka_unit_test(test_net),
		cmocka_unit_test(test_rng_and_console),
		cmocka_unit_test(test_config_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
