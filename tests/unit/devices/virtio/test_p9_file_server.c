// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * server=process (p9_file_server.h): whole 9P sessions from the VMM's end
 * of the sockets, first against p9_file_server_serve() on a thread over
 * socketpairs (the wire: messages, msize, resets by generation, a stale
 * request, a lying header, the server going away), then against a real
 * forked file-server process where we may (root: its mount namespace):
 * only CAP_DAC_OVERRIDE and CAP_FOWNER, no_new_privs, its root is the
 * share, it reads a file root's mode bits refuse, its own death is EIO
 * and counted, and it is reaped. Without CAP_SYS_ADMIN the start fails
 * with a message that says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "devices/virtio/p9_file_server.h"
#include "devices/virtio/p9_server.h"
#include "sandbox/sandbox.h"

#define BUF 65536
#define CHANNELS 2

struct fx {
	char dir[64];
	struct p9_server server; /* the thread mode's */
	struct p9_file_server fs;
	int far[CHANNELS];
	pthread_t serving;
	bool threaded;
	_Atomic uint64_t deaths;
	struct budget report; /* the VM's sum of its servers' budgets */
	uint32_t generation;
	uint8_t req[BUF], rep[BUF];
	struct p9_writer w;
	struct p9_reader r;
	uint8_t type;
};

static void make_share(struct fx *f)
{
	char path[128];
	int fd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/hvm-p9fs-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/hello", f->dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, "hello, 9p", 9), 9);
	close(fd);
	/* Mode 0: root reads it only with CAP_DAC_OVERRIDE. */
	snprintf(path, sizeof(path), "%s/locked", f->dir);
	fd = open(path, O_WRONLY | O_CREAT, 0000);
	assert_int_equal(write(fd, "secret", 6), 6);
	close(fd);
	assert_int_equal(chown(path, 12345, 12345) < 0 && getuid() == 0, 0);
}

static void *serve_thread(void *arg)
{
	struct fx *f = arg;

	p9_file_server_serve(&f->server, f->far, CHANNELS);
	return NULL;
}

