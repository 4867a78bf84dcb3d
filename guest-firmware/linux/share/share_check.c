// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hvm-share-check: the file-system exerciser of the --share e2e tests and
 * the share benchmark. Static, for the guest (L2) and the host (L1) alike:
 *
 *   hvm-share-check exercise DIR TAG   in the guest, on a 9p mount: create,
 *       write (a large file too), rename, hard link, symlink, unlink,
 *       xattrs, readdir, truncate; then try to plant a setuid file, chown
 *       and a device node. One "E2E-GUEST share TAG ..." line.
 *   hvm-share-check readonly DIR TAG   in the guest: every change fails
 *       with EROFS, reads work.
 *   hvm-share-check verify DIR host|mapped   in L1 after the guest powered
 *       off: the host sees what the guest did, and no setuid or set-gid
 *       file and no device node exists anywhere in DIR.
 *   hvm-share-check bench DIR LABEL [MIB] [FILES]   sequential write/read
 *       MB/s and small-file create/stat rates in DIR. One "E2E-BENCH ..."
 *       line.
 *
 * Exit status 0 when every check held, 1 otherwise (the lines say which).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define LARGE_MIB 8
#define SMALL_TEXT "written by the L2 guest over 9p"

static char failures[2048];
static int nfail;

static void fail(const char *fmt, ...)
{
	size_t len = strlen(failures);
	va_list ap;

	nfail++;
	if (len + 2 >= sizeof(failures))
		return;
	if (len)
		failures[len++] = ',';
	va_start(ap, fmt);
	vsnprintf(failures + len, sizeof(failures) - len, fmt, ap);
	va_end(ap);
	for (char *p = failures + len; *p; p++)
		if (*p == ' ')
			*p = '_';
}

#define CHECK(cond, ...)                   \
	do {                               \
		if (!(cond))               \
			fail(__VA_ARGS__); \
	} while (0)

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)((i * 7 + (i >> 12)) % 251);
}

static int write_all(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n != (ssize_t)len || fsync(fd) < 0) {
		int err = n < 0 ? errno : EIO;

		close(fd);
		return -err;
	}
	return close(fd) < 0 ? -errno : 0;
}

