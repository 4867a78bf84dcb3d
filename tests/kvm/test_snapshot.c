// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Snapshot and restore (docs/snapshot.md) on real KVM, through the public
 * API, with the test kernel's snap-count payload: every vCPU counts, CPU 0
 * prints "snap-count seq=S c0=.. c1=.." after each chunk. Claims:
 *  - a VM snapshotted mid-run and restored prints seq S+1 after the last
 *    S it printed before, with no counter going back, to the end of the
 *    run (RESULT ok=1), without booting again;
 *  - the memory file is sparse (the guest used a fraction of its RAM);
 *  - four clones of one snapshot all run on from the same point, each to
 *    its own end;
 *  - a VM with a device that cannot be saved is refused by name;
 *  - with the vsock payload: a VM snapshotted while serving, restored as
 *    two clones with CIDs of their own on sockets of their own: each
 *    guest gets the transport reset, takes its new CID and echoes over a
 *    new connection (the device's queues and the driver came back);
 *  - with the snap-net payload on a tap whose host side echoes: a VM
 *    snapshotted between frames and restored on the tap goes on sending
 *    and gets every echo (its posted receive buffers, ring positions and
 *    the tap attached again came back); the same while transmitting
 *    through a bw= limit, whose held frame the snapshot waits for;
 *  - with the snap-blk payload on a virtio-blk disk: a VM snapshotted
 *    between its writes and restored on its image goes on writing and
 *    reads every record back (queue positions and the device came back
 *    with it); two clones restored at once, each on its own copy of the
 *    image, both finish and each image holds every record; an image of
 *    another size is refused, naming both.
 * The suite runs it with the split irqchip and again with
 * KVM_TEST_IRQCHIP=kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <cmocka.h>

#include "hintvm/hintvm.h"
#include "kvm_test.h"

#define LINES 40
#define CMDLINE "test=snap-count chunk=20000000 lines=40"

static char *read_fd(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)(size > 0 ? size : 0) + 1);

	assert_non_null(buf);
	if (size > 0)
		assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	return buf;
}

static struct hvm_config *config(int out)
{
	struct hvm_config *cfg = kvm_test_config_new();

	assert_non_null(cfg);
	assert_int_equal(hvm_config_set_console_fds(cfg, -1, out), 0);
	return cfg;
}

/* The highest seq= in TEXT, or 0. */
static unsigned long last_seq(const char *text)
{
	unsigned long seq = 0;

	for (const char *p = text; (p = strstr(p, "seq=")); p += 4)
		seq = strtoul(p + 4, NULL, 10);
	return seq;
}

/*
 * TEXT's snap-count lines: seq 1, 2, ... LINES with none missing or
 * repeated, and each counter never below its previous value.
 */
static void check_continuous(const char *text)
{
	unsigned long expect = 1, prev[2] = { 0, 0 };

	for (const char *p = text; (p = strstr(p, "snap-count seq="));
	     p += 15) {
		unsigned long seq, c[2];

		assert_int_equal(sscanf(p, "snap-count seq=%lu c0=%lu c1=%lu",
					&seq, &c[0], &c[1]),
				 3);
		if (seq != expect)
			fail_msg("seq=%lu where %lu was due:\n%s", seq, expect,
				 text);
		for (int i = 0; i < 2; i++) {
			if (c[i] < prev[i])
				fail_msg("c%d went from %lu back to %lu", i,
					 prev[i], c[i]);
			prev[i] = c[i];
		}
		expect++;
	}
	assert_int_equal(expect, LINES + 1);
}

/*
 * Boot snap-count on 2 vCPUs (with SHARE's --share unless NULL; the test
 * kernel never mounts it), snapshot it into DIR mid-run, end it.
 */