static int setup_threaded(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int near[CHANNELS];

	make_share(f);
	assert_int_equal(p9_server_init(&f->server, f->dir, false, P9_IDS_HOST,
					64, P9_MAX_MSIZE, NULL),
			 0);
	for (int i = 0; i < CHANNELS; i++) {
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		near[i] = sv[0];
		f->far[i] = sv[1];
	}
	p9_file_server_attach(&f->fs, near, CHANNELS, "test");
	f->fs.deaths = &f->deaths;
	assert_int_equal(pthread_create(&f->serving, NULL, serve_thread, f), 0);
	f->threaded = true;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[96];

	p9_file_server_stop(&f->fs);
	p9_file_server_release(&f->fs);
	if (f->threaded) {
		pthread_join(f->serving, NULL);
		p9_server_destroy(&f->server);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void begin(struct fx *f, uint8_t type)
{
	f->type = type;
	p9_writer_init(&f->w, f->req, sizeof(f->req), type, 7);
}

/* Send on CHAN: 0, -ecode of an Rlerror, or 1 for no reply at all. */
static int call_on(struct fx *f, unsigned int chan)
{
	size_t n = p9_writer_finish(&f->w);
	size_t m = p9_file_server_call(&f->fs, chan, f->generation, f->req, n,
				       n, f->rep, sizeof(f->rep));
	uint8_t type;
	uint16_t tag;

	if (!m)
		return 1;
	assert_int_equal(p9_reader_init(&f->r, f->rep, m, &type, &tag), 0);
	assert_int_equal(tag, 7);
	if (type == P9_RLERROR)
		return -(int)p9_get_u32(&f->r);
	assert_int_equal(type, f->type + 1);
	return 0;
}

static int call(struct fx *f)
{
	return call_on(f, 0);
}

static void put_s(struct fx *f, const char *s)
{
	p9_put_str(&f->w, s, strlen(s));
}

static int version(struct fx *f, uint32_t msize)
{
	begin(f, P9_TVERSION);
	p9_put_u32(&f->w, msize);
	put_s(f, "9P2000.L");
	return call(f);
}

static int attach(struct fx *f, uint32_t fid)
{
	begin(f, P9_TATTACH);
	p9_put_u32(&f->w, fid);
	p9_put_u32(&f->w, P9_NOFID);
	put_s(f, "root");
	put_s(f, "");
	p9_put_u32(&f->w, 0);
	return call(f);
}

static int walk1(struct fx *f, uint32_t fid, uint32_t newfid, const char *name)
{
	begin(f, P9_TWALK);
	p9_put_u32(&f->w, fid);
	p9_put_u32(&f->w, newfid);
	p9_put_u16(&f->w, name ? 1 : 0);
	if (name)
		put_s(f, name);
	return call(f);
}

static int getattr(struct fx *f, uint32_t fid)
{
	begin(f, P9_TGETATTR);
	p9_put_u32(&f->w, fid);
	p9_put_u64(&f->w, 0x7ff);
	return call(f);
}

/* Open FID read-only and read it into OUT; its length or -ecode. */
static int read_file(struct fx *f, uint32_t fid, char *out, size_t cap)
{
	uint32_t n;
	int r;

	begin(f, P9_TLOPEN);
	p9_put_u32(&f->w, fid);
	p9_put_u32(&f->w, O_RDONLY);
	r = call(f);
	if (r)
		return r;
	begin(f, P9_TREAD);
	p9_put_u32(&f->w, fid);
	p9_put_u64(&f->w, 0);
	p9_put_u32(&f->w, (uint32_t)cap);
	r = call(f);
	if (r)
		return r;
	n = p9_get_u32(&f->r);
	assert_true(n <= cap);
	memcpy(out, f->rep + P9_HDR_SIZE + 4, n);
	return (int)n;
}

static void session(struct fx *f)
{
	char data[64];

	assert_int_equal(version(f, 65536), 0);
	assert_int_equal(p9_file_server_msize(&f->fs), 65536);
	assert_int_equal(attach(f, 1), 0);
	assert_int_equal(walk1(f, 1, 2, "hello"), 0);
	assert_int_equal(read_file(f, 2, data, sizeof(data)), 9);
	assert_memory_equal(data, "hello, 9p", 9);
}

static void test_round_trip(void **state)
{
	struct fx *f = *state;

	session(f);
	/* The other channel is served by its own thread, same session. */
	begin(f, P9_TGETATTR);
	p9_put_u32(&f->w, 2);
	p9_put_u64(&f->w, 0x7ff);
	assert_int_equal(call_on(f, 1), 0);
	assert_int_equal(f->deaths, 0);
}

static void test_reset_by_generation(void **state)
{
	struct fx *f = *state;

	session(f);
	/* A device reset told on channel 1 drops every fid ... */
	p9_file_server_reset(&f->fs, 1, 1);
	assert_int_equal(p9_file_server_msize(&f->fs), P9_MAX_MSIZE);
	f->generation = 1;
	assert_int_equal(getattr(f, 2), -EBADF);
	/* ... and a request from before it is not run (no reply). */
	f->generation = 0;
	assert_int_equal(attach(f, 5), 1);
	/* A request of a newer generation resets by itself. */
	f->generation = 1;
	assert_int_equal(version(f, 8192), 0);
	assert_int_equal(attach(f, 1), 0);
	f->generation = 2;
	assert_int_equal(getattr(f, 1), -EBADF);
	assert_false(atomic_load(&f->fs.dead));
}

static void test_oversized(void **state)
{
	struct fx *f = *state;
	size_t n;

	/* The guest says 2 MiB; only the header crosses: EMSGSIZE. */
	begin(f, P9_TREAD);
	p9_writer_finish(&f->w);
	n = p9_file_server_call(&f->fs, 0, 0, f->req, P9_HDR_SIZE, 2u << 20,
				f->rep, sizeof(f->rep));
	assert_int_equal(f->rep[4], P9_RLERROR);
	assert_int_equal(f->rep[7], EMSGSIZE);
	assert_int_not_equal(n, 0);
}

static void test_lying_header_ends_the_channel(void **state)
{
	struct fx *f = *state;
	uint32_t bad[5] = { 1, 0, 100, 200, 64 }; /* held > len */
	char c;

	assert_int_equal(write(f->fs.chan[1], bad, sizeof(bad)),
			 (ssize_t)sizeof(bad));
	assert_int_equal(read(f->fs.chan[1], &c, 1), 0); /* closed */
	/* The other channel still serves. */
	session(f);
}

static void test_server_gone_is_eio(void **state)
{
	struct fx *f = *state;

	session(f);
	/* The process's ends close, as when it dies. */
	for (int i = 0; i < CHANNELS; i++)
		shutdown(f->far[i], SHUT_RDWR);
	assert_int_equal(getattr(f, 2), -EIO);
	assert_true(atomic_load(&f->fs.dead));
	assert_int_equal(f->deaths, 1);
	/* Once dead, at once and counted once. */
	assert_int_equal(getattr(f, 2), -EIO);
	assert_int_equal(f->deaths, 1);
}

/* ---- a real file-server process ---- */

static bool can_fork_a_server(void)
{
	return geteuid() == 0 && access("/proc/self/status", R_OK) == 0 &&
	       sandbox_supported();
}

static int setup_process(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct p9_file_server_config cfg = {
		.max_fids = 64,
		.max_msize = P9_MAX_MSIZE,
		.budget_limit = 1 << 20,
		.channels = CHANNELS,
		.name = "test",
	};

	make_share(f);
	cfg.dir = f->dir;
	cfg.deaths = &f->deaths;
	cfg.report = &f->report;
	/* The child loads the file-server filter: the session runs under it. */
	assert_int_equal(sandbox_prepare(), 0);
	sandbox_set_requested(true);
	if (p9_file_server_start(&f->fs, &cfg) < 0)
		fail_msg("%s", hvm_error_message());
	sandbox_set_requested(false);
	*state = f;
	return 0;
}

/* "CapEff" etc. of PID: the value after the tab. */
static void status_field(pid_t pid, const char *name, char *out, size_t cap)
{
	char path[64], line[256];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	assert_non_null(fp);
	out[0] = '\0';
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, name, strlen(name)) &&
		    line[strlen(name)] == ':') {
			snprintf(out, cap, "%s", line + strlen(name) + 2);
			out[strcspn(out, "\n")] = '\0';
		}
	fclose(fp);
}

