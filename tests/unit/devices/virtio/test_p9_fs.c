// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The confinement and ownership rules of a share (p9_fs.c) against a real
 * temporary directory: a "share" directory next to an "outside" one with
 * a secret in it. Every escape a guest could try through a share path
 * ("..", absolute and relative symlinks, a directory swapped for a
 * symlink between walk and open, names with slashes, links) must fail
 * without touching "outside"; set-id bits and device nodes never reach
 * the host in either id mode; a read-only share refuses every change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <cmocka.h>

#include "base/log.h"
#include "devices/virtio/p9_fs.h"
#include "devices/virtio/p9_server.h"

struct fixture {
	char top[64];
	char share[96];
	char outside[96];
	char secret[128];
	struct p9_fs fs;
};

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static const char *in(struct fixture *f, const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", f->share, name);
	return path;
}

static int setup_mode(void **state, bool readonly, enum p9_id_mode ids)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->top, sizeof(f->top), "/tmp/hvm-p9fs-XXXXXX");
	assert_non_null(mkdtemp(f->top));
	snprintf(f->share, sizeof(f->share), "%s/share", f->top);
	snprintf(f->outside, sizeof(f->outside), "%s/outside", f->top);
	snprintf(f->secret, sizeof(f->secret), "%s/secret", f->outside);
	assert_int_equal(mkdir(f->share, 0755), 0);
	assert_int_equal(mkdir(f->outside, 0755), 0);
	write_file(f->secret, "secret", 0644);
	write_file(in(f, "file"), "hello", 0644);
	assert_int_equal(mkdir(in(f, "dir"), 0755), 0);
	write_file(in(f, "dir/inner"), "inner", 0644);
	assert_int_equal(symlink(f->secret, in(f, "abs")), 0);
	assert_int_equal(symlink("../outside/secret", in(f, "rel")), 0);
	assert_int_equal(symlink(f->outside, in(f, "absdir")), 0);
	if (p9_fs_open(&f->fs, f->share, readonly, ids) < 0)
		fail_msg("%s", hvm_error_message());
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_mode(state, false, P9_IDS_HOST);
}

static int setup_mapped(void **state)
{
	return setup_mode(state, false, P9_IDS_MAPPED);
}