static char *snapshot_mid_run(const char *dir, const char *share)
{
	struct hvm_config *cfg;
	struct hvm_exit exit;
	struct hvm_vm *vm;
	int out = memfd_create("before", MFD_CLOEXEC);
	unsigned long seq = 0;
	char *text;

	cfg = config(out);
	assert_int_equal(hvm_config_set(cfg, "cpus", "2"), 0);
	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(hvm_config_set(cfg, "cmdline", CMDLINE), 0);
	if (share)
		assert_int_equal(hvm_config_set(cfg, "share", share), 0);
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!vm)
		fail_msg("create: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(vm), 0);
	for (int i = 0; i < 2000 && seq < 3; i++) {
		usleep(5000);
		text = read_fd(out);
		seq = last_seq(text);
		free(text);
	}
	assert_true(seq >= 3);
	if (hvm_vm_snapshot(vm, dir, 1) < 0)
		fail_msg("snapshot: %s", hvm_last_error());
	hvm_vm_stop(vm);
	assert_int_equal(hvm_vm_wait(vm, &exit), 0);
	hvm_vm_destroy(vm);
	text = read_fd(out);
	close(out);
	/* Mid-run: the rest is the restored VM's to print. */
	assert_true(last_seq(text) < LINES);
	return text;
}

static struct hvm_vm *restore(const char *dir, int out)
{
	struct hvm_config *cfg = config(out);
	struct hvm_vm *vm = hvm_vm_restore(cfg, dir);

	hvm_config_free(cfg);
	if (!vm)
		fail_msg("restore: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(vm), 0);
	return vm;
}

/* Wait for VM to end and check that its output finished the run. */
static char *finish(struct hvm_vm *vm, int out)
{
	struct hvm_exit exit;
	char *text;

	assert_int_equal(hvm_vm_wait(vm, &exit), 0);
	hvm_vm_destroy(vm);
	text = read_fd(out);
	if (exit.reason != HVM_EXIT_POWEROFF || !strstr(text, "ok=1"))
		fail_msg("restored VM ended %s (%s):\n%s",
			 hvm_exit_reason_name(exit.reason), exit.detail, text);
	/* It went on, it did not boot again. */
	assert_null(strstr(text, "testkernel:"));
	return text;
}

static char *concat(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 1);

	assert_non_null(s);
	strcpy(s, a);
	strcat(s, b);
	return s;
}

static void make_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/hvm-snap-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/state", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/memory", dir);
	unlink(path);
	rmdir(dir);
}

static void test_continues_exactly(void **state)
{
	char dir[64], path[96], *before, *after, *all;
	int out = memfd_create("after", MFD_CLOEXEC);
	struct stat st;

	make_dir(dir, sizeof(dir));
	before = snapshot_mid_run(dir, NULL);
	snprintf(path, sizeof(path), "%s/memory", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 64 << 20);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Sparse: the test kernel touches well under 64 MiB. */
	assert_true((uint64_t)st.st_blocks * 512 < (16u << 20));
	after = finish(restore(dir, out), out);
	all = concat(before, after);
	check_continuous(all);
	free(before);
	free(after);
	free(all);
	close(out);
	remove_dir(dir);
}

static void test_four_clones(void **state)
{
	struct hvm_vm *vms[4];
	int outs[4];
	char dir[64], *before;
	unsigned long from;

	make_dir(dir, sizeof(dir));
	before = snapshot_mid_run(dir, NULL);
	from = last_seq(before);
	for (int i = 0; i < 4; i++) {
		outs[i] = memfd_create("clone", MFD_CLOEXEC);
		vms[i] = restore(dir, outs[i]);
	}
	for (int i = 0; i < 4; i++) {
		char *after = finish(vms[i], outs[i]);
		char *all = concat(before, after);

		/* Each clone goes on from the snapshot's point to its end. */
		assert_true(strtoul(strstr(after, "seq=") + 4, NULL, 10) <=
			    from + 1);
		check_continuous(all);
		free(after);
		free(all);
		close(outs[i]);
	}
	free(before);
	remove_dir(dir);
}

/*
 * A share the guest never used is snapshotted by its tag; a restore
 * names a directory of its own for it (a template's clone its
 * container's, docs/template.md) and runs on; another tag, or no share,
 * is refused naming it. A used share is refused by its save
 * (tests/unit/devices/virtio/test_virtio_9p.c: this kernel mounts none).
 */
