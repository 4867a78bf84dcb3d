// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A template's key (src/template/key.c): the same inputs give the same
 * key; changing any one input (a byte of the kernel or initrd, an option
 * that shapes the guest, the snapshot formats, the host CPU) changes it;
 * what is a clone's own (its name, vsock CID and socket) or where a file
 * lies does not; a share counts by its tag, not its directory. What a template cannot hold is refused, naming it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "core/config.h"
#include "hintvm/hintvm.h"
#include "template/template.h"

static char dir[] = "/tmp/hvm-template-key-XXXXXX";
static char kernel[128], kernel2[128], initrd[128];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const struct template_host host = {
	.cpu = "GenuineIntel sig=000806f8 f1=1:2",
	.snapshot_format = 1,
	.virtio_state = 1,
};

/* The base VM: a kernel file, an initrd, vsock, 1 vCPU, 64M. */
static struct hvm_config *base(void)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_non_null(cfg);
	assert_int_equal(hvm_config_set(cfg, "kernel", kernel), 0);
	assert_int_equal(hvm_config_set(cfg, "initrd", initrd), 0);
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=3"), 0);
	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(hvm_config_set(cfg, "cmdline", "console=ttyS0"), 0);
	return cfg;
}

static void key_of(const struct hvm_config *cfg, const struct template_host *h,
		   char hex[65])
{
	static struct template_key k;

	assert_int_equal(template_key_gather(cfg, h, &k), 0);
	assert_true(template_key_valid(k.hex));
	memcpy(hex, k.hex, 65);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(kernel, sizeof(kernel), "%s/vmlinuz", dir);
	snprintf(kernel2, sizeof(kernel2), "%s/vmlinuz-copy", dir);
	snprintf(initrd, sizeof(initrd), "%s/initrd", dir);
	write_file(kernel, "a kernel image");
	write_file(kernel2, "a kernel image");
	write_file(initrd, "an initrd");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(kernel);
	unlink(kernel2);
	unlink(initrd);
	rmdir(dir);
	return 0;
}

static void test_same_inputs_same_key(void **state)
{
	struct hvm_config *a = base(), *b = base();
	char ka[65], kb[65];

	(void)state;
	key_of(a, &host, ka);
	key_of(a, &host, kb);
	assert_string_equal(ka, kb);
	/* A second config with the same settings, and a clone's own
	 * identity, which is no part of the key. */
	assert_int_equal(hvm_config_set(b, "name", "clone7"), 0);
	b->vsock.enabled = false; /* one vsock device: this one instead */
	assert_int_equal(hvm_config_set(b, "vsock", "cid=7,uds=/tmp/c7.sock"),
			 0);
	assert_int_equal(hvm_config_set(b, "control", "none"), 0);
	key_of(b, &host, kb);
	assert_string_equal(ka, kb);
	/* The same kernel under another path: contents, not names. */
	assert_int_equal(hvm_config_set(b, "kernel", kernel2), 0);
	key_of(b, &host, kb);
	assert_string_equal(ka, kb);
	hvm_config_free(a);
	hvm_config_free(b);
}

/* Each option that shapes the guest, set to another value. */
static void test_each_option_changes_key(void **state)
{
	static const char *const changes[][2] = {
		{ "cpus", "2" },	 { "mem", "128M" },
		{ "cmdline", "quiet" },	 { "irqchip", "kernel" },
		{ "console", "virtio" }, { "rng", NULL },
		{ "initrd", "" },
	};
	char keys[sizeof(changes) / sizeof(changes[0]) + 1][65];
	struct hvm_config *cfg = base();
	size_t n = sizeof(changes) / sizeof(changes[0]);

	(void)state;
	key_of(cfg, &host, keys[0]);
	hvm_config_free(cfg);
	for (size_t i = 0; i < n; i++) {
		cfg = base();
		if (!strcmp(changes[i][0], "initrd")) {
			free(cfg->initrd); /* no initrd at all */
			cfg->initrd = NULL;
		} else {
			assert_int_equal(hvm_config_set(cfg, changes[i][0],
							changes[i][1]),
					 0);
		}
		key_of(cfg, &host, keys[i + 1]);
		hvm_config_free(cfg);
		/* Differs from the base and from every other change. */
		for (size_t j = 0; j <= i; j++)
			if (!strcmp(keys[i + 1], keys[j]))
				fail_msg("changing %s gave the key of case %zu",
					 changes[i][0], j);
	}
}