static void test_process(void **state)
{
	struct fx *f = *state;
	uint64_t want = (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_FOWNER);
	char v[64], path[128], data[64];
	struct stat share, root;

	assert_true(f->fs.pid > 0 && f->fs.pid != getpid());
	status_field(f->fs.pid, "CapEff", v, sizeof(v));
	assert_int_equal(strtoull(v, NULL, 16), want);
	status_field(f->fs.pid, "CapPrm", v, sizeof(v));
	assert_int_equal(strtoull(v, NULL, 16), want);
	status_field(f->fs.pid, "CapBnd", v, sizeof(v));
	assert_int_equal(strtoull(v, NULL, 16), want);
	status_field(f->fs.pid, "NoNewPrivs", v, sizeof(v));
	assert_string_equal(v, "1");
	status_field(f->fs.pid, "Seccomp", v, sizeof(v));
	assert_string_equal(v, "2");
	/* Its root is the share: the same directory, nothing above it. */
	snprintf(path, sizeof(path), "/proc/%d/root/.", (int)f->fs.pid);
	assert_int_equal(stat(f->dir, &share), 0);
	assert_int_equal(stat(path, &root), 0);
	assert_true(share.st_ino == root.st_ino && share.st_dev == root.st_dev);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)f->fs.pid);
	assert_int_equal(access(path, F_OK), -1);

	session(f);
	/* Root's view: a mode-0 file of another user reads. */
	assert_int_equal(walk1(f, 1, 3, "locked"), 0);
	assert_int_equal(read_file(f, 3, data, sizeof(data)), 6);
	assert_memory_equal(data, "secret", 6);
	/* ".." at its root is its root. */
	assert_int_equal(walk1(f, 1, 4, ".."), 0);
	assert_int_equal(walk1(f, 4, 5, "hello"), 0);
	/*
	 * Its fids are charged to its own budget, and the VM sees the sum
	 * (--stats: shares.server_objects), five fids' worth by now.
	 */
	assert_true(atomic_load(&f->report.used) > 0);
	assert_true(atomic_load(&f->report.peak) >=
		    atomic_load(&f->report.used));
	assert_int_equal(atomic_load(&f->report.refused), 0);

	/* Its death: EIO to the guest, counted, and it is reaped later. */
	assert_int_equal(
		syscall(SYS_pidfd_send_signal, f->fs.pidfd, SIGKILL, NULL, 0),
		0);
	assert_int_equal(getattr(f, 2), -EIO);
	assert_int_equal(f->deaths, 1);
}

/*
 * A pod's share (docs/shim.md): a shared mount on the host, and a
 * container's rootfs mounted under it after the server started reaches
 * the server, whose mounts are the host's slaves.
 */
