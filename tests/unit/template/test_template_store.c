// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The template store (src/template/store.c), on templates written as
 * `make` writes them (the snapshot's files are opaque to the store):
 * listed with their parts and size; a store, template or file owned by
 * another user or writable by others refused, naming owner and mode; a
 * key file that does not hash to its name refused as corrupt; a template
 * whose kernel changed or whose CPU is another removed by the listing;
 * drop of one, of all, and of a name that is no key.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "base/sha256.h"
#include "core/config.h"
#include "hintvm/hintvm.h"
#include "template/template.h"

static char root[] = "/tmp/hvm-template-store-XXXXXX";
static char store[160], kernel[160];

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/*
 * A template of CFG on HOST in the store, as make leaves it; with
 * OLD_LAYOUT its key text says layout 1, as one made before the shares
 * line (named by that text's hash, so it is no corrupt one).
 */
static void put_template_of(const struct hvm_config *cfg,
			    const struct template_host *host, bool old_layout,
			    char hex[65])
{
	static struct template_key k;
	char path[400];

	assert_int_equal(template_key_gather(cfg, host, &k), 0);
	if (old_layout) {
		uint8_t sum[32];

		assert_memory_equal(k.text, "template=2\n", 11);
		k.text[9] = '1';
		sha256(k.text, k.len, sum);
		sha256_hex(sum, k.hex);
	}
	snprintf(path, sizeof(path), "%s/%s", store, k.hex);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s/key", store, k.hex);
	write_file(path, k.text, k.len);
	snprintf(path, sizeof(path), "%s/%s/origin", store, k.hex);
	write_file(path, k.origin, k.origin_len);
	snprintf(path, sizeof(path), "%s/%s/state", store, k.hex);
	write_file(path, "state", 5);
	snprintf(path, sizeof(path), "%s/%s/memory", store, k.hex);
	write_file(path, "memory", 6);
	memcpy(hex, k.hex, 65);
}

static void put_template(const struct hvm_config *cfg,
			 const struct template_host *host, char hex[65])
{
	put_template_of(cfg, host, false, hex);
}

static struct hvm_config *vm_config(const char *cmdline)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_non_null(cfg);
	assert_int_equal(hvm_config_set(cfg, "kernel", kernel), 0);
	assert_int_equal(hvm_config_set(cfg, "vsock", "cid=3"), 0);
	assert_int_equal(hvm_config_set(cfg, "cmdline", cmdline), 0);
	return cfg;
}

static bool exists(const char *key)
{
	char path[400];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", store, key);
	return stat(path, &st) == 0;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	snprintf(store, sizeof(store), "%s/store", root);
	snprintf(kernel, sizeof(kernel), "%s/vmlinuz", root);
	write_file(kernel, "kernel one", 10);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* Each test starts from an empty store. */
static int fresh(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -m 700 '%s'", store,
		 store);
	write_file(kernel, "kernel one", 10);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_list_and_drop(void **state)
{
	struct template_host host;
	struct hvm_template *t;
	struct hvm_config *a = vm_config("a"), *b = vm_config("b");
	char ka[65], kb[65];
	size_t n;

	(void)state;
	assert_int_equal(template_host_this(&host), 0);
	/* No store at all is an empty one. */
	assert_int_equal(hvm_template_list("/nonexistent/store", &t, &n), 0);
	assert_int_equal(n, 0);
	put_template(a, &host, ka);
	put_template(b, &host, kb);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(t[i].problem, "");
		assert_int_equal(t[i].mem_bytes, 6);
		assert_true(t[i].disk_bytes > 0);
		assert_non_null(strstr(t[i].origin, kernel));
		assert_non_null(strstr(t[i].parts, "cmdline="));
	}
	/* Sorted by key. */
	assert_true(strcmp(t[0].key, t[1].key) < 0);
	hvm_template_list_free(t, n);
	/* Drop one: the other stays. */
	assert_int_equal(hvm_template_drop(store, ka), 0);
	assert_false(exists(ka));
	assert_true(exists(kb));
	assert_int_equal(hvm_template_drop(store, ka), -ENOENT);
	assert_int_equal(hvm_template_drop(store, "../etc"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "64 lower-case hex"));
	/* A make that died (no such pid) left its directory: the listing
	 * removes it; one of a live process (this one) stays. */
	{
		char dead[400], live[400];

		snprintf(dead, sizeof(dead), "%s/.tmp-%.16s-%d", store, ka,
			 999999999);
		snprintf(live, sizeof(live), "%s/.tmp-%.16s-%d", store, ka,
			 (int)getpid());
		assert_int_equal(mkdir(dead, 0700), 0);
		assert_int_equal(mkdir(live, 0700), 0);
		assert_int_equal(hvm_template_list(store, &t, &n), 0);
		hvm_template_list_free(t, n);
		assert_int_equal(access(dead, F_OK), -1);
		assert_int_equal(access(live, F_OK), 0);
		assert_int_equal(rmdir(live), 0);
	}
	/* Drop all. */
	put_template(a, &host, ka);
	assert_int_equal(hvm_template_drop(store, NULL), 0);
	assert_false(exists(ka));
	assert_false(exists(kb));
	hvm_config_free(a);
	hvm_config_free(b);
}