/* A byte of the kernel or the initrd. */
static void test_file_contents_change_key(void **state)
{
	struct hvm_config *cfg = base();
	char before[65], after[65];

	(void)state;
	key_of(cfg, &host, before);
	write_file(kernel, "a kernel imagE");
	key_of(cfg, &host, after);
	assert_string_not_equal(before, after);
	write_file(kernel, "a kernel image");
	key_of(cfg, &host, after);
	assert_string_equal(before, after);
	write_file(initrd, "an initrD");
	key_of(cfg, &host, after);
	assert_string_not_equal(before, after);
	write_file(initrd, "an initrd");
	/* The built-in test kernel is a kernel of its own. */
	free(cfg->kernel);
	cfg->kernel = NULL;
	key_of(cfg, &host, after);
	assert_string_not_equal(before, after);
	hvm_config_free(cfg);
}

/* This hintvm's snapshot formats and this host's CPU. */
static void test_host_changes_key(void **state)
{
	struct template_host other = host;
	struct hvm_config *cfg = base();
	char before[65], after[65];

	(void)state;
	key_of(cfg, &host, before);
	other.snapshot_format = 2;
	key_of(cfg, &other, after);
	assert_string_not_equal(before, after);
	other = host;
	other.virtio_state = 2;
	key_of(cfg, &other, after);
	assert_string_not_equal(before, after);
	other = host;
	other.cpu[strlen(other.cpu) - 1] = '3'; /* one feature bit */
	key_of(cfg, &other, after);
	assert_string_not_equal(before, after);
	hvm_config_free(cfg);
}

/*
 * Shares are in the key by tag, in order: the guest knows a share by
 * the tag it probed; the directory (and ro) is each clone's own.
 */
static void test_shares_by_tag(void **state)
{
	struct hvm_config *a = base(), *b = base(), *c = base();
	char none[65], ka[65], kb[65];

	(void)state;
	key_of(a, &host, none);
	assert_int_equal(hvm_config_set(a, "share", "/tmp,tag=pod"), 0);
	key_of(a, &host, ka);
	assert_string_not_equal(none, ka);
	assert_int_equal(hvm_config_set(b, "share", "/var,tag=pod,ro"), 0);
	key_of(b, &host, kb);
	assert_string_equal(ka, kb);
	assert_int_equal(hvm_config_set(c, "share", "/tmp,tag=other"), 0);
	key_of(c, &host, kb);
	assert_string_not_equal(ka, kb);
	assert_int_equal(hvm_config_set(a, "share", "/tmp,tag=two"), 0);
	assert_int_equal(hvm_config_set(c, "share", "/tmp,tag=pod"), 0);
	key_of(a, &host, ka);
	key_of(c, &host, kb);
	assert_string_not_equal(ka, kb); /* pod,two is not other,pod */
	hvm_config_free(a);
	hvm_config_free(b);
	hvm_config_free(c);
}

/* The real host: its CPU id is stable and names the vendor. */
static void test_this_host(void **state)
{
	struct template_host a, b;

	(void)state;
	assert_int_equal(template_host_this(&a), 0);
	assert_int_equal(template_host_this(&b), 0);
	assert_string_equal(a.cpu, b.cpu);
	assert_true(strstr(a.cpu, "sig=") != NULL);
	assert_true(!strncmp(a.cpu, "GenuineIntel", 12) ||
		    !strncmp(a.cpu, "AuthenticAMD", 12) ||
		    !strncmp(a.cpu, "HygonGenuine", 12));
}

static void expect_refused(struct hvm_config *cfg, const char *needle)
{
	static struct template_key k;

	assert_int_equal(template_key_gather(cfg, &host, &k), -EINVAL);
	if (!strstr(hvm_error_message(), needle))
		fail_msg("'%s' does not name %s", hvm_error_message(), needle);
	hvm_config_free(cfg);
}

static void test_refusals(void **state)
{
	struct hvm_config *cfg;

	(void)state;
	cfg = base();
	assert_int_equal(hvm_config_set(cfg, "disk", kernel), 0);
	expect_refused(cfg, "--disk");
	cfg = base();
	assert_int_equal(hvm_config_set(cfg, "init-args", "/bin/true"), 0);
	expect_refused(cfg, "--init-args");
	cfg = base();
	cfg->vsock.enabled = false;
	expect_refused(cfg, "needs --agent");
	cfg = base();
	assert_int_equal(hvm_config_set(cfg, "cmdline", "a\nb"), 0);
	expect_refused(cfg, "line break");
	/* A file that is not there is named. */
	cfg = base();
	assert_int_equal(hvm_config_set(cfg, "initrd", "/nonexistent/initrd"),
			 0);
	{
		static struct template_key k;

		assert_int_equal(template_key_gather(cfg, &host, &k), -ENOENT);
		assert_non_null(
			strstr(hvm_error_message(), "/nonexistent/initrd"));
	}
	hvm_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_inputs_same_key),
		cmocka_unit_test(test_each_option_changes_key),
		cmocka_unit_test(test_file_contents_change_key),
		cmocka_unit_test(test_host_changes_key),
		cmocka_unit_test(test_this_host),
		cmocka_unit_test(test_shares_by_tag),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
