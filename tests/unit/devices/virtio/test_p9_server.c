// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 9P2000.L sessions against p9_server_handle() and a temporary directory,
 * message by message as Linux's client sends them: what a guest's mount
 * would notice (file contents, directory listings, errors), plus the
 * protocol rules a hostile guest tests (lying sizes, unknown types,
 * oversized messages, ".." at the root, the fid bound).
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
#include <sys/stat.h>
#include <sys/xattr.h>
#include <cmocka.h>

#include "base/log.h"
#include "devices/virtio/p9_server.h"
#include "sandboxed_call.h"

#define BUF 65536

struct sess {
	struct p9_server s;
	struct budget *budget; /* NULL but in the budget tests */
	char dir[64];
	uint8_t req[BUF], rep[BUF];
	struct p9_writer w;
	struct p9_reader r;
	uint8_t type;
};

static void begin(struct sess *x, uint8_t type)
{
	x->type = type;
	p9_writer_init(&x->w, x->req, sizeof(x->req), type, 7);
}

struct handle_args {
	struct p9_server *s;
	const uint8_t *req;
	size_t len;
	uint8_t *rep;
	size_t cap;
	size_t out;
};

static void handle_on_worker(void *opaque)
{
	struct handle_args *a = opaque;

	a->out = p9_server_handle(a->s, a->req, a->len, a->rep, a->cap);
}

/* As the worker does: its Landlock domain holds the share (p9_fs.c). */
static void grant_share(void *opaque)
{
	struct handle_args *a = opaque;

	assert_int_equal(p9_fs_grant(&a->s->fs), 0);
}

/*
 * p9_server_handle() as a virtio-9p worker runs it: under the worker's
 * seccomp filter and Landlock domain when HINTVM_TEST_SANDBOX is set
 * (sandboxed_call.h).
 */
static size_t handle(struct p9_server *s, const uint8_t *req, size_t len,
		     uint8_t *rep, size_t cap)
{
	struct handle_args a = { s, req, len, rep, cap, 0 };

	sandboxed_call_prepared(SANDBOX_9P_WORKER, grant_share,
				handle_on_worker, &a);
	return a.out;
}

/* Send what begin() and the puts built: 0, or -ecode of an Rlerror. */
static int call(struct sess *x)
{
	size_t n = p9_writer_finish(&x->w);
	size_t m = handle(&x->s, x->req, n, x->rep, sizeof(x->rep));
	uint8_t type;
	uint16_t tag;

	assert_int_not_equal(m, 0);
	assert_int_equal(p9_reader_init(&x->r, x->rep, m, &type, &tag), 0);
	assert_int_equal(tag, 7);
	if (type == P9_RLERROR)
		return -(int)p9_get_u32(&x->r);
	assert_int_equal(type, x->type + 1);
	return 0;
}

static void put_s(struct sess *x, const char *s)
{
	p9_put_str(&x->w, s, strlen(s));
}

static int version(struct sess *x, uint32_t msize, const char *v)
{
	begin(x, P9_TVERSION);
	p9_put_u32(&x->w, msize);
	put_s(x, v);
	return call(x);
}

static int attach(struct sess *x, uint32_t fid)
{
	begin(x, P9_TATTACH);
	p9_put_u32(&x->w, fid);
	p9_put_u32(&x->w, P9_NOFID);
	put_s(x, "root");
	put_s(x, "");
	p9_put_u32(&x->w, 0);
	return call(x);
}

