// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the 9P server (p9_server.c, p9_fs.c, p9_fid.c,
 * p9_proto.c) on a real temporary directory: each input is a session of
 * messages (len[2] then that many bytes, the size field patched to the
 * length unless the first input byte says to leave lies in place) after a
 * Tversion and a Tattach of fid 0. Byte 0 also picks ids=host/mapped and
 * ro. Invariants: every reply fits its buffer, its size field is its
 * length, its tag is the request's; and nothing outside the share changes
 * (a sentinel directory next to it holds one file with known content, and
 * the share's parent holds nothing else), whatever the session did.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <endian.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "devices/virtio/p9_server.h"
#include "fuzz.h"

#define MSIZE 8192
#define SENTINEL "outside the share"

static char top[64], share[96], outside[96], secret[128];
static uint8_t reply[MSIZE];

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc, (void)argv;
	log_set_level(LOG_ERROR);
	snprintf(top, sizeof(top), "/tmp/hvm-fuzz-p9-XXXXXX");
	if (!mkdtemp(top))
		return -1;
	snprintf(share, sizeof(share), "%s/share", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	snprintf(secret, sizeof(secret), "%s/secret", outside);
	mkdir(outside, 0755);
	fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, SENTINEL, strlen(SENTINEL)) < 0)
		return -1;
	close(fd);
	return 0;
}

/* A fresh share: a file, a directory and symlinks pointing out. */
static void make_share(void)
{
	char path[160];
	int fd;

	nftw(share, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(share, 0755);
	snprintf(path, sizeof(path), "%s/file", share);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		check(write(fd, "data", 4) == 4);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/dir", share);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/out", share);
	check(symlink(outside, path) == 0);
	snprintf(path, sizeof(path), "%s/secret", share);
	check(symlink("../outside/secret", path) == 0);
}

static void check_outside_untouched(void)
{
	char buf[64] = { 0 };
	struct stat st;
	int fd = open(secret, O_RDONLY), entries = 0;
	DIR *d;
	struct dirent *e;

	check(fd >= 0);
	check(read(fd, buf, sizeof(buf)) == (ssize_t)strlen(SENTINEL));
	close(fd);
	check(!strcmp(buf, SENTINEL));
	check(stat(secret, &st) == 0 && (st.st_mode & 07777) == 0644 &&
	      st.st_nlink == 1);
	d = opendir(outside);
	check(d);
	while ((e = readdir(d)))
		entries++;
	closedir(d);
	check(entries == 3); /* ".", "..", "secret" */
	d = opendir(top);
	check(d);
	entries = 0;
	while ((e = readdir(d)))
		entries++;
	closedir(d);
	check(entries == 4); /* ".", "..", "share", "outside" */
}

static void serve(struct p9_server *s, uint8_t *msg, size_t len)
{
	size_t n = p9_server_handle(s, msg, len, reply, sizeof(reply));
	uint32_t size;

	check(n <= sizeof(reply));
	if (len < P9_HDR_SIZE) {
		check(n == 0);
		return;
	}
	check(n >= P9_HDR_SIZE); /* Rclunk and friends: a bare header */
	memcpy(&size, reply, 4);
	check(le32toh(size) == n);
	check(reply[5] == msg[5] && reply[6] == msg[6]);
	check(reply[4] & 1); /* an R-message */
}

static void start_session(struct p9_server *s)
{
	uint8_t msg[64];
	struct p9_writer w;

	p9_writer_init(&w, msg, sizeof(msg), P9_TVERSION, P9_NOTAG);
	p9_put_u32(&w, MSIZE);
	p9_put_str(&w, P9_VERSION_L, strlen(P9_VERSION_L));
	serve(s, msg, p9_writer_finish(&w));
	p9_writer_init(&w, msg, sizeof(msg), P9_TATTACH, 1);
	p9_put_u32(&w, 0);
	p9_put_u32(&w, P9_NOFID);
	p9_put_str(&w, "", 0);
	p9_put_str(&w, "", 0);
	p9_put_u32(&w, 0);
	serve(s, msg, p9_writer_finish(&w));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t msg[MSIZE + 64];
	/* Small, so that inputs reach the refusals; flag 8: none at all. */
	struct budget budget = { .limit = 8192 };
	struct p9_server s;
	uint8_t flags;

	if (size < 1)
		return 0;
	flags = data[0];
	data++, size--;
	make_share();
	if (p9_server_init(&s, share, flags & 1,
			   (flags & 2) ? P9_IDS_MAPPED : P9_IDS_HOST, 32, MSIZE,
			   (flags & 8) ? NULL : &budget) < 0)
		abort();
	start_session(&s);
	while (size >= 2) {
		size_t len = (size_t)(data[0] | (data[1] << 8));

		data += 2, size -= 2;
		if (len > size)
			len = size;
		if (len > sizeof(msg))
			len = sizeof(msg);
		memcpy(msg, data, len);
		if (!(flags & 4) && len >= 4) {
			uint32_t le = htole32((uint32_t)len);

			memcpy(msg, &le, 4);
		}
		serve(&s, msg, len);
		data += len, size -= len;
	}
	p9_server_destroy(&s);
	check_outside_untouched();
	/* The budget never passed its limit, and got back every byte. */
	if (atomic_load(&budget.used) ||
	    atomic_load(&budget.peak) > budget.limit)
		abort();
	return 0;
}