static int setup_ro(void **state)
{
	return setup_mode(state, true, P9_IDS_HOST);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	p9_fs_close(&f->fs);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->top);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void assert_secret_untouched(struct fixture *f)
{
	struct stat st;
	char buf[16] = { 0 };
	int fd = open(f->secret, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 6);
	close(fd);
	assert_string_equal(buf, "secret");
	assert_int_equal(stat(f->secret, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_nlink, 1);
}

/*
 * How a symlink on the way is refused: ELOOP, or ENOTDIR when the symlink
 * is the directory an operation works in (resolved with O_DIRECTORY).
 */
static void assert_refused(int r)
{
	if (r != -ELOOP && r != -ENOTDIR)
		fail_msg("expected ELOOP or ENOTDIR, got %d", r);
}

static void test_names(void **state)
{
	char out[P9_PATH_MAX];

	(void)state;
	assert_true(p9_name_valid("a"));
	assert_true(p9_name_valid("...")); /* an ordinary name */
	assert_false(p9_name_valid(""));
	assert_false(p9_name_valid("."));
	assert_false(p9_name_valid(".."));
	assert_false(p9_name_valid("a/b"));
	assert_false(p9_name_valid("/etc"));
	assert_int_equal(p9_path_join(out, sizeof(out), "", "a"), 0);
	assert_string_equal(out, "a");
	assert_int_equal(p9_path_join(out, sizeof(out), "a", "b"), 0);
	assert_string_equal(out, "a/b");
	assert_int_equal(p9_path_join(out, sizeof(out), "a", "../x"), -EINVAL);
	assert_int_equal(p9_path_join(out, 4, "abc", "d"), -ENAMETOOLONG);
	p9_path_parent(out);
	strcpy(out, "a/b");
	p9_path_parent(out);
	assert_string_equal(out, "a");
	p9_path_parent(out);
	assert_string_equal(out, "");
	p9_path_parent(out); /* ".." of the root is the root */
	assert_string_equal(out, "");
}

/* Share paths a guest cannot build, should one get through anyway. */
static void test_paths_out_are_refused(void **state)
{
	struct fixture *f = *state;
	struct p9_attr a;
	bool is_dir;
	int fd;

	assert_int_not_equal(p9_fs_getattr(&f->fs, "../outside/secret", &a), 0);
	assert_int_not_equal(p9_fs_getattr(&f->fs, f->secret, &a), 0);
	assert_int_not_equal(p9_fs_lopen(&f->fs, "dir/../../outside/secret", 0,
					 &fd, &is_dir),
			     0);
}

static void test_symlinks_are_never_followed(void **state)
{
	struct fixture *f = *state;
	struct p9_attr a;
	char target[256];
	bool is_dir;
	int fd = -1;

	/* The link itself is visible, and says where it points. */
	assert_int_equal(p9_fs_getattr(&f->fs, "abs", &a), 0);
	assert_true(S_ISLNK(a.mode));
	assert_int_equal(a.qid.type, P9_QTSYMLINK);
	assert_int_equal(p9_fs_readlink(&f->fs, "rel", target, sizeof(target)),
			 (int)strlen("../outside/secret"));
	assert_string_equal(target, "../outside/secret");
	/* But nothing opens, reads or walks through it. */
	assert_int_equal(p9_fs_lopen(&f->fs, "abs", 0, &fd, &is_dir), -ELOOP);
	assert_int_equal(p9_fs_lopen(&f->fs, "rel", 2, &fd, &is_dir), -ELOOP);
	assert_int_equal(p9_fs_getattr(&f->fs, "absdir/secret", &a), -ELOOP);
	assert_int_equal(p9_fs_lopen(&f->fs, "absdir/secret", 0, &fd, &is_dir),
			 -ELOOP);
	assert_refused(p9_fs_lcreate(&f->fs, "absdir", "new", 1, 0644, 0, 0,
				     &fd, &a.qid));
	assert_int_equal(p9_fs_xattr_get(&f->fs, "abs", "user.x", NULL, 0),
			 -ENODATA);
	assert_int_equal(fd, -1);
	assert_secret_untouched(f);
}

static void test_setattr_through_symlink_touches_the_link_only(void **state)
{
	struct fixture *f = *state;
	struct p9_setattr sa = { .valid = P9_SETATTR_MODE | P9_SETATTR_MTIME |
					  P9_SETATTR_MTIME_SET,
				 .mode = 0777,
				 .mtime = { .tv_sec = 12345 } };
	struct stat st;

	assert_int_equal(p9_fs_setattr(&f->fs, "abs", &sa), 0);
	sa.valid = P9_SETATTR_SIZE;
	assert_int_not_equal(p9_fs_setattr(&f->fs, "abs", &sa), 0);
	assert_int_equal(lstat(in(f, "abs"), &st), 0);
	assert_int_equal(st.st_mtim.tv_sec, 12345);
	assert_secret_untouched(f);
}

/* A directory walked to, then swapped for a symlink before the open. */
static void test_swap_between_walk_and_open(void **state)
{
	struct fixture *f = *state;
	struct p9_attr a;
	char moved[256];
	bool is_dir;
	int fd = -1;

	write_file(in(f, "dir/secret"), "inside", 0644);
	assert_int_equal(p9_fs_getattr(&f->fs, "dir/secret", &a), 0);
	snprintf(moved, sizeof(moved), "%s/moved", f->top);
	assert_int_equal(rename(in(f, "dir"), moved), 0);
	assert_int_equal(symlink(f->outside, in(f, "dir")), 0);
	assert_int_equal(p9_fs_lopen(&f->fs, "dir/secret", 2, &fd, &is_dir),
			 -ELOOP);
	assert_int_equal(
		p9_fs_setattr(&f->fs, "dir/secret",
			      &(struct p9_setattr){ .valid = P9_SETATTR_SIZE }),
		-ELOOP);
	assert_refused(p9_fs_unlink(&f->fs, "dir", "secret", false));
	assert_refused(p9_fs_rename(&f->fs, "dir", "secret", "", "stolen"));
	assert_refused(p9_fs_link(&f->fs, "dir/secret", "", "stolen"));
	assert_int_equal(fd, -1);
	assert_secret_untouched(f);
}

static void test_links_stay_inside(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	/* A hard link is made of two share paths: no way to name outside. */
	assert_int_equal(p9_fs_link(&f->fs, "file", "", "../outside/x"),
			 -EINVAL);
	assert_int_equal(p9_fs_link(&f->fs, "file", "dir", "copy"), 0);
	assert_int_equal(stat(in(f, "dir/copy"), &st), 0);
	assert_int_equal(st.st_nlink, 2);
	/* A link of a symlink links the symlink, not the secret. */
	assert_int_equal(p9_fs_link(&f->fs, "abs", "", "abs2"), 0);
	assert_int_equal(lstat(in(f, "abs2"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* Renames and unlinks of names with slashes are refused. */
	assert_int_equal(p9_fs_rename(&f->fs, "", "file", "", "../moved"),
			 -EINVAL);
	assert_int_equal(p9_fs_unlink(&f->fs, "", "../outside", true), -EINVAL);
	assert_int_equal(p9_fs_remove(&f->fs, ""), -EBUSY);
	assert_secret_untouched(f);
}

static void test_guest_symlink_cannot_escape(void **state)
{
	struct fixture *f = *state;
	struct p9_qid qid;
	bool is_dir;
	int fd = -1;

	assert_int_equal(
		p9_fs_symlink(&f->fs, "", "evil", f->secret, 0, 0, &qid), 0);
	assert_int_equal(qid.type, P9_QTSYMLINK);
	assert_int_equal(
		p9_fs_lopen(&f->fs, "evil", 1 | P9_DOTL_TRUNC, &fd, &is_dir),
		-ELOOP);
	/* O_CREAT on a dangling or outward symlink does not create there. */
	assert_int_equal(p9_fs_symlink(&f->fs, "", "dangling",
				       "../outside/created", 0, 0, &qid),
			 0);
	assert_int_equal(
		p9_fs_lcreate(&f->fs, "", "dangling", 1, 0644, 0, 0, &fd, &qid),
		-ELOOP);
	{
		char created[160];

		snprintf(created, sizeof(created), "%s/created", f->outside);
		assert_int_equal(access(created, F_OK), -1);
	}
	assert_secret_untouched(f);
}

static void test_device_nodes_are_not_opened(void **state)
{
	struct fixture *f = *state;
	bool is_dir;
	int fd = -1;

	if (mknod(in(f, "null"), S_IFCHR | 0666, makedev(1, 3)) < 0)
		skip(); /* needs CAP_MKNOD */
	assert_int_equal(p9_fs_lopen(&f->fs, "null", 0, &fd, &is_dir), -EACCES);
	assert_int_equal(mkfifo(in(f, "fifo"), 0644), 0);
	assert_int_equal(p9_fs_lopen(&f->fs, "fifo", 0, &fd, &is_dir), -EACCES);
	assert_int_equal(fd, -1);
}

/* Wait (up to 5 s) until PID sleeps, then a little longer. */
static void wait_until_sleeping(pid_t pid)
{
	char path[64], buf[256], *state;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *st = fopen(path, "r");
		bool asleep = false;

		if (st && fgets(buf, sizeof(buf), st) &&
		    (state = strrchr(buf, ')')))
			asleep = state[1] == ' ' && state[2] == 'S';
		if (st)
			fclose(st);
		if (asleep)
			break;
		usleep(10 * 1000);
	}
	usleep(50 * 1000);
}

/*
 * lcreate of a name that exists opens it, but never a FIFO: a writer
 * blocked opening it is the witness, as its open returns the moment
 * anything opens the FIFO for reading.
 */
static void test_lcreate_does_not_open_a_fifo(void **state)
{
	struct fixture *f = *state;
	struct pollfd pfd;
	struct p9_qid qid;
	int witness[2], fd = -1, reader;
	pid_t child;

	assert_int_equal(mkfifo(in(f, "fifo"), 0666), 0);
	assert_int_equal(pipe(witness), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int w = open(in(f, "fifo"), O_WRONLY); /* blocks for a reader */

		_exit(w >= 0 && write(witness[1], "o", 1) == 1 ? 0 : 1);
	}
	close(witness[1]);
	wait_until_sleeping(child); /* in its open */
	assert_int_equal(
		p9_fs_lcreate(&f->fs, "", "fifo", 0, 0644, 0, 0, &fd, &qid),
		-EACCES);
	assert_int_equal(fd, -1);
	pfd = (struct pollfd){ .fd = witness[0], .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 200), 0); /* the writer still waits */
	reader = open(in(f, "fifo"), O_RDONLY); /* now release it */
	assert_true(reader >= 0);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	close(reader);
	close(witness[0]);
	waitpid(child, NULL, 0);
}

static void test_host_ids_strip_setid(void **state)
{
	struct fixture *f = *state;
	struct p9_setattr sa = { .valid = P9_SETATTR_MODE, .mode = 06755 };
	struct p9_qid qid;
	struct stat st;
	int fd;

	assert_int_equal(
		p9_fs_lcreate(&f->fs, "", "suid", 2, 04755, 0, 0, &fd, &qid),
		0);
	close(fd);
	assert_int_equal(stat(in(f, "suid"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(p9_fs_setattr(&f->fs, "suid", &sa), 0);
	assert_int_equal(stat(in(f, "suid"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(p9_fs_mkdir(&f->fs, "", "sgid", 02777, 0, 0, &qid), 0);
	assert_int_equal(stat(in(f, "sgid"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0777); /* exact: no umask */
	/* chown: refused unless it changes nothing. */
	sa = (struct p9_setattr){ .valid = P9_SETATTR_UID, .uid = 1234 };
	assert_int_equal(p9_fs_setattr(&f->fs, "suid", &sa), -EPERM);
	sa.uid = st.st_uid;
	assert_int_equal(p9_fs_setattr(&f->fs, "suid", &sa), 0);
	/* mknod: refused outright, devices and FIFOs alike. */
	assert_int_equal(p9_fs_mknod(&f->fs, "", "sda", S_IFBLK | 0666, 8, 0, 0,
				     0, &qid),
			 -EPERM);
	assert_int_equal(p9_fs_mknod(&f->fs, "", "fifo", S_IFIFO | 0666, 0, 0,
				     0, 0, &qid),
			 -EPERM);
	assert_int_equal(access(in(f, "sda"), F_OK), -1);
}

static void test_host_ids_write_clears_setid(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	bool is_dir;
	int fd;

	write_file(in(f, "tool"), "#!/bin/sh\n", 04755);
	assert_int_equal(p9_fs_lopen(&f->fs, "tool", 0, &fd, &is_dir), 0);
	close(fd);
	assert_int_equal(stat(in(f, "tool"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 04755); /* reading keeps it */
	assert_int_equal(p9_fs_lopen(&f->fs, "tool", 2, &fd, &is_dir), 0);
	close(fd);
	assert_int_equal(stat(in(f, "tool"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
}

static void test_mapped_ids_live_in_xattrs(void **state)
{
	struct fixture *f = *state;
	struct p9_setattr sa = { .valid = P9_SETATTR_UID | P9_SETATTR_GID |
					  P9_SETATTR_MODE,
				 .uid = 0,
				 .gid = 0,
				 .mode = 04711 };
	struct p9_attr a;
	struct p9_qid qid;
	struct stat st;
	char list[256];
	int fd, n;

	assert_int_equal(p9_fs_lcreate(&f->fs, "", "bin", 2, 06755, 1000, 100,
				       &fd, &qid),
			 0);
	close(fd);
	assert_int_equal(stat(in(f, "bin"), &st), 0);
	assert_int_equal(st.st_mode & 07000, 0); /* never set-id on the host */
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(p9_fs_getattr(&f->fs, "bin", &a), 0);
	assert_int_equal(a.mode, S_IFREG | 06755);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 100);
	/* chown and chmod change the guest's view only. */
	assert_int_equal(p9_fs_setattr(&f->fs, "bin", &sa), 0);
	assert_int_equal(p9_fs_getattr(&f->fs, "bin", &a), 0);
	assert_int_equal(a.mode, S_IFREG | 04711);
	assert_int_equal(a.uid, 0);
	assert_int_equal(stat(in(f, "bin"), &st), 0);
	assert_int_equal(st.st_mode & 07000, 0);
	/* A device node is a plain 0600 file on the host. */
	assert_int_equal(p9_fs_mknod(&f->fs, "", "sda", S_IFBLK | 0660, 8, 1, 0,
				     6, &qid),
			 0);
	assert_int_equal(stat(in(f, "sda"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(p9_fs_getattr(&f->fs, "sda", &a), 0);
	assert_true(S_ISBLK(a.mode));
	assert_int_equal(a.rdev, makedev(8, 1));
	assert_int_equal(a.gid, 6);
	/* Directories keep their type whatever the xattr claims. */
	assert_int_equal(p9_fs_mkdir(&f->fs, "", "d", 0750, 5, 5, &qid), 0);
	assert_int_equal(p9_fs_getattr(&f->fs, "d", &a), 0);
	assert_int_equal(a.mode, S_IFDIR | 0750);
	/* The mapping xattrs are hidden from the guest and not settable. */
	n = p9_fs_xattr_list(&f->fs, "bin", list, sizeof(list));
	assert_int_equal(n, 0);
	assert_int_equal(p9_fs_xattr_get(&f->fs, "bin",
					 P9_MAPPED_XATTR_PREFIX "uid", NULL, 0),
			 -ENODATA);
	assert_int_equal(p9_fs_xattr_set(&f->fs, "bin",
					 P9_MAPPED_XATTR_PREFIX "uid", "\0\0\0",
					 4, 0, false),
			 -EOPNOTSUPP);
}

static void test_xattrs(void **state)
{
	struct fixture *f = *state;
	char buf[64];
	int n;

	assert_int_equal(p9_fs_xattr_set(&f->fs, "file", "user.color", "blue",
					 4, 0, false),
			 0);
	assert_int_equal(p9_fs_xattr_get(&f->fs, "file", "user.color", NULL, 0),
			 4);
	n = p9_fs_xattr_get(&f->fs, "file", "user.color", buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "blue", 4);
	n = p9_fs_xattr_list(&f->fs, "file", buf, sizeof(buf));
	assert_int_equal(n, (int)sizeof("user.color"));
	assert_string_equal(buf, "user.color");
	/* No other namespace: security.capability would be a privilege. */
	assert_int_equal(p9_fs_xattr_set(&f->fs, "file", "security.capability",
					 "x", 1, 0, false),
			 -EOPNOTSUPP);
	assert_int_equal(
		p9_fs_xattr_set(&f->fs, "file", "trusted.x", "x", 1, 0, false),
		-EOPNOTSUPP);
	assert_int_equal(
		p9_fs_xattr_get(&f->fs, "file", "security.selinux", NULL, 0),
		-ENODATA);
	assert_int_equal(
		p9_fs_xattr_set(&f->fs, "file", "user.color", NULL, 0, 0, true),
		0);
	assert_int_equal(p9_fs_xattr_get(&f->fs, "file", "user.color", NULL, 0),
			 -ENODATA);
}

static void test_readonly_refuses_changes(void **state)
{
	struct fixture *f = *state;
	struct p9_setattr sa = { .valid = P9_SETATTR_MODE, .mode = 0600 };
	struct p9_qid qid;
	bool is_dir;
	int fd;

	assert_int_equal(p9_fs_lopen(&f->fs, "file", 0, &fd, &is_dir), 0);
	close(fd);
	assert_int_equal(p9_fs_lopen(&f->fs, "file", 1, &fd, &is_dir), -EROFS);
	assert_int_equal(p9_fs_lopen(&f->fs, "file", 2, &fd, &is_dir), -EROFS);
	assert_int_equal(
		p9_fs_lopen(&f->fs, "file", P9_DOTL_TRUNC, &fd, &is_dir),
		-EROFS);
	assert_int_equal(
		p9_fs_lcreate(&f->fs, "", "n", 1, 0644, 0, 0, &fd, &qid),
		-EROFS);
	assert_int_equal(p9_fs_mkdir(&f->fs, "", "n", 0755, 0, 0, &qid),
			 -EROFS);
	assert_int_equal(p9_fs_symlink(&f->fs, "", "n", "x", 0, 0, &qid),
			 -EROFS);
	assert_int_equal(
		p9_fs_mknod(&f->fs, "", "n", S_IFIFO, 0, 0, 0, 0, &qid),
		-EROFS);
	assert_int_equal(p9_fs_link(&f->fs, "file", "", "n"), -EROFS);
	assert_int_equal(p9_fs_rename(&f->fs, "", "file", "", "n"), -EROFS);
	assert_int_equal(p9_fs_unlink(&f->fs, "", "file", false), -EROFS);
	assert_int_equal(p9_fs_remove(&f->fs, "file"), -EROFS);
	assert_int_equal(p9_fs_setattr(&f->fs, "file", &sa), -EROFS);
	assert_int_equal(
		p9_fs_xattr_set(&f->fs, "file", "user.a", "b", 1, 0, false),
		-EROFS);
	assert_int_equal(access(in(f, "file"), F_OK), 0);
	assert_int_equal(access(in(f, "n"), F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_paths_out_are_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_symlinks_are_never_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_setattr_through_symlink_touches_the_link_only,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap_between_walk_and_open,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_stay_inside, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_guest_symlink_cannot_escape, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_device_nodes_are_not_opened, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_lcreate_does_not_open_a_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_ids_strip_setid,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_host_ids_write_clears_setid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapped_ids_live_in_xattrs,
						setup_mapped, teardown),
		cmocka_unit_test_setup_teardown(test_xattrs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_refuses_changes,
						setup_ro, teardown),
	};

	int failed;

	log_set_level(LOG_ERROR);
	/* Every rule twice: confined by openat2, then by the fd walk. */
	failed = cmocka_run_group_tests_name("openat2", tests, NULL, NULL);
	p9_fs_force_fd_walk(true);
	failed += cmocka_run_group_tests_name("fd-walk", tests, NULL, NULL);
	return failed;
}