static void test_unused_share_restored_on_another_dir(void **state)
{
	int out = memfd_create("after", MFD_CLOEXEC);
	struct hvm_config *cfg;
	char dir[64], *before, *after, *all;

	make_dir(dir, sizeof(dir));
	before = snapshot_mid_run(dir, "/tmp,tag=pod");

	cfg = config(out);
	assert_int_equal(hvm_config_set(cfg, "share", "/tmp,tag=other"), 0);
	assert_null(hvm_vm_restore(cfg, dir));
	hvm_config_free(cfg);
	if (!strstr(hvm_last_error(),
		    "virtio-9p0: the share's tag is other, but the snapshot's was pod"))
		fail_msg("%s", hvm_last_error());
	cfg = config(out);
	assert_null(hvm_vm_restore(cfg, dir));
	hvm_config_free(cfg);
	if (!strstr(hvm_last_error(), "virtio-9p0"))
		fail_msg("%s", hvm_last_error());

	cfg = config(out);
	assert_int_equal(hvm_config_set(cfg, "share", "/var,tag=pod,ro"), 0);
	{
		struct hvm_vm *vm = hvm_vm_restore(cfg, dir);

		hvm_config_free(cfg);
		if (!vm)
			fail_msg("restore: %s", hvm_last_error());
		assert_int_equal(hvm_vm_start(vm), 0);
		after = finish(vm, out);
	}
	all = concat(before, after);
	check_continuous(all);
	free(before);
	free(after);
	free(all);
	close(out);
	remove_dir(dir);
}

/* ---- virtio-blk: snap-blk (guest-firmware/x86/payload_snap_blk.c) ---- */

#define BLK_RECORDS 30
#define BLK_CMDLINE "test=snap-blk records=30 chunk=20000000"
#define BLK_BYTES ((BLK_RECORDS + 1) * 512)

