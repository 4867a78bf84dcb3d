// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --disk, --net, --rng, --console virtio, --vsock and --share in the option
 * table.
 */
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

#include "base/log.h"
#include "core/config.h"

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

static void test_vsock(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct hvm_config *copy;
	char longpath[128];

	assert_false(cfg->vsock.enabled);
	/* CIDs 0-2 are reserved, 2^32-1 is VMADDR_CID_ANY. */
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=2"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "'2'"));
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=4294967295"),
			 -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=x"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "vsock", "uds=/run/v.sock"),
			 -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "cid"));
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=3,port=1"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "'port=1'"));
	/* PATH_4294967295 must fit a sockaddr_un too. */
	memset(longpath, 'a', sizeof(longpath));
	memcpy(longpath, "cid=3,uds=/", 11);
	longpath[11 + 96] = 0;
	assert_int_equal(hvm_config_set(cfg, "vsock", longpath), -EINVAL);
	longpath[10 + 96] = 0;
	assert_int_equal(hvm_config_set(cfg, "vsock", longpath), 0);
	hvm_config_free(cfg);

	cfg = hvm_config_new();
	assert_int_equal(
		hvm_config_set(cfg, "vsock", "cid=4294967294,uds=/run/v.sock"),
		0);
	assert_true(cfg->vsock.enabled);
	assert_int_equal(cfg->vsock.cid, 4294967294ull);
	assert_string_equal(cfg->vsock.uds, "/run/v.sock");
	/* One device per VM. */
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=5"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "at most one"));
	copy = config_dup(cfg);
	assert_non_null(copy);
	assert_ptr_not_equal(copy->vsock.uds, cfg->vsock.uds);
	assert_string_equal(copy->vsock.uds, "/run/v.sock");
	hvm_config_free(copy);
	hvm_config_free(cfg);
	/* Without uds=: hintvm's own host services only. */
	cfg = hvm_config_new();
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=3"), 0);
	assert_null(cfg->vsock.uds);
	hvm_config_free(cfg);
}

static void test_share(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct hvm_config *copy;

	(void)state;
	assert_int_equal(hvm_config_set(cfg, "share", "/srv/a,tag=a"), 0);
	assert_int_equal(hvm_config_set(cfg, "share",
					"/srv/b,ro,tag=root.fs-1,ids=mapped"),
			 0);
	assert_int_equal(cfg->nr_shares, 2);
	assert_string_equal(cfg->shares[0].path, "/srv/a");
	assert_string_equal(cfg->shares[0].tag, "a");
	assert_false(cfg->shares[0].readonly);
	assert_false(cfg->shares[0].ids_mapped);
	assert_string_equal(cfg->shares[1].tag, "root.fs-1");
	assert_true(cfg->shares[1].readonly);
	assert_true(cfg->shares[1].ids_mapped);
	/* A tag is required, typeable, unique; options are known ones. */
	assert_int_equal(hvm_config_set(cfg, "share", "/srv/c"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "needs a mount tag"));
	assert_int_equal(hvm_config_set(cfg, "share", "/srv/c,tag=a b"),
			 -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "share", "/srv/c,tag="), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "share", "/srv/c,tag=a"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "already used"));
	assert_int_equal(hvm_config_set(cfg, "share", "/srv/c,tag=c,rw"),
			 -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "share", ",tag=c"), -EINVAL);
	assert_int_equal(cfg->nr_shares, 2);
	copy = config_dup(cfg);
	assert_non_null(copy);
	assert_string_equal(copy->shares[1].path, "/srv/b");
	assert_string_equal(copy->shares[1].tag, "root.fs-1");
	hvm_config_free(cfg);
	hvm_config_free(copy);
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
		cmocka_unit_test(test_vsock),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_config_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