static int setup_process_shared(void **state)
{
	struct fx *f;
	char path[128];

	setup_process(state);
	f = *state;
	/* setup_process started the server: start it again on a shared
	 * mount, as the shim's pod share is. */
	p9_file_server_stop(&f->fs);
	p9_file_server_release(&f->fs);
	memset(&f->fs, 0, sizeof(f->fs));
	snprintf(path, sizeof(path), "%s/rootfs", f->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(mount(f->dir, f->dir, NULL, MS_BIND, NULL), 0);
	assert_int_equal(mount(NULL, f->dir, NULL, MS_SHARED, NULL), 0);
	{
		struct p9_file_server_config cfg = {
			.dir = f->dir,
			.max_fids = 64,
			.max_msize = P9_MAX_MSIZE,
			.budget_limit = 1 << 20,
			.channels = CHANNELS,
			.name = "test",
			.deaths = &f->deaths,
			.report = &f->report,
		};

		sandbox_set_requested(true);
		if (p9_file_server_start(&f->fs, &cfg) < 0)
			fail_msg("%s", hvm_error_message());
		sandbox_set_requested(false);
	}
	return 0;
}

static int teardown_shared(void **state)
{
	struct fx *f = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/rootfs", f->dir);
	umount2(path, MNT_DETACH);
	umount2(f->dir, MNT_DETACH);
	return teardown(state);
}

static void test_host_mount_reaches_share(void **state)
{
	struct fx *f = *state;
	char path[128], data[64];

	assert_int_equal(version(f, 65536), 0);
	assert_int_equal(attach(f, 1), 0);
	/* After the server started: a tmpfs with a file, as a rootfs. */
	snprintf(path, sizeof(path), "%s/rootfs", f->dir);
	assert_int_equal(mount("tmpfs", path, "tmpfs", 0, "size=1m"), 0);
	snprintf(path, sizeof(path), "%s/rootfs/sh", f->dir);
	{
		int fd = open(path, O_WRONLY | O_CREAT, 0755);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "#!busybox", 9), 9);
		close(fd);
	}
	assert_int_equal(walk1(f, 1, 2, "rootfs"), 0);
	assert_int_equal(walk1(f, 2, 3, "sh"), 0);
	assert_int_equal(read_file(f, 3, data, sizeof(data)), 9);
	assert_memory_equal(data, "#!busybox", 9);
}

static char needs_root_error[512];

static void *start_without_sys_admin(void *arg)
{
	struct fx *f = arg;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct p9_file_server_config cfg = {
		.dir = f->dir,
		.max_fids = 64,
		.max_msize = P9_MAX_MSIZE,
		.channels = 1,
		.name = "test",
	};
	intptr_t r;

	/* Capabilities are per thread: only this one loses CAP_SYS_ADMIN. */
	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	assert_int_equal(syscall(SYS_capset, &h, d), 0);
	r = p9_file_server_start(&f->fs, &cfg);
	/* The reason is per thread: take it along. */
	snprintf(needs_root_error, sizeof(needs_root_error), "%s",
		 hvm_error_message());
	return (void *)r;
}

static void test_needs_root(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	pthread_t t;
	void *r;
	char cmd[96];

	(void)state;
	make_share(f);
	assert_int_equal(pthread_create(&t, NULL, start_without_sys_admin, f),
			 0);
	pthread_join(t, &r);
	assert_int_equal((intptr_t)r, -EPERM);
	assert_non_null(strstr(needs_root_error, "server=process"));
	assert_non_null(strstr(needs_root_error, "CAP_SYS_ADMIN"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
}

int main(void)
{
	const struct CMUnitTest threaded[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup_threaded,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_by_generation,
						setup_threaded, teardown),
		cmocka_unit_test_setup_teardown(test_oversized, setup_threaded,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_lying_header_ends_the_channel, setup_threaded,
			teardown),
		cmocka_unit_test_setup_teardown(test_server_gone_is_eio,
						setup_threaded, teardown),
	};
	const struct CMUnitTest process[] = {
		cmocka_unit_test_setup_teardown(test_process, setup_process,
						teardown),
		cmocka_unit_test(test_needs_root),
		cmocka_unit_test_setup_teardown(test_host_mount_reaches_share,
						setup_process_shared,
						teardown_shared),
	};
	int r;

	log_set_level(LOG_ERROR);
	r = cmocka_run_group_tests_name("wire", threaded, NULL, NULL);
	if (!can_fork_a_server()) {
		printf("# skipping the process tests: not root\n");
		return r;
	}
	return r | cmocka_run_group_tests_name("process", process, NULL, NULL);
}