static void make_image(const char *path, off_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static void copy_image(const char *from, const char *to)
{
	char buf[BLK_BYTES];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(in >= 0 && out >= 0);
	assert_int_equal(read(in, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(write(out, buf, sizeof(buf)), sizeof(buf));
	close(in);
	close(out);
}

/* The record snap-blk writes to sector SEQ. */
static void blk_record(uint8_t *buf, uint64_t seq)
{
	uint64_t w[2] = { seq, ~seq };

	memcpy(buf, "HVMSNAPB", 8);
	memcpy(buf + 8, w, sizeof(w));
	for (unsigned int i = 24; i < 512; i++)
		buf[i] = (uint8_t)(seq * 151 + i * 3);
}

/* Every sector 1..BLK_RECORDS of PATH holds its record. */
static void check_image(const char *path)
{
	uint8_t got[512], want[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	for (uint64_t seq = 1; seq <= BLK_RECORDS; seq++) {
		assert_int_equal(pread(fd, got, 512, (off_t)seq * 512), 512);
		blk_record(want, seq);
		if (memcmp(got, want, 512))
			fail_msg("%s: sector %lu does not hold its record",
				 path, (unsigned long)seq);
	}
	close(fd);
}

/* snap-blk lines 1..BLK_RECORDS, none missing or repeated. */
static void check_blk_continuous(const char *text)
{
	unsigned long expect = 1;

	for (const char *p = text; (p = strstr(p, "snap-blk seq=")); p += 13) {
		unsigned long seq = strtoul(p + 13, NULL, 10);

		if (seq != expect)
			fail_msg("seq=%lu where %lu was due:\n%s", seq, expect,
				 text);
		expect++;
	}
	assert_int_equal(expect, BLK_RECORDS + 1);
}

static struct hvm_config *blk_config(int out, const char *image)
{
	struct hvm_config *cfg = config(out);

	assert_int_equal(hvm_config_set(cfg, "disk", image), 0);
	return cfg;
}

/* Boot snap-blk on IMAGE, snapshot it into DIR between writes, end it. */
static char *blk_snapshot_mid_run(const char *dir, const char *image)
{
	int out = memfd_create("blk-before", MFD_CLOEXEC);
	struct hvm_config *cfg = blk_config(out, image);
	unsigned long seq = 0;
	struct hvm_exit exit;
	struct hvm_vm *vm;
	char *text;

	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(hvm_config_set(cfg, "cmdline", BLK_CMDLINE), 0);
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!vm)
		fail_msg("create: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(vm), 0);
	for (int i = 0; i < 2000 && seq < 3; i++) {
		usleep(5000);
		text = read_fd(out);
		seq = last_seq(text);
		free(text);
	}
	assert_true(seq >= 3);
	if (hvm_vm_snapshot(vm, dir, 1) < 0)
		fail_msg("snapshot: %s", hvm_last_error());
	hvm_vm_stop(vm);
	assert_int_equal(hvm_vm_wait(vm, &exit), 0);
	hvm_vm_destroy(vm);
	text = read_fd(out);
	close(out);
	assert_true(last_seq(text) < BLK_RECORDS);
	return text;
}

static struct hvm_vm *blk_restore(const char *dir, int out, const char *image)
{
	struct hvm_config *cfg = blk_config(out, image);
	struct hvm_vm *vm = hvm_vm_restore(cfg, dir);

	hvm_config_free(cfg);
	if (!vm)
		fail_msg("restore on %s: %s", image, hvm_last_error());
	assert_int_equal(hvm_vm_start(vm), 0);
	return vm;
}

static void test_disk_continues(void **state)
{
	char dir[64], image[96], *before, *after, *all;
	int out = memfd_create("blk-after", MFD_CLOEXEC);

	make_dir(dir, sizeof(dir));
	snprintf(image, sizeof(image), "%s/disk.img", dir);
	make_image(image, BLK_BYTES);
	before = blk_snapshot_mid_run(dir, image);
	after = finish(blk_restore(dir, out, image), out);
	all = concat(before, after);
	check_blk_continuous(all);
	assert_non_null(strstr(after, "verified=30"));
	check_image(image);
	free(before);
	free(after);
	free(all);
	close(out);
	unlink(image);
	remove_dir(dir);
}

static void test_disk_clones(void **state)
{
	char dir[64], image[96], copies[2][96], *before;
	struct hvm_vm *vms[2];
	int outs[2];

	make_dir(dir, sizeof(dir));
	snprintf(image, sizeof(image), "%s/disk.img", dir);
	make_image(image, BLK_BYTES);
	before = blk_snapshot_mid_run(dir, image);
	for (int i = 0; i < 2; i++) {
		snprintf(copies[i], sizeof(copies[i]), "%s/clone%d.img", dir,
			 i);
		copy_image(image, copies[i]);
	}
	for (int i = 0; i < 2; i++) {
		outs[i] = memfd_create("blk-clone", MFD_CLOEXEC);
		vms[i] = blk_restore(dir, outs[i], copies[i]);
	}
	for (int i = 0; i < 2; i++) {
		char *after = finish(vms[i], outs[i]);
		char *all = concat(before, after);

		check_blk_continuous(all);
		assert_non_null(strstr(after, "verified=30"));
		check_image(copies[i]);
		free(after);
		free(all);
		close(outs[i]);
		unlink(copies[i]);
	}
	free(before);
	unlink(image);
	remove_dir(dir);
}

static void test_disk_of_other_size_refused(void **state)
{
	char dir[64], image[96], other[96], want[2 * PATH_MAX + 256],
		real_image[PATH_MAX], real_other[PATH_MAX];
	int out = memfd_create("blk-refused", MFD_CLOEXEC);
	struct hvm_config *cfg;

	make_dir(dir, sizeof(dir));
	snprintf(image, sizeof(image), "%s/disk.img", dir);
	snprintf(other, sizeof(other), "%s/bigger.img", dir);
	make_image(image, BLK_BYTES);
	make_image(other, 2 * BLK_BYTES);
	free(blk_snapshot_mid_run(dir, image));
	assert_non_null(realpath(image, real_image));
	assert_non_null(realpath(other, real_other));
	cfg = blk_config(out, other);
	assert_null(hvm_vm_restore(cfg, dir));
	hvm_config_free(cfg);
	snprintf(
		want, sizeof(want),
		"snapshot %s/state: virtio-blk0: the disk %s is %d bytes, but the snapshot's (%s) was %d bytes: restore with an image of that size",
		dir, real_other, 2 * BLK_BYTES, real_image, BLK_BYTES);
	assert_string_equal(hvm_last_error(), want);
	close(out);
	unlink(image);
	unlink(other);
	remove_dir(dir);
}

/* ---- virtio-vsock: the test kernel's vsock payload ---- */

/* Connect to PORT in the guest through the hybrid socket UDS. */
static int vsock_connect(const char *uds, unsigned int port)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char line[64];
	int n;

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", uds);
	for (int i = 0; i < 400; i++) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		usleep(5000);
	}
	n = snprintf(line, sizeof(line), "CONNECT %u\n", port);
	assert_int_equal(write(fd, line, (size_t)n), n);
	n = (int)read(fd, line, sizeof(line) - 1);
	if (n <= 3)
		fail_msg("CONNECT %u on %s: read %d (%s)", port, uds, n,
			 n < 0 ? strerror(errno) : "closed");
	line[n] = '\0';
	if (strncmp(line, "OK ", 3))
		fail_msg("CONNECT %u answered '%s'", port, line);
	return fd;
}

/* Port 1 ends the payload: it quits rather than answer. */
static void vsock_quit(const char *uds)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char buf[16];

	assert_true(strlen(uds) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, uds, strlen(uds) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, "CONNECT 1\n", 10), 10);
	(void)!read(fd, buf, sizeof(buf));
	close(fd);
}