static ssize_t read_all(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Write LARGE_MIB of the pattern in odd-sized pieces, or check it. */
static int large_file(const char *path, bool write)
{
	static uint8_t buf[65536 + 123];
	uint64_t total = (uint64_t)LARGE_MIB << 20, off = 0;
	int fd = open(path, write ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY,
		      0644);

	if (fd < 0)
		return -errno;
	while (off < total) {
		size_t n = sizeof(buf);
		ssize_t done;

		if (n > total - off)
			n = (size_t)(total - off);
		if (write)
			for (size_t i = 0; i < n; i++)
				buf[i] = pattern(off + i);
		done = write ? pwrite(fd, buf, n, (off_t)off)
			     : pread(fd, buf, n, (off_t)off);
		if (done <= 0) {
			close(fd);
			return done < 0 ? -errno : -EIO;
		}
		if (!write)
			for (ssize_t i = 0; i < done; i++)
				if (buf[i] != pattern(off + (uint64_t)i)) {
					close(fd);
					return -EILSEQ;
				}
		off += (uint64_t)done;
	}
	if (write && fsync(fd) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

static const char *err_name(int err)
{
	switch (err) {
	case 0:
		return "ok";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EROFS:
		return "EROFS";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	default:
		return strerror(err);
	}
}

static int cmd_exercise(const char *dir, const char *tag)
{
	char p[512], q[512], buf[256];
	struct stat st, st2;
	int entries = 0, chown_err, mknod_err;
	unsigned int suid_mode = 0;
	DIR *d;

	if (chdir(dir) < 0) {
		printf("E2E-GUEST share %s ok=0 failures=chdir:%s\n", tag,
		       strerror(errno));
		return 1;
	}
	CHECK(write_all("small", SMALL_TEXT, strlen(SMALL_TEXT), 0644) == 0,
	      "create");
	CHECK(read_all("small", buf, sizeof(buf)) ==
			      (ssize_t)strlen(SMALL_TEXT) &&
		      !strcmp(buf, SMALL_TEXT),
	      "read-back");
	CHECK(large_file("large", true) == 0, "large-write");
	CHECK(large_file("large", false) == 0, "large-read");
	CHECK(stat("large", &st) == 0 && st.st_size == LARGE_MIB << 20,
	      "large-size");
	CHECK(mkdir("d", 0755) == 0, "mkdir");
	CHECK(write_all("d/f", "moved", 5, 0600) == 0, "create-in-dir");
	CHECK(rename("d/f", "d/g") == 0, "rename");
	CHECK(rename("d", "d2") == 0, "rename-dir");
	CHECK(read_all("d2/g", buf, sizeof(buf)) == 5 && !strcmp(buf, "moved"),
	      "read-renamed");
	CHECK(link("small", "hard") == 0, "link");
	CHECK(stat("small", &st) == 0 && st.st_nlink == 2 &&
		      stat("hard", &st2) == 0 && st.st_ino == st2.st_ino,
	      "link-nlink");
	CHECK(symlink("small", "link") == 0, "symlink");
	CHECK(readlink("link", buf, sizeof(buf)) == 5 &&
		      !memcmp(buf, "small", 5),
	      "readlink");
	CHECK(read_all("link", buf, sizeof(buf)) > 0 &&
		      !strcmp(buf, SMALL_TEXT),
	      "read-through-symlink");
	CHECK(write_all("gone", "x", 1, 0644) == 0 && unlink("gone") == 0 &&
		      access("gone", F_OK) < 0 && errno == ENOENT,
	      "unlink");
	CHECK(mkdir("emptydir", 0700) == 0 && rmdir("emptydir") == 0, "rmdir");
	CHECK(setxattr("small", "user.e2e", "guest-value", 11, 0) == 0,
	      "setxattr:%s", strerror(errno));
	CHECK(getxattr("small", "user.e2e", buf, sizeof(buf)) == 11 &&
		      !memcmp(buf, "guest-value", 11),
	      "getxattr");
	CHECK(listxattr("small", buf, sizeof(buf)) > 0 &&
		      !strcmp(buf, "user.e2e"),
	      "listxattr");
	CHECK(write_all("trunc", "0123456789", 10, 0644) == 0 &&
		      truncate("trunc", 4) == 0 && stat("trunc", &st) == 0 &&
		      st.st_size == 4,
	      "truncate");
	CHECK(chmod("trunc", 0600) == 0 && stat("trunc", &st) == 0 &&
		      (st.st_mode & 07777) == 0600,
	      "chmod");
	d = opendir(".");
	if (d) {
		struct dirent *e;

		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				entries++;
		closedir(d);
	}
	/* small large d2 hard link trunc */
	CHECK(entries == 6, "readdir:%d", entries);
	/* What a guest root tries: a setuid file, chown, a device node. */
	CHECK(write_all("suid", "#!/bin/sh\n", 10, 0755) == 0, "create-suid");
	chmod("suid", 04755);
	if (stat("suid", &st) == 0)
		suid_mode = st.st_mode & 07777;
	chown_err = chown("suid", 1234, 1234) < 0 ? errno : 0;
	mknod_err = mknod("dev", S_IFCHR | 0666, makedev(1, 3)) < 0 ? errno : 0;
	snprintf(p, sizeof(p), "%s", dir);
	snprintf(q, sizeof(q), "%s", tag);
	printf("E2E-GUEST share %s ok=%d failures=%s suid_mode=%o chown=%s mknod=%s\n",
	       q, nfail == 0, nfail ? failures : "none", suid_mode,
	       err_name(chown_err), err_name(mknod_err));
	return nfail != 0;
}

/* Every change must fail with EROFS; returns the errno it got. */
static void expect_erofs(const char *what, int ret)
{
	if (ret >= 0)
		fail("%s:succeeded", what);
	else if (errno != EROFS)
		fail("%s:%s", what, strerror(errno));
}

static int cmd_readonly(const char *dir, const char *tag)
{
	char buf[256];

	if (chdir(dir) < 0) {
		printf("E2E-GUEST share %s ok=0 failures=chdir\n", tag);
		return 1;
	}
	CHECK(read_all("host-file", buf, sizeof(buf)) > 0, "read");
	expect_erofs("create", open("new", O_WRONLY | O_CREAT, 0644));
	expect_erofs("write", open("host-file", O_WRONLY));
	expect_erofs("truncate", truncate("host-file", 0));
	expect_erofs("mkdir", mkdir("newdir", 0755));
	expect_erofs("unlink", unlink("host-file"));
	expect_erofs("rename", rename("host-file", "renamed"));
	expect_erofs("symlink", symlink("x", "newlink"));
	expect_erofs("chmod", chmod("host-file", 0777));
	expect_erofs("setxattr", setxattr("host-file", "user.x", "y", 1, 0));
	printf("E2E-GUEST share %s ok=%d failures=%s\n", tag, nfail == 0,
	       nfail ? failures : "none");
	return nfail != 0;
}

/* No set-id file and no device node anywhere below DIR (on the host). */
static void scan_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[1024];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0)
			continue;
		if (st.st_mode & (S_ISUID | S_ISGID) && !S_ISDIR(st.st_mode))
			fail("setid:%s", e->d_name);
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			fail("device-node:%s", e->d_name);
		if (S_ISDIR(st.st_mode))
			scan_tree(path);
	}
	closedir(d);
}

