// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * virtio-9p through virtio-mmio, the way Linux's 9pnet_virtio drives it:
 * the mount tag in the config space, requests as (T-message, reply
 * buffer) chains, and the promise that a slow request blocks neither the
 * vCPU that kicked the queue nor the requests behind it: a Tread held up
 * in the file system still lets a Tgetattr on another fid complete, and a
 * Tflush of the slow Tread is answered only after the Tread's own reply.
 * Skips without io_uring (qemu-user).
 */
#include <endian.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/virtio_9p.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "base/log.h"
#include "devices/virtio/p9_proto.h"
#include "devices/virtio/virtio_9p.h"
#include "devices/virtio/virtio_mmio.h"
#include "mmio_access.h"

#define RAM_SIZE 0x100000u
#define QSIZE 16
#define RING 0x10000u
#define MSG(i) (0x20000u + 0x2000u * (i)) /* request i: T at +0, R at +0x1000 */

static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));

struct fixture {
	struct guest_memory mem;
	struct event_loop *loop;
	struct virtio_host host;
	struct virtio_device *vdev;
	struct virtio_mmio mmio;
	sem_t irq;
	sem_t read_started, read_release;
	uint16_t avail;
	char dir[64];
};

static int set_level(void *ctx, uint32_t gsi, bool level)
{
	struct fixture *f = ctx;

	(void)gsi;
	if (level)
		sem_post(&f->irq);
	return 0;
}

/* Tread waits in the "file system" until the test lets it go. */
static void before_op(void *ctx, uint8_t type)
{
	struct fixture *f = ctx;

	if (type != P9_TREAD)
		return;
	sem_post(&f->read_started);
	sem_wait(&f->read_release);
}

/* Post request I (built in RAM at MSG(I), LEN bytes) as a 2-buffer chain. */
static void post(struct fixture *f, unsigned int i, size_t len)
{
	uint16_t head = (uint16_t)((2 * i) % QSIZE);
	struct vring_desc d[2] = {
		{ MSG(i), (uint32_t)len, VRING_DESC_F_NEXT,
		  (uint16_t)(head + 1) },
		{ MSG(i) + 0x1000, 0x1000, VRING_DESC_F_WRITE, 0 },
	};
	uint8_t *avail = ram + RING + 0x800;

	memcpy(ram + RING + 16 * head, d, sizeof(d));
	memcpy(avail + 4 + 2 * (f->avail % QSIZE), &head, 2);
	f->avail++;
	__atomic_store_n((uint16_t *)(avail + 2), f->avail, __ATOMIC_RELEASE);
	mmio_wr(&f->mmio, 0x050, 0);
}

static uint16_t used_idx(void)
{
	return __atomic_load_n((uint16_t *)(ram + RING + 0x1000 + 2),
			       __ATOMIC_ACQUIRE);
}

/* The head of the Nth used entry (0-based). */
static uint16_t used_head(uint16_t n)
{
	uint32_t id;

	memcpy(&id, ram + RING + 0x1000 + 4 + 8 * (n % QSIZE), 4);
	return (uint16_t)id;
}

static bool wait_used(struct fixture *f, uint16_t idx)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	while (used_idx() < idx)
		if (sem_timedwait(&f->irq, &deadline) < 0)
			return false;
	return true;
}

static struct p9_writer msg(unsigned int i, uint8_t type)
{
	struct p9_writer w;

	p9_writer_init(&w, ram + MSG(i), 0x1000, type, (uint16_t)(100 + i));
	return w;
}

/* Send request I and wait for its reply; the reply's type. */
static uint8_t rpc(struct fixture *f, unsigned int i, struct p9_writer *w)
{
	uint16_t before = used_idx();

	post(f, i, p9_writer_finish(w));
	assert_true(wait_used(f, (uint16_t)(before + 1)));
	return ram[MSG(i) + 0x1000 + 4];
}

static bool io_uring_works(void)
{
	struct event_loop *probe;
	int ret = event_loop_create(&probe, 4);

	if (ret == 0)
		event_loop_destroy(probe);
	return ret == 0;
}

/* server=process for the next setup (setup_process). */
static bool process_mode;