static void vsock_echo(const char *uds, const char *msg)
{
	size_t len = strlen(msg);
	char buf[64];
	int fd = vsock_connect(uds, 1234);

	assert_int_equal(write(fd, msg, len), (ssize_t)len);
	assert_int_equal(read(fd, buf, sizeof(buf)), (ssize_t)len);
	assert_memory_equal(buf, msg, len);
	close(fd);
}

static struct hvm_vm *vsock_restore(const char *dir, int out, unsigned int cid,
				    const char *uds)
{
	struct hvm_config *cfg = config(out);
	struct hvm_vm *vm;
	char opt[256];

	snprintf(opt, sizeof(opt), "cid=%u,uds=%s", cid, uds);
	assert_int_equal(hvm_config_set(cfg, "vsock", opt), 0);
	vm = hvm_vm_restore(cfg, dir);
	hvm_config_free(cfg);
	if (!vm)
		fail_msg("restore: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(vm), 0);
	return vm;
}

/*
 * The vsock payload, snapshotted after an echo, restored as two clones
 * at once with CIDs 5 and 6 on sockets of their own: each guest gets the
 * transport reset, reads its new CID (its packets carry it, or the
 * device would refuse them) and echoes on a new connection.
 */
static void test_vsock_clones_get_their_cid(void **state)
{
	int out = memfd_create("vsock-before", MFD_CLOEXEC);
	char dir[64], uds[96], clone_uds[2][96], opt[128], *text;
	struct hvm_config *cfg = config(out);
	struct hvm_vm *vm, *clones[2];
	struct hvm_exit exit;
	int outs[2];

	make_dir(dir, sizeof(dir));
	snprintf(uds, sizeof(uds), "%s/v.sock", dir);
	snprintf(opt, sizeof(opt), "cid=3,uds=%s", uds);
	assert_int_equal(hvm_config_set(cfg, "vsock", opt), 0);
	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(
		hvm_config_set(cfg, "cmdline",
			       "test=vsock vsock.hostile=0 vsock.ms=60000"),
		0);
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!vm)
		fail_msg("create: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(vm), 0);
	vsock_echo(uds, "before"); /* the queues have moved */
	if (hvm_vm_snapshot(vm, dir, 1) < 0)
		fail_msg("snapshot: %s", hvm_last_error());
	hvm_vm_stop(vm);
	assert_int_equal(hvm_vm_wait(vm, &exit), 0);
	hvm_vm_destroy(vm);
	close(out);

	for (int i = 0; i < 2; i++) {
		snprintf(clone_uds[i], sizeof(clone_uds[i]), "%s/c%d.sock", dir,
			 i);
		outs[i] = memfd_create("vsock-clone", MFD_CLOEXEC);
		clones[i] = vsock_restore(dir, outs[i], 5 + (unsigned int)i,
					  clone_uds[i]);
	}
	for (int i = 0; i < 2; i++) {
		char want[64];

		vsock_echo(clone_uds[i], i ? "clone-six" : "clone-five");
		vsock_quit(clone_uds[i]);
		text = finish(clones[i], outs[i]);
		snprintf(want, sizeof(want), "vsock: transport reset, cid %d",
			 5 + i);
		if (!strstr(text, want) || !strstr(text, "resets=1") ||
		    !strstr(text, "device_ok=1"))
			fail_msg("clone %d:\n%s", i, text);
		free(text);
		close(outs[i]);
		unlink(clone_uds[i]);
	}
	unlink(uds);
	remove_dir(dir);
}

/* ---- virtio-net: snap-net (guest-firmware/x86/payload_snap_net.c) ---- */

#define NET_FRAMES 20
#define NET_CMDLINE "test=snap-net frames=20 chunk=20000000"
/* Eight unanswered frames before each numbered one through bw=2000: the
 * limit holds a frame most of the time, so a snapshot finds one held. */
#define NET_BW_CMDLINE "test=snap-net frames=20 chunk=1000 filler=8"

/* A persistent tap NAME, up (root); false when this host cannot. */
static bool tap_create(const char *name, bool create)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC), s;
	bool ok;

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ok = ioctl(fd, TUNSETIFF, &ifr) == 0 &&
	     ioctl(fd, TUNSETPERSIST, create ? 1 : 0) == 0;
	close(fd);
	if (!ok || !create)
		return ok;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ok = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	ok = ok && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	if (s >= 0)
		close(s);
	return ok;
}