/*
 * Removed by the listing: the kernel changed, another CPU's, a key of
 * another layout (made by a hintvm before the shares line).
 */
static void test_stale_removed(void **state)
{
	struct template_host host, other;
	struct hvm_template *t;
	struct hvm_config *a = vm_config("a"), *b = vm_config("b");
	char ka[65], kb[65];
	size_t n;

	(void)state;
	assert_int_equal(template_host_this(&host), 0);
	put_template_of(a, &host, true, ka);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].removed, 1);
	assert_non_null(strstr(t[0].problem,
			       "its key is of layout 1, this hintvm's is 2"));
	hvm_template_list_free(t, n);
	assert_false(exists(ka));
	other = host;
	snprintf(other.cpu, sizeof(other.cpu), "OtherVendor sig=00000001");
	put_template(a, &host, ka);
	put_template(b, &other, kb);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(t[i].key, kb)) {
			assert_int_equal(t[i].removed, 1);
			assert_non_null(strstr(t[i].problem, "another CPU"));
		} else {
			assert_string_equal(t[i].problem, "");
		}
	}
	hvm_template_list_free(t, n);
	assert_false(exists(kb));
	assert_true(exists(ka));
	/* The kernel it was made from changes: it can no longer match. */
	write_file(kernel, "kernel two", 10);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].removed, 1);
	assert_non_null(strstr(t[0].problem, "changed"));
	assert_non_null(strstr(t[0].problem, kernel));
	hvm_template_list_free(t, n);
	assert_false(exists(ka));
	/* And one whose kernel is gone. */
	put_template(a, &host, ka);
	unlink(kernel);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(t[0].problem, "gone"));
	hvm_template_list_free(t, n);
	assert_false(exists(ka));
	hvm_config_free(a);
	hvm_config_free(b);
}

/* Owner and mode of the store, a template, a file; a corrupt key. */
static void test_refused(void **state)
{
	struct template_host host;
	struct hvm_template *t;
	struct hvm_config *a = vm_config("a");
	char ka[65], path[400];
	size_t n;
	int fd;

	(void)state;
	assert_int_equal(template_host_this(&host), 0);
	put_template(a, &host, ka);
	/* A store others may write is refused, and nothing is listed. */
	assert_int_equal(chmod(store, 0777), 0);
	assert_int_equal(hvm_template_list(store, &t, &n), -EPERM);
	assert_non_null(strstr(hvm_error_message(), "mode 0777"));
	fd = template_dir_open(store, false);
	assert_int_equal(fd, -EPERM);
	assert_int_equal(chmod(store, 0700), 0);
	/* A template file another user owns: refused, not removed. */
	snprintf(path, sizeof(path), "%s/%s/memory", store, ka);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 4321, 4321), 0);
		assert_int_equal(hvm_template_list(store, &t, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(t[0].removed, 0);
		assert_non_null(strstr(t[0].problem, "owned by uid 4321"));
		hvm_template_list_free(t, n);
		assert_true(exists(ka));
		assert_int_equal(chown(path, 0, 0), 0);
		/* The store itself owned by another user. */
		assert_int_equal(chown(store, 4321, 4321), 0);
		assert_int_equal(hvm_template_list(store, &t, &n), -EPERM);
		assert_non_null(
			strstr(hvm_error_message(), "owned by uid 4321"));
		assert_int_equal(chown(store, 0, 0), 0);
	}
	/* A template directory others may write. */
	snprintf(path, sizeof(path), "%s/%s", store, ka);
	assert_int_equal(chmod(path, 0757), 0);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_non_null(strstr(t[0].problem, "mode 0757"));
	hvm_template_list_free(t, n);
	assert_int_equal(chmod(path, 0700), 0);
	/* A key file that does not hash to its name. */
	snprintf(path, sizeof(path), "%s/%s/key", store, ka);
	write_file(path, "template=1\ncpus=9\n", 18);
	assert_int_equal(hvm_template_list(store, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(t[0].problem, "corrupt"));
	assert_int_equal(t[0].removed, 0);
	hvm_template_list_free(t, n);
	assert_true(exists(ka));
	hvm_config_free(a);
}

/* make refuses a store it may not trust before it boots anything. */
static void test_make_refuses_store(void **state)
{
	struct hvm_config *a = vm_config("a");
	char key[65];

	(void)state;
	assert_int_equal(chmod(store, 0770), 0);
	assert_int_equal(hvm_template_make(a, store, 1000, key), -EPERM);
	assert_non_null(strstr(hvm_error_message(), "mode 0770"));
	assert_int_equal(chmod(store, 0700), 0);
	hvm_config_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_list_and_drop, fresh),
		cmocka_unit_test_setup(test_stale_removed, fresh),
		cmocka_unit_test_setup(test_refused, fresh),
		cmocka_unit_test_setup(test_make_refuses_store, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