/* Walk FID to NEWFID through up to 4 names (NULL-terminated). */
static int walk(struct sess *x, uint32_t fid, uint32_t newfid, ...)
{
	const char *names[P9_MAXWELEM + 2];
	unsigned int n = 0;
	va_list ap;

	va_start(ap, newfid);
	while (n < P9_MAXWELEM + 1 && (names[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	begin(x, P9_TWALK);
	p9_put_u32(&x->w, fid);
	p9_put_u32(&x->w, newfid);
	p9_put_u16(&x->w, (uint16_t)n);
	for (unsigned int i = 0; i < n; i++)
		put_s(x, names[i]);
	return call(x);
}

/* Txattrwalk: NEWFID reads FID's xattr NAME ("": the list of names). */
static int xattrwalk(struct sess *x, uint32_t fid, uint32_t newfid,
		     const char *name)
{
	begin(x, P9_TXATTRWALK);
	p9_put_u32(&x->w, fid);
	p9_put_u32(&x->w, newfid);
	put_s(x, name);
	return call(x);
}

static int lopen(struct sess *x, uint32_t fid, uint32_t flags)
{
	begin(x, P9_TLOPEN);
	p9_put_u32(&x->w, fid);
	p9_put_u32(&x->w, flags);
	return call(x);
}

static int clunk(struct sess *x, uint32_t fid)
{
	begin(x, P9_TCLUNK);
	p9_put_u32(&x->w, fid);
	return call(x);
}

/* Read up to COUNT bytes at OFFSET into OUT (NUL-terminated): length. */
static int read_fid(struct sess *x, uint32_t fid, uint64_t offset,
		    uint32_t count, char *out)
{
	uint32_t n;
	int r;

	begin(x, P9_TREAD);
	p9_put_u32(&x->w, fid);
	p9_put_u64(&x->w, offset);
	p9_put_u32(&x->w, count);
	r = call(x);
	if (r)
		return r;
	n = p9_get_u32(&x->r);
	memcpy(out, p9_get_bytes(&x->r, n), n);
	out[n] = '\0';
	return (int)n;
}

static int write_fid(struct sess *x, uint32_t fid, uint64_t offset,
		     const char *data)
{
	int r;

	begin(x, P9_TWRITE);
	p9_put_u32(&x->w, fid);
	p9_put_u64(&x->w, offset);
	p9_put_u32(&x->w, (uint32_t)strlen(data));
	memcpy(p9_put_space(&x->w, strlen(data)), data, strlen(data));
	r = call(x);
	return r ? r : (int)p9_get_u32(&x->r);
}

static void host_write(struct sess *x, const char *name, const char *text)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", x->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static struct sess *start_with(bool readonly, unsigned int max_fids,
			       struct budget *budget)
{
	struct sess *x = calloc(1, sizeof(*x));
	char path[128];

	x->budget = budget;
	snprintf(x->dir, sizeof(x->dir), "/tmp/hvm-p9srv-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(path, sizeof(path), "%s/sub", x->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	host_write(x, "hello", "hello, guest");
	host_write(x, "sub/inner", "inner");
	if (p9_server_init(&x->s, x->dir, readonly, P9_IDS_HOST, max_fids, BUF,
			   x->budget) < 0)
		fail_msg("%s", hvm_error_message());
	assert_int_equal(version(x, 8192, P9_VERSION_L), 0);
	assert_int_equal(attach(x, 0), 0);
	return x;
}

static struct sess *start(bool readonly, unsigned int max_fids)
{
	return start_with(readonly, max_fids, NULL);
}

static void stop(struct sess *x)
{
	char cmd[96];

	p9_server_destroy(&x->s);
	/* Every byte a fid held went back with it. */
	if (x->budget)
		assert_int_equal(atomic_load(&x->budget->used), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	assert_int_equal(system(cmd), 0);
	free(x);
}

static void test_version(void **state)
{
	struct sess *x = start(false, 16);
	char v[16];

	(void)state;
	assert_int_equal(version(x, 1u << 30, P9_VERSION_L), 0);
	assert_int_equal(p9_get_u32(&x->r), BUF); /* clamped to our maximum */
	assert_int_equal(version(x, 8192, "9P2000.u"), 0);
	assert_int_equal(p9_get_u32(&x->r), 8192);
	p9_get_str(&x->r, v, sizeof(v));
	assert_string_equal(v, "unknown");
	assert_int_equal(version(x, 100, P9_VERSION_L), -EINVAL);
	/* Tversion ends the session: fid 0 is gone. */
	assert_int_equal(version(x, 8192, P9_VERSION_L), 0);
	assert_int_equal(walk(x, 0, 1, NULL), -EBADF);
	stop(x);
}

static void test_read_write_create(void **state)
{
	struct sess *x = start(false, 16);
	char buf[64], path[128];
	int fd;

	(void)state;
	assert_int_equal(walk(x, 0, 1, "hello", NULL), 0);
	assert_int_equal(p9_get_u16(&x->r), 1);
	assert_int_equal(lopen(x, 1, 0), 0);
	assert_int_equal(read_fid(x, 1, 0, 64, buf), 12);
	assert_string_equal(buf, "hello, guest");
	assert_int_equal(read_fid(x, 1, 7, 3, buf), 3);
	assert_string_equal(buf, "gue");
	assert_int_equal(write_fid(x, 1, 0, "x"), -EBADF); /* opened ro */
	assert_int_equal(clunk(x, 1), 0);
	assert_int_equal(clunk(x, 1), -EBADF);
	/* Tlcreate turns the directory fid into the new open file. */
	assert_int_equal(walk(x, 0, 2, "sub", NULL), 0);
	begin(x, P9_TLCREATE);
	p9_put_u32(&x->w, 2);
	put_s(x, "new");
	p9_put_u32(&x->w, 2); /* O_RDWR */
	p9_put_u32(&x->w, 0640);
	p9_put_u32(&x->w, 0);
	assert_int_equal(call(x), 0);
	assert_int_equal(write_fid(x, 2, 0, "written by the guest"), 20);
	assert_int_equal(clunk(x, 2), 0);
	snprintf(path, sizeof(path), "%s/sub/new", x->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 20);
	close(fd);
	assert_memory_equal(buf, "written by the guest", 20);
	stop(x);
}

static void test_readdir(void **state)
{
	struct sess *x = start(false, 16);
	bool seen_hello = false, seen_sub = false;
	uint64_t offset = 0;

	(void)state;
	assert_int_equal(walk(x, 0, 1, NULL), 0);
	assert_int_equal(lopen(x, 1, 0), 0);
	for (;;) {
		uint32_t count;
		size_t end;

		begin(x, P9_TREADDIR);
		p9_put_u32(&x->w, 1);
		p9_put_u64(&x->w, offset);
		p9_put_u32(&x->w, 40); /* small: forces several calls */
		assert_int_equal(call(x), 0);
		count = p9_get_u32(&x->r);
		if (!count)
			break;
		end = x->r.off + count;
		while (x->r.off < end) {
			char name[P9_NAME_MAX + 1];
			uint8_t qtype = p9_get_u8(&x->r);

			p9_get_u32(&x->r);
			p9_get_u64(&x->r);
			offset = p9_get_u64(&x->r);
			p9_get_u8(&x->r);
			p9_get_str(&x->r, name, sizeof(name));
			assert_true(p9_reader_ok(&x->r));
			if (!strcmp(name, "hello"))
				seen_hello = true;
			if (!strcmp(name, "sub")) {
				seen_sub = true;
				assert_int_equal(qtype, P9_QTDIR);
			}
		}
	}
	assert_true(seen_hello);
	assert_true(seen_sub);
	stop(x);
}

static void test_dotdot_stops_at_root(void **state)
{
	struct sess *x = start(false, 16);
	char path[128];
	struct stat st;
	uint64_t qpath;

	(void)state;
	assert_int_equal(walk(x, 0, 1, "..", "..", "..", "hello", NULL), 0);
	assert_int_equal(p9_get_u16(&x->r), 4);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(p9_get_u8(&x->r), P9_QTDIR);
		p9_get_u32(&x->r);
		p9_get_u64(&x->r);
	}
	p9_get_u8(&x->r);
	p9_get_u32(&x->r);
	qpath = p9_get_u64(&x->r);
	snprintf(path, sizeof(path), "%s/hello", x->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(qpath, st.st_ino);
	/* Names with a slash, "." and empty ones are no names. */
	assert_int_equal(walk(x, 0, 2, "sub/inner", NULL), -EINVAL);
	assert_int_equal(walk(x, 0, 2, ".", NULL), -EINVAL);
	assert_int_equal(walk(x, 0, 2, "", NULL), -EINVAL);
	/* A partial walk answers the names that worked, makes no fid. */
	assert_int_equal(walk(x, 0, 2, "sub", "missing", NULL), 0);
	assert_int_equal(p9_get_u16(&x->r), 1);
	assert_int_equal(walk(x, 2, 3, NULL), -EBADF);
	assert_int_equal(walk(x, 0, 2, "missing", NULL), -ENOENT);
	stop(x);
}

static void test_rename_moves_fids(void **state)
{
	struct sess *x = start(false, 16);
	char buf[16];

	(void)state;
	assert_int_equal(walk(x, 0, 1, "sub", "inner", NULL), 0);
	assert_int_equal(walk(x, 0, 2, "sub", NULL), 0);
	begin(x, P9_TRENAMEAT);
	p9_put_u32(&x->w, 0);
	put_s(x, "sub");
	p9_put_u32(&x->w, 0);
	put_s(x, "moved");
	assert_int_equal(call(x), 0);
	assert_int_equal(lopen(x, 1, 0), 0);
	assert_int_equal(read_fid(x, 1, 0, 16, buf), 5);
	assert_string_equal(buf, "inner");
	/* Trename: the fid's own file moves. */
	begin(x, P9_TRENAME);
	p9_put_u32(&x->w, 2);
	p9_put_u32(&x->w, 0);
	put_s(x, "again");
	assert_int_equal(call(x), 0);
	assert_int_equal(walk(x, 2, 3, "inner", NULL), 0);
	stop(x);
}

static void test_xattr_messages(void **state)
{
	struct sess *x = start(false, 16);
	char path[128], value[16] = { 0 };
	uint64_t size;

	(void)state;
	assert_int_equal(walk(x, 0, 1, "hello", NULL), 0);
	begin(x, P9_TXATTRCREATE);
	p9_put_u32(&x->w, 1);
	put_s(x, "user.note");
	p9_put_u64(&x->w, 5);
	p9_put_u32(&x->w, 0);
	assert_int_equal(call(x), 0);
	assert_int_equal(write_fid(x, 1, 0, "hi"), 2);
	assert_int_equal(write_fid(x, 1, 2, "there"), -ENOSPC); /* > size */
	assert_int_equal(write_fid(x, 1, 2, "yo!"), 3);
	assert_int_equal(clunk(x, 1), 0); /* now it is set */
	snprintf(path, sizeof(path), "%s/hello", x->dir);
	assert_int_equal(getxattr(path, "user.note", value, sizeof(value)), 5);
	assert_string_equal(value, "hiyo!");
	/* Txattrwalk with a name reads its value through the new fid... */
	assert_int_equal(walk(x, 0, 1, "hello", NULL), 0);
	assert_int_equal(xattrwalk(x, 1, 2, "user.note"), 0);
	size = p9_get_u64(&x->r);
	assert_int_equal(size, 5);
	assert_int_equal(read_fid(x, 2, 0, 64, value), 5);
	assert_string_equal(value, "hiyo!");
	/* ...and without one lists the names. */
	assert_int_equal(xattrwalk(x, 1, 3, ""), 0);
	assert_int_equal(p9_get_u64(&x->r), sizeof("user.note"));
	assert_int_equal(read_fid(x, 3, 0, 64, value), sizeof("user.note"));
	assert_string_equal(value, "user.note");
	assert_int_equal(xattrwalk(x, 1, 4, "user.none"), -ENODATA);
	stop(x);
}

static void test_fids_are_bounded(void **state)
{
	struct sess *x = start(false, 4);

	(void)state;
	assert_int_equal(walk(x, 0, 1, NULL), 0);
	assert_int_equal(walk(x, 0, 2, NULL), 0);
	assert_int_equal(walk(x, 0, 3, NULL), 0);
	assert_int_equal(walk(x, 0, 4, NULL), -EMFILE);
	assert_int_equal(walk(x, 0, 3, NULL), -EEXIST);
	assert_int_equal(clunk(x, 3), 0);
	assert_int_equal(walk(x, 0, 4, NULL), 0);
	stop(x);
}

/*
 * The VM's guest-object budget (--guest-objects): fids past it fail with
 * ENFILE, an xattr value past it with ENOMEM; what a clunk frees can be
 * used again, and nothing is left charged when the session ends.
 */
static void test_fids_and_xattrs_are_charged_to_the_budget(void **state)
{
	struct budget b = { .limit = 4096 };
	struct sess *x = start_with(false, 4096, &b);
	uint32_t fid = 1;
	char path[128], big[2048];

	(void)state;
	while (walk(x, 0, fid, "sub", NULL) == 0)
		fid++;
	assert_true(fid > 4); /* a few fit */
	assert_true(fid < 100);
	assert_int_equal(walk(x, 0, fid, "sub", NULL), -ENFILE);
	assert_int_equal(atomic_load(&b.refused), 2);
	assert_true(atomic_load(&b.used) <= b.limit);
	/* A clunk gives its bytes back. */
	assert_int_equal(clunk(x, fid - 1), 0);
	assert_int_equal(walk(x, 0, fid - 1, "sub", NULL), 0);
	for (uint32_t f = 2; f < fid; f++)
		assert_int_equal(clunk(x, f), 0);
	/* A 2 KiB value fits once; the second reader is refused. */
	memset(big, 'v', sizeof(big));
	snprintf(path, sizeof(path), "%s/hello", x->dir);
	assert_int_equal(setxattr(path, "user.big", big, sizeof(big), 0), 0);
	assert_int_equal(walk(x, 0, 2, "hello", NULL), 0);
	assert_int_equal(xattrwalk(x, 2, 3, "user.big"), 0);
	assert_int_equal(xattrwalk(x, 2, 4, "user.big"), -ENOMEM);
	/* The refused reader left no fid behind. */
	assert_int_equal(clunk(x, 4), -EBADF);
	/* Nor can a writer declare a value the budget cannot hold. */
	begin(x, P9_TXATTRCREATE);
	p9_put_u32(&x->w, 2);
	put_s(x, "user.more");
	p9_put_u64(&x->w, sizeof(big));
	p9_put_u32(&x->w, 0);
	assert_int_equal(call(x), -ENOMEM);
	assert_true(atomic_load(&b.peak) <= b.limit);
	stop(x);
}

static void test_readonly_share(void **state)
{
	struct sess *x = start(true, 16);

	(void)state;
	assert_int_equal(walk(x, 0, 1, "hello", NULL), 0);
	assert_int_equal(lopen(x, 1, 2), -EROFS);
	assert_int_equal(lopen(x, 1, 0), 0);
	begin(x, P9_TMKDIR);
	p9_put_u32(&x->w, 0);
	put_s(x, "d");
	p9_put_u32(&x->w, 0755);
	p9_put_u32(&x->w, 0);
	assert_int_equal(call(x), -EROFS);
	begin(x, P9_TUNLINKAT);
	p9_put_u32(&x->w, 0);
	put_s(x, "hello");
	p9_put_u32(&x->w, 0);
	assert_int_equal(call(x), -EROFS);
	begin(x, P9_TXATTRCREATE);
	p9_put_u32(&x->w, 0);
	put_s(x, "user.a");
	p9_put_u64(&x->w, 1);
	p9_put_u32(&x->w, 0);
	assert_int_equal(call(x), -EROFS);
	stop(x);
}

static void test_broken_messages(void **state)
{
	struct sess *x = start(false, 16);
	uint8_t big[BUF + 16] = { 0 };
	size_t m;

	(void)state;
	/* Size field larger than the message: Rlerror EINVAL, same tag. */
	begin(x, P9_TCLUNK);
	p9_put_u32(&x->w, 0);
	m = p9_writer_finish(&x->w);
	x->req[0]++;
	m = handle(&x->s, x->req, m, x->rep, sizeof(x->rep));
	assert_int_equal(m, 11);
	assert_int_equal(x->rep[4], P9_RLERROR);
	assert_int_equal(x->rep[5], 7);
	assert_int_equal(x->rep[7], EINVAL);
	/* A field missing at the end. */
	begin(x, P9_TWALK);
	p9_put_u32(&x->w, 0);
	p9_put_u32(&x->w, 1);
	p9_put_u16(&x->w, 2);
	put_s(x, "sub");
	assert_int_equal(call(x), -EINVAL);
	/* Too many names. */
	begin(x, P9_TWALK);
	p9_put_u32(&x->w, 0);
	p9_put_u32(&x->w, 1);
	p9_put_u16(&x->w, P9_MAXWELEM + 1);
	assert_int_equal(call(x), -EINVAL);
	/* An R-message, an unknown type, Tauth. */
	begin(x, P9_TCLUNK + 1);
	assert_int_equal(call(x) == -EINVAL, 1);
	begin(x, 200);
	assert_int_equal(call(x), -EOPNOTSUPP);
	begin(x, P9_TAUTH);
	assert_int_equal(call(x), -EOPNOTSUPP);
	/* Larger than msize (8192 here). */
	big[0] = 0x10;
	big[1] = 0x20; /* 0x2010 = 8208 */
	big[4] = P9_TWRITE;
	m = handle(&x->s, big, 0x2010, x->rep, sizeof(x->rep));
	assert_int_equal(x->rep[4], P9_RLERROR);
	assert_int_equal(x->rep[7], EMSGSIZE);
	/* No header: nothing to answer. */
	assert_int_equal(handle(&x->s, big, 5, x->rep, 64), 0);
	/* A reply buffer too small for the reply: ENOBUFS, not an overrun. */
	assert_int_equal(walk(x, 0, 1, "hello", NULL), 0);
	assert_int_equal(lopen(x, 1, 0), 0);
	begin(x, P9_TGETATTR);
	p9_put_u32(&x->w, 1);
	p9_put_u64(&x->w, P9_GETATTR_BASIC);
	m = p9_writer_finish(&x->w);
	m = handle(&x->s, x->req, m, x->rep, 40);
	assert_int_equal(m, 11);
	assert_int_equal(x->rep[7], ENOBUFS);
	stop(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_read_write_create),
		cmocka_unit_test(test_readdir),
		cmocka_unit_test(test_dotdot_stops_at_root),
		cmocka_unit_test(test_rename_moves_fids),
		cmocka_unit_test(test_xattr_messages),
		cmocka_unit_test(test_fids_are_bounded),
		cmocka_unit_test(
			test_fids_and_xattrs_are_charged_to_the_budget),
		cmocka_unit_test(test_readonly_share),
		cmocka_unit_test(test_broken_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