/*
 * The tap's host side: every "HVMSNAPN" frame of ethertype 0x88b5 the
 * guest sends comes back as "HVMSNAPE" of 0x88b6 with its number.
 */
struct echo {
	int fd;
	volatile bool stop;
	unsigned long echoed;
	pthread_t thread;
};

static void *echo_run(void *arg)
{
	struct echo *e = arg;
	uint8_t buf[2048], reply[60];

	while (!e->stop) {
		struct pollfd p = { .fd = e->fd, .events = POLLIN };
		struct sockaddr_ll from;
		socklen_t len = sizeof(from);
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recvfrom(e->fd, buf, sizeof(buf), 0,
			     (struct sockaddr *)&from, &len);
		if (n < 30 || from.sll_pkttype == PACKET_OUTGOING ||
		    buf[12] != 0x88 || buf[13] != 0xb5 ||
		    memcmp(buf + 14, "HVMSNAPN", 8))
			continue;
		memset(reply, 0, sizeof(reply));
		memcpy(reply, buf + 6, 6); /* to the guest's MAC */
		memcpy(reply + 6, "\x02\x00\x00\x00\x00\x01", 6);
		reply[12] = 0x88;
		reply[13] = 0xb6;
		memcpy(reply + 14, "HVMSNAPE", 8);
		memcpy(reply + 22, buf + 22, 8);
		if (send(e->fd, reply, sizeof(reply), 0) == sizeof(reply))
			e->echoed++;
	}
	return NULL;
}