static int setup(void **state)
{
	struct fixture *f;
	char path[96];
	int fd;

	if (!io_uring_works())
		return 0;
	f = calloc(1, sizeof(*f));
	memset(ram, 0, RAM_SIZE);
	snprintf(f->dir, sizeof(f->dir), "/tmp/hvm-v9p-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/slow", f->dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, "slow data", 9), 9);
	close(fd);
	assert_int_equal(guest_memory_add_region(&f->mem, 0, RAM_SIZE, ram), 0);
	assert_int_equal(event_loop_create(&f->loop, 32), 0);
	sem_init(&f->irq, 0, 0);
	sem_init(&f->read_started, 0, 0);
	sem_init(&f->read_release, 0, 0);
	f->host = (struct virtio_host){ .mem = &f->mem, .loop = f->loop };
	f->vdev = virtio_9p_create(
		&f->host,
		&(struct virtio_9p_share){
			.dir = f->dir,
			.tag = "hostshare",
			.server = process_mode ? VIRTIO_9P_SERVER_PROCESS
					       : VIRTIO_9P_SERVER_THREAD },
		0);
	if (!f->vdev)
		fail_msg("%s", hvm_error_message());
	virtio_9p_set_before_op(f->vdev, before_op, f);
	assert_int_equal(virtio_device_attach_loop(f->vdev, f->loop), 0);
	virtio_mmio_init(&f->mmio, f->vdev, 0,
			 (struct irq_line){ .set_level = set_level, .ctx = f },
			 &f->host);
	assert_int_equal(event_loop_start(f->loop, "test-9p"), 0);
	mmio_negotiate(&f->mmio, 1u << VIRTIO_9P_MOUNT_TAG);
	mmio_queue(&f->mmio, 0, QSIZE, RING);
	mmio_wr(&f->mmio, 0x070,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK |
			VIRTIO_CONFIG_S_DRIVER_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[96];

	if (!f)
		return 0;
	event_loop_destroy(f->loop);
	f->vdev->ops->destroy(f->vdev);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void test_mount_tag(void **state)
{
	struct fixture *f = *state;
	uint8_t cfg[12];

	if (!f)
		skip();
	for (unsigned int i = 0; i < sizeof(cfg) - 1; i++)
		virtio_mmio_ops.read(&f->mmio, 0x100 + i, &cfg[i], 1);
	assert_int_equal(cfg[0] | (cfg[1] << 8), 9);
	assert_memory_equal(cfg + 2, "hostshare", 9);
	assert_int_equal(mmio_rd(&f->mmio, 0x008),
			 9); /* device ID: 9P transport */
}

/* Tversion, Tattach fid 0, walk fid 1 to "slow" and open it. */
static void open_slow(struct fixture *f)
{
	struct p9_writer w = msg(0, P9_TVERSION);

	p9_put_u32(&w, 8192);
	p9_put_str(&w, P9_VERSION_L, strlen(P9_VERSION_L));
	assert_int_equal(rpc(f, 0, &w), P9_TVERSION + 1);
	w = msg(1, P9_TATTACH);
	p9_put_u32(&w, 0);
	p9_put_u32(&w, P9_NOFID);
	p9_put_str(&w, "", 0);
	p9_put_str(&w, "", 0);
	p9_put_u32(&w, 0);
	assert_int_equal(rpc(f, 1, &w), P9_TATTACH + 1);
	w = msg(2, P9_TWALK);
	p9_put_u32(&w, 0);
	p9_put_u32(&w, 1);
	p9_put_u16(&w, 1);
	p9_put_str(&w, "slow", 4);
	assert_int_equal(rpc(f, 2, &w), P9_TWALK + 1);
	w = msg(3, P9_TLOPEN);
	p9_put_u32(&w, 1);
	p9_put_u32(&w, 0);
	assert_int_equal(rpc(f, 3, &w), P9_TLOPEN + 1);
}

static void post_read(struct fixture *f, unsigned int i)
{
	struct p9_writer w = msg(i, P9_TREAD);

	p9_put_u32(&w, 1);
	p9_put_u64(&w, 0);
	p9_put_u32(&w, 64);
	post(f, i, p9_writer_finish(&w));
}

static void test_slow_read_blocks_nothing_else(void **state)
{
	struct fixture *f = *state;
	struct p9_writer w;
	uint16_t before;

	if (!f)
		skip();
	open_slow(f);
	before = used_idx();
	post_read(f, 4);
	assert_int_equal(sem_wait(&f->read_started), 0);
	/* The Tread is stuck in a worker; a Tgetattr still completes. */
	w = msg(5, P9_TGETATTR);
	p9_put_u32(&w, 0);
	p9_put_u64(&w, P9_GETATTR_BASIC);
	assert_int_equal(rpc(f, 5, &w), P9_TGETATTR + 1);
	assert_int_equal(used_idx(), before + 1);
	assert_int_equal(used_head(before), (2 * 5) % QSIZE);
	sem_post(&f->read_release);
	assert_true(wait_used(f, (uint16_t)(before + 2)));
	assert_int_equal(ram[MSG(4) + 0x1000 + 4], P9_TREAD + 1);
	assert_memory_equal(ram + MSG(4) + 0x1000 + 11, "slow data", 9);
}

static void test_flush_answers_after_the_flushed(void **state)
{
	struct fixture *f = *state;
	struct p9_writer w;
	uint16_t before;

	if (!f)
		skip();
	open_slow(f);
	before = used_idx();
	post_read(f, 4);
	assert_int_equal(sem_wait(&f->read_started), 0);
	w = msg(5, P9_TFLUSH);
	p9_put_u16(&w, 104); /* the Tread's tag */
	post(f, 5, p9_writer_finish(&w));
	usleep(20 * 1000);
	assert_int_equal(used_idx(), before); /* Rflush waits for the Tread */
	sem_post(&f->read_release);
	assert_true(wait_used(f, (uint16_t)(before + 2)));
	assert_int_equal(used_head(before), (2 * 4) % QSIZE);
	assert_int_equal(used_head((uint16_t)(before + 1)), (2 * 5) % QSIZE);
	assert_int_equal(ram[MSG(5) + 0x1000 + 4], P9_TFLUSH + 1);
	/* A Tflush of a tag nobody uses is answered at once. */
	w = msg(6, P9_TFLUSH);
	p9_put_u16(&w, 999);
	assert_int_equal(rpc(f, 6, &w), P9_TFLUSH + 1);
}

/*
 * A Tflush in a chain longer than the largest msize: only its header is
 * copied out, and it is answered EMSGSIZE without anything reading past
 * that header (the ASan build of this test caught flush_waits doing so).
 * Four 512 KiB descriptors over the same guest RAM make the 2 MiB chain.
 */
static void test_oversized_flush(void **state)
{
	struct fixture *f = *state;
	const unsigned int i = 7, nr_out = 4;
	uint16_t head = 0, before;
	uint8_t *avail = ram + RING + 0x800;
	uint32_t ecode;
	struct p9_writer w;

	if (!f)
		skip();
	w = msg(i, P9_TFLUSH);
	p9_put_u16(&w, 104);
	p9_writer_finish(&w);
	for (unsigned int d = 0; d <= nr_out; d++) {
		struct vring_desc desc = {
			.addr = d == 0 ? MSG(i) : 0,
			.len = 0x80000,
			.flags = VRING_DESC_F_NEXT,
			.next = (uint16_t)(d + 1),
		};

		if (d == nr_out) /* the reply buffer */
			desc = (struct vring_desc){ MSG(i) + 0x1000, 0x1000,
						    VRING_DESC_F_WRITE, 0 };
		memcpy(ram + RING + 16 * d, &desc, sizeof(desc));
	}
	before = used_idx();
	memcpy(avail + 4 + 2 * (f->avail % QSIZE), &head, 2);
	f->avail++;
	__atomic_store_n((uint16_t *)(avail + 2), f->avail, __ATOMIC_RELEASE);
	mmio_wr(&f->mmio, 0x050, 0);
	assert_true(wait_used(f, (uint16_t)(before + 1)));
	assert_int_equal(ram[MSG(i) + 0x1000 + 4], P9_RLERROR);
	memcpy(&ecode, ram + MSG(i) + 0x1000 + 7, 4);
	assert_int_equal(ecode, EMSGSIZE);
}

static int setup_process(void **state)
{
	int r;

	process_mode = true;
	r = setup(state);
	process_mode = false;
	return r;
}

/*
 * server=process through the rings: a read served by the file server, a
 * device reset that drops its fids (told by the next request's
 * generation at the latest), and its death answered EIO, not a hang.
 */
static void test_process_server(void **state)
{
	struct fixture *f = *state;
	struct p9_writer w;
	uint16_t before;
	uint32_t ecode;

	if (!f)
		skip();
	assert_true(virtio_9p_server_pid(f->vdev) > 0);
	open_slow(f);
	before = used_idx();
	post_read(f, 4);
	assert_true(wait_used(f, (uint16_t)(before + 1)));
	assert_int_equal(ram[MSG(4) + 0x1000 + 4], P9_TREAD + 1);
	assert_memory_equal(ram + MSG(4) + 0x1000 + 11, "slow data", 9);
	assert_int_equal(virtio_9p_msize(f->vdev), 8192);

	pthread_mutex_lock(&f->vdev->lock);
	f->vdev->ops->reset(f->vdev);
	pthread_mutex_unlock(&f->vdev->lock);
	before = used_idx();
	post_read(f, 5);
	assert_true(wait_used(f, (uint16_t)(before + 1)));
	assert_int_equal(ram[MSG(5) + 0x1000 + 4], P9_RLERROR);
	memcpy(&ecode, ram + MSG(5) + 0x1000 + 7, 4);
	assert_int_equal(ecode, EBADF);

	assert_int_equal(kill(virtio_9p_server_pid(f->vdev), SIGKILL), 0);
	w = msg(6, P9_TVERSION);
	p9_put_u32(&w, 8192);
	p9_put_str(&w, P9_VERSION_L, strlen(P9_VERSION_L));
	assert_int_equal(rpc(f, 6, &w), P9_RLERROR);
	memcpy(&ecode, ram + MSG(6) + 0x1000 + 7, 4);
	assert_int_equal(ecode, EIO);
}

/*
 * A snapshot keeps a share only while the guest has sent it nothing: the
 * tag is saved, the directory is the restoring VM's own; once the guest
 * mounted it (a Tversion), the save is refused naming the device, and a
 * device reset (a new session, no fid left) makes it saveable again.
 */
static void test_snapshot_unused_share_only(void **state)
{
	struct fixture *f = *state;
	struct virtio_9p_state s, saved;
	struct p9_writer w;

	if (!f)
		skip();
	pthread_mutex_lock(&f->vdev->lock);
	assert_int_equal(virtio_9p_save(f->vdev, &saved), 0);
	pthread_mutex_unlock(&f->vdev->lock);
	assert_int_equal(le16toh(saved.tag_len), 9);
	assert_memory_equal(saved.tag, "hostshare", 9);

	w = msg(0, P9_TVERSION);
	p9_put_u32(&w, 8192);
	p9_put_str(&w, P9_VERSION_L, strlen(P9_VERSION_L));
	assert_int_equal(rpc(f, 0, &w), P9_TVERSION + 1);
	pthread_mutex_lock(&f->vdev->lock);
	assert_int_equal(virtio_9p_save(f->vdev, &s), -EBUSY);
	assert_non_null(strstr(
		hvm_error_message(),
		"device virtio-9p0 (tag hostshare) cannot be snapshotted: the guest has used the share"));
	f->vdev->ops->reset(f->vdev);
	assert_int_equal(virtio_9p_save(f->vdev, &s), 0);

	/* Loaded back: the same tag is taken, another one refused. */
	assert_int_equal(virtio_9p_load(f->vdev, &saved), 0);
	s = saved;
	memcpy(s.tag, "otherdir!", 9);
	assert_int_equal(virtio_9p_load(f->vdev, &s), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-9p0: the share's tag is hostshare, but the snapshot's was otherdir!: the restored guest knows the share by the tag it read at boot; restore with --share DIR,tag=otherdir!");
	s = saved;
	s.tag_len = htole16(65);
	assert_int_equal(virtio_9p_load(f->vdev, &s), -EINVAL);
	assert_string_equal(
		hvm_error_message(),
		"virtio-9p0: the snapshot's mount tag is 65 bytes; expected 1-64");
	s = saved;
	s.reserved[3] = 1;
	assert_int_equal(virtio_9p_load(f->vdev, &s), -EINVAL);
	pthread_mutex_unlock(&f->vdev->lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mount_tag, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_slow_read_blocks_nothing_else, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_flush_answers_after_the_flushed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_flush, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_unused_share_only,
						setup, teardown),
	};
	/* Root only: the file server's mount namespace. */
	const struct CMUnitTest as_root[] = {
		cmocka_unit_test_setup_teardown(test_process_server,
						setup_process, teardown),
	};
	int r;

	if (!io_uring_works()) {
		printf("SKIP: io_uring is not available here\n");
		return 77;
	}
	log_set_level(LOG_ERROR);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	if (geteuid() != 0) {
		printf("# skipping server=process: not root\n");
		return r;
	}
	return r | cmocka_run_group_tests_name("server=process", as_root, NULL,
					       NULL);
}
