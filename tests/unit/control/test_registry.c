// SPDX-License-Identifier: LGPL-2.1-or-later
/* The registry of running VMs: names, the runtime directory, stale entries. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "control/registry.h"

static char dir[64];

/* A socket at PATH; with LISTEN false it is left behind as a dead VM's. */
static int make_socket(const char *path, int listen_too)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	if (listen_too) {
		assert_int_equal(listen(fd, 4), 0);
		return fd;
	}
	close(fd);
	return -1;
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/hvm-registry-XXXXXX");
	assert_non_null(mkdtemp(dir));
	setenv("HINTVM_RUNTIME_DIR", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_names(void **state)
{
	char name[VM_NAME_MAX + 1], again[VM_NAME_MAX + 1];
	char longest[VM_NAME_MAX + 2];

	assert_int_equal(vm_name_check("web-1.prod_a"), 0);
	assert_int_equal(vm_name_check(""), -EINVAL);
	assert_int_equal(vm_name_check(".hidden"), -EINVAL);
	assert_int_equal(vm_name_check("-x"), -EINVAL);
	assert_int_equal(vm_name_check("a/b"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "outside A-Z"));
	assert_int_equal(vm_name_check("a b"), -EINVAL);
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_int_equal(vm_name_check(longest), -EINVAL);
	longest[VM_NAME_MAX] = '\0';
	assert_int_equal(vm_name_check(longest), 0);
	/* Generated names are valid and distinct within a process. */
	registry_default_name(name, sizeof(name));
	registry_default_name(again, sizeof(again));
	assert_int_equal(vm_name_check(name), 0);
	assert_string_not_equal(name, again);
}

static void test_dir(void **state)
{
	char buf[REGISTRY_PATH_MAX];

	assert_int_equal(registry_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, dir);
	assert_int_equal(registry_open_dir(buf, sizeof(buf)), 0);
	/* A directory others may write to is not trusted. */
	chmod(dir, 0777);
	assert_int_equal(registry_open_dir(buf, sizeof(buf)), -EPERM);
	chmod(dir, 0700);
	/* Created when missing. */
	rmdir(dir);
	assert_int_equal(registry_open_dir(buf, sizeof(buf)), 0);
	unsetenv("HINTVM_RUNTIME_DIR");
	setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
	assert_int_equal(registry_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, geteuid() == 0 ? "/run/hintvm"
						: "/run/user/1000/hintvm");
	setenv("HINTVM_RUNTIME_DIR", dir, 1);
}

static void test_list_and_claim(void **state)
{
	char path[REGISTRY_PATH_MAX], entry[REGISTRY_PATH_MAX];
	struct registry_entry *list;
	size_t n;
	int live, elsewhere;

	assert_int_equal(registry_open_dir(path, sizeof(path)), 0);
	snprintf(path, sizeof(path), "%s/alive.sock", dir);
	live = make_socket(path, 1);
	snprintf(path, sizeof(path), "%s/dead.sock", dir);
	make_socket(path, 0);
	/* --control PATH elsewhere: the entry is a link to it. */
	snprintf(path, sizeof(path), "%s/elsewhere", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/elsewhere/ctl", dir);
	elsewhere = make_socket(path, 1);
	snprintf(entry, sizeof(entry), "%s/linked.sock", dir);
	assert_int_equal(registry_link(entry, path), 0);
	snprintf(entry, sizeof(entry), "%s/dangling.sock", dir);
	assert_int_equal(registry_link(entry, "/nonexistent/socket"), 0);
	snprintf(entry, sizeof(entry), "%s/notes.txt", dir);
	close(creat(entry, 0600));

	assert_int_equal(registry_list(dir, true, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "alive");
	assert_string_equal(list[1].name, "linked");
	free(list);
	/* The stale entries are gone, other files are left alone. */
	snprintf(entry, sizeof(entry), "%s/dead.sock", dir);
	assert_int_equal(access(entry, F_OK), -1);
	snprintf(entry, sizeof(entry), "%s/notes.txt", dir);
	assert_int_equal(access(entry, F_OK), 0);

	assert_int_equal(registry_claim(dir, "alive", entry, sizeof(entry)),
			 -EADDRINUSE);
	assert_non_null(strstr(hvm_error_message(), "already running"));
	assert_int_equal(registry_claim(dir, "new", entry, sizeof(entry)), 0);
	snprintf(path, sizeof(path), "%s/new.sock", dir);
	assert_string_equal(entry, path);
	assert_int_equal(registry_claim(dir, "bad/name", entry, sizeof(entry)),
			 -EINVAL);
	/* Not a socket: never replaced. */
	snprintf(path, sizeof(path), "%s/file.sock", dir);
	close(creat(path, 0600));
	assert_int_equal(registry_claim(dir, "file", entry, sizeof(entry)),
			 -EEXIST);

	/* What hintvm ctl accepts. */
	assert_int_equal(registry_resolve("alive", entry, sizeof(entry)), 0);
	snprintf(path, sizeof(path), "%s/alive.sock", dir);
	assert_string_equal(entry, path);
	assert_int_equal(registry_resolve("./x.sock", entry, sizeof(entry)), 0);
	assert_string_equal(entry, "./x.sock");
	assert_int_equal(registry_resolve("nobody", entry, sizeof(entry)),
			 -ENOENT);
	assert_non_null(strstr(hvm_error_message(), "no VM named 'nobody'"));
	assert_int_equal(registry_resolve("a b", entry, sizeof(entry)),
			 -EINVAL);
	close(live);
	close(elsewhere);
	/* Both VMs are gone now: nothing is listed. */
	assert_int_equal(registry_list(dir, true, &list, &n), 0);
	assert_int_equal(n, 0);
	free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_dir),
		cmocka_unit_test(test_list_and_claim),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