static void echo_start(struct echo *e, const char *tap)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL) };

	memset(e, 0, sizeof(*e));
	e->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	assert_true(e->fd >= 0);
	sa.sll_ifindex = (int)if_nametoindex(tap);
	assert_true(sa.sll_ifindex > 0);
	assert_int_equal(bind(e->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(pthread_create(&e->thread, NULL, echo_run, e), 0);
}

static void echo_stop(struct echo *e)
{
	e->stop = true;
	pthread_join(e->thread, NULL);
	close(e->fd);
}

/* The net tests' tap and echo, which a failed test leaves to teardown. */
static char net_tap[IFNAMSIZ];
static struct echo net_echo;
static bool net_echo_running;
static struct hvm_vm *net_vm; /* holds the tap while it runs */

static int net_teardown(void **state)
{
	struct hvm_exit exit;

	/* A tap is deleted only once no VM has it attached. */
	if (net_vm) {
		hvm_vm_stop(net_vm);
		hvm_vm_wait(net_vm, &exit);
		hvm_vm_destroy(net_vm);
		net_vm = NULL;
	}
	if (net_echo_running)
		echo_stop(&net_echo);
	net_echo_running = false;
	if (net_tap[0])
		tap_create(net_tap, false);
	net_tap[0] = '\0';
	return 0;
}

/* snap-net lines 1..NET_FRAMES, none missing or repeated. */
static void check_net_continuous(const char *text)
{
	unsigned long expect = 1;

	for (const char *p = text; (p = strstr(p, "net seq=")); p += 8) {
		unsigned long seq = strtoul(p + 8, NULL, 10);

		if (seq != expect)
			fail_msg("seq=%lu where %lu was due:\n%s", seq, expect,
				 text);
		expect++;
	}
	assert_int_equal(expect, NET_FRAMES + 1);
}

static struct hvm_config *net_config(int out, const char *tap, const char *bw)
{
	struct hvm_config *cfg = config(out);
	char opt[64];

	snprintf(opt, sizeof(opt), "tap=%s%s%s", tap, bw ? ",bw=" : "",
		 bw ? bw : "");
	assert_int_equal(hvm_config_set(cfg, "net", opt), 0);
	return cfg;
}

/*
 * snap-net (CMDLINE) on a tap, limited to BW bytes/s when not NULL,
 * snapshotted after its third echo (WAIT_MS later), stopped, and
 * restored on the same tap: the guest goes on with the next frame and
 * gets every echo to the end. Returns the restored run's output.
 */
static char *net_snapshot_restore(const char *cmdline, const char *bw,
				  useconds_t wait_us)
{
	char dir[64], *before, *after, *all;
	const char *tap = net_tap;
	int out = memfd_create("net-before", MFD_CLOEXEC),
	    out2 = memfd_create("net-after", MFD_CLOEXEC);
	struct hvm_config *cfg;
	unsigned long seq = 0;
	struct hvm_exit exit;
	struct hvm_vm *vm;

	snprintf(net_tap, sizeof(net_tap), "hvmsn%d", (int)getpid());
	if (!tap_create(tap, true)) {
		printf("SKIP: cannot create tap %s (needs root): %s\n", tap,
		       strerror(errno));
		net_tap[0] = '\0';
		skip();
	}
	echo_start(&net_echo, tap);
	net_echo_running = true;
	make_dir(dir, sizeof(dir));
	cfg = net_config(out, tap, bw);
	assert_int_equal(hvm_config_set(cfg, "mem", "64M"), 0);
	assert_int_equal(hvm_config_set(cfg, "cmdline", cmdline), 0);
	net_vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!net_vm)
		fail_msg("create: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(net_vm), 0);
	for (int i = 0; i < 2000 && seq < 3; i++) {
		usleep(5000);
		before = read_fd(out);
		seq = last_seq(before);
		free(before);
	}
	assert_true(seq >= 3);
	usleep(wait_us);
	/* With bw=, a frame the limit holds is drained first (else: "queue
	 * 1 has requests in flight"). */
	if (hvm_vm_snapshot(net_vm, dir, 1) < 0)
		fail_msg("snapshot: %s", hvm_last_error());
	hvm_vm_stop(net_vm);
	assert_int_equal(hvm_vm_wait(net_vm, &exit), 0);
	hvm_vm_destroy(net_vm);
	net_vm = NULL;
	before = read_fd(out);
	assert_true(last_seq(before) < NET_FRAMES);

	cfg = net_config(out2, tap, bw);
	net_vm = hvm_vm_restore(cfg, dir);
	hvm_config_free(cfg);
	if (!net_vm)
		fail_msg("restore: %s", hvm_last_error());
	assert_int_equal(hvm_vm_start(net_vm), 0);
	vm = net_vm;
	net_vm = NULL; /* finish() waits for and destroys it */
	after = finish(vm, out2);
	all = concat(before, after);
	check_net_continuous(all);
	assert_non_null(strstr(after, "echoed=20"));
	echo_stop(&net_echo);
	net_echo_running = false;
	assert_true(net_echo.echoed >= NET_FRAMES);
	free(before);
	free(all);
	close(out);
	close(out2);
	remove_dir(dir);
	return after;
}

/* Snapshotted between frames (receive buffers posted, queues moved). */
static void test_net_continues(void **state)
{
	free(net_snapshot_restore(NET_CMDLINE, NULL, 0));
}

/*
 * While transmitting through a bw= limit: the snapshot waits for the
 * frame the limit holds, and the restored guest finishes (an echo
 * answered into the old VM's tap during the snapshot is asked again).
 */
static void test_net_rate_limited(void **state)
{
	free(net_snapshot_restore(NET_BW_CMDLINE, "2000", 200000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_continues_exactly),
		cmocka_unit_test(test_four_clones),
		cmocka_unit_test(test_unused_share_restored_on_another_dir),
		cmocka_unit_test(test_disk_continues),
		cmocka_unit_test(test_disk_clones),
		cmocka_unit_test(test_disk_of_other_size_refused),
		cmocka_unit_test(test_vsock_clones_get_their_cid),
		cmocka_unit_test_teardown(test_net_continues, net_teardown),
		cmocka_unit_test_teardown(test_net_rate_limited, net_teardown),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