static int cmd_verify(const char *dir, const char *mode)
{
	bool mapped = !strcmp(mode, "mapped");
	char buf[256];
	struct stat st, st2;
	uint32_t le;

	if (chdir(dir) < 0) {
		printf("SHARE-VERIFY ok=0 failures=chdir\n");
		return 1;
	}
	CHECK(read_all("small", buf, sizeof(buf)) > 0 &&
		      !strcmp(buf, SMALL_TEXT),
	      "small");
	CHECK(large_file("large", false) == 0, "large");
	CHECK(read_all("d2/g", buf, sizeof(buf)) == 5, "renamed");
	CHECK(access("d", F_OK) < 0 && access("gone", F_OK) < 0, "removed");
	CHECK(stat("small", &st) == 0 && stat("hard", &st2) == 0 &&
		      st.st_ino == st2.st_ino && st.st_nlink == 2,
	      "hardlink");
	CHECK(readlink("link", buf, sizeof(buf)) == 5 &&
		      !memcmp(buf, "small", 5),
	      "symlink");
	CHECK(getxattr("small", "user.e2e", buf, sizeof(buf)) == 11 &&
		      !memcmp(buf, "guest-value", 11),
	      "xattr");
	CHECK(stat("trunc", &st) == 0 && st.st_size == 4, "truncate");
	CHECK(stat("suid", &st) == 0 && !(st.st_mode & (S_ISUID | S_ISGID)),
	      "suid-on-host");
	if (mapped) {
		/*
		 * The guest's owner (its chown also dropped the setuid bit,
		 * as chown does) and device node live in xattrs only.
		 */
		CHECK(getxattr("suid", "user.hintvm.mode", &le, 4) == 4 &&
			      (le & 0777) == 0755,
		      "mapped-mode-xattr");
		CHECK(getxattr("suid", "user.hintvm.uid", &le, 4) == 4 &&
			      le == 1234,
		      "mapped-uid-xattr");
		CHECK(getxattr("dev", "user.hintvm.mode", &le, 4) == 4 &&
			      S_ISCHR(le),
		      "mapped-dev-xattr");
		CHECK(lstat("dev", &st) == 0 && S_ISREG(st.st_mode),
		      "mapped-dev-is-file");
	} else {
		CHECK(lstat("dev", &st) < 0, "dev-exists");
	}
	scan_tree(".");
	printf("SHARE-VERIFY ok=%d failures=%s\n", nfail == 0,
	       nfail ? failures : "none");
	return nfail != 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_bench(const char *dir, const char *label, int mib, int files)
{
	static uint8_t buf[1 << 20];
	double t0, wr, rd, cr, stt;
	char name[64];
	int fd;

	if (chdir(dir) < 0 || mkdir("bench", 0755) < 0 || chdir("bench") < 0) {
		printf("E2E-BENCH name=share label=%s error=%s\n", label,
		       strerror(errno));
		return 1;
	}
	memset(buf, 0x5a, sizeof(buf));
	t0 = now_s();
	fd = open("seq", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; fd >= 0 && i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			fail("write");
	if (fd < 0 || fsync(fd) < 0)
		fail("open-or-fsync");
	close(fd);
	wr = now_s() - t0;
	/* Read back what is not in the guest's page cache (cache=none). */
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd >= 0) {
		sync();
		if (write(fd, "3", 1) < 0)
			fail("drop_caches");
		close(fd);
	}
	t0 = now_s();
	fd = open("seq", O_RDONLY);
	for (int i = 0; fd >= 0 && i < mib; i++)
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			fail("read");
	close(fd);
	rd = now_s() - t0;
	t0 = now_s();
	for (int i = 0; i < files; i++) {
		snprintf(name, sizeof(name), "f%05d", i);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || write(fd, name, 6) != 6)
			fail("create");
		close(fd);
	}
	cr = now_s() - t0;
	t0 = now_s();
	for (int i = 0; i < files; i++) {
		struct stat st;

		snprintf(name, sizeof(name), "f%05d", i);
		if (stat(name, &st) < 0)
			fail("stat");
	}
	stt = now_s() - t0;
	printf("E2E-BENCH name=share label=%s seq_mib=%d write_mb_s=%.1f read_mb_s=%.1f files=%d create_per_s=%.0f stat_per_s=%.0f ok=%d\n",
	       label, mib, mib * 1.048576 / wr, mib * 1.048576 / rd, files,
	       files / cr, files / stt, nfail == 0);
	return nfail != 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "exercise"))
		return cmd_exercise(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "readonly"))
		return cmd_readonly(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "verify"))
		return cmd_verify(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "bench"))
		return cmd_bench(argv[2], argv[3],
				 argc > 4 ? atoi(argv[4]) : 64,
				 argc > 5 ? atoi(argv[5]) : 500);
	fprintf(stderr,
		"usage: hvm-share-check exercise|readonly DIR TAG | verify DIR host|mapped | bench DIR LABEL [MIB] [FILES]\n");
	return 2;
}
