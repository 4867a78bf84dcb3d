// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <linux/virtio_9p.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>

#include "abi/p9_mount_tag.h"
#include "base/log.h"
#include "devices/virtio/iov.h"
#include "devices/virtio/p9_file_server.h"
#include "devices/virtio/p9_server.h"
#include "devices/virtio/virtio_9p.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

#define P9_QUEUE_SIZE 128 /* Linux's 9p client uses at most 128 */

/* clang-format off */
const char *const virtio_9p_worker_syscalls[] = {
	/* p9_fs.c: resolution (openat: the fd walk without openat2), *at() */
	"openat2", "openat", "close", "fstat", "newfstatat", "statx",
	"mkdirat", "unlinkat", "renameat", "renameat2", "linkat", "symlinkat",
	"readlinkat", "fchmod", "ftruncate", "utimensat", "fstatfs",
	"fgetxattr", "fsetxattr", "flistxattr", "fremovexattr", "fcntl",
	/* p9_server.c: I/O on open fids */
	"pread64", "pwrite64", "getdents64", "lseek", "fsync", "fdatasync",
	/* completing a request (eventfd kick, MSI/IRQ ioctl), malloc, exit */
	"futex", "write", "ioctl", "mmap", "munmap", "madvise", "brk",
	"mprotect", "rt_sigprocmask", "exit", "getpid", "gettid", "tgkill",
	NULL,
};
/* clang-format on */

struct virtio_9p;

struct p9_request {
	struct virtio_9p *p9;
	struct virtq_chain *chain;
	uint8_t *msg; /* the T-message, copied out of the ring */
	size_t held; /* bytes in msg */
	size_t len; /* its length in the ring: more than held when oversized */
	uint32_t generation; /* device resets when queued */
	uint16_t tag;
	bool busy; /* popped, not yet pushed */
	struct p9_request *flush; /* Tflushes waiting for this reply */
	struct p9_request *next; /* work queue */
};

struct virtio_9p {
	struct virtio_device vdev;
	struct p9_server server; /* server=thread */
	/* server=process: the workers hand each message to it instead */
	bool remote;
	struct p9_file_server file_server;
	char name[24];
	uint32_t generation; /* under vdev.lock */
	bool waiting_for_slot; /* under vdev.lock */
	/*
	 * The guest sent a request since the last reset (under vdev.lock):
	 * from then on the server may hold its fids, which a snapshot
	 * cannot keep (virtio_9p_save).
	 */
	bool used;
	/* Work queue, under work_lock (taken inside vdev.lock, never around). */
	pthread_mutex_t work_lock;
	pthread_cond_t work_cond;
	struct p9_request *head, *tail;
	bool stopping;
	/* server=process: a reset the file server has not heard of yet */
	bool reset_pending;
	uint32_t reset_generation;
	pthread_t workers[VIRTIO_9P_WORKERS];
	unsigned int nr_workers;
	struct p9_request reqs[P9_QUEUE_SIZE];
	size_t config_size;
	uint8_t config[2 + P9_MOUNT_TAG_MAX]; /* tag_len[le16] tag[] */
};

static struct virtio_9p *to_p9(struct virtio_device *vdev)
{
	return (struct virtio_9p *)vdev;
}

/* Hand REQ's reply (LEN bytes of BUF) back to the driver. Locked. */
static void push_reply(struct virtio_9p *p9, struct p9_request *req,
		       const uint8_t *buf, size_t len)
{
	struct virtio_device *vdev = &p9->vdev;
	uint32_t written;

	if (req->generation == p9->generation && virtio_device_live(vdev)) {
		written = (uint32_t)buf_to_iov(virtq_chain_in(req->chain),
					       req->chain->nr_in, buf, len);
		virtq_push(&vdev->vqs[0], req->chain->head, written);
		virtio_queue_notify_driver(vdev, 0);
	}
	free(req->msg);
	req->msg = NULL;
	req->busy = false;
}

/*
 * REQ was answered: now answer the Tflushes that waited for it, after it,
 * as 9P wants (the flushed reply first, then Rflush). Locked.
 */
static void finish(struct virtio_9p *p9, struct p9_request *req,
		   const uint8_t *buf, size_t len)
{
	struct p9_request *flush = req->flush;

	req->flush = NULL;
	push_reply(p9, req, buf, len);
	while (flush) {
		struct p9_request *next = flush->flush;
		uint8_t rflush[P9_HDR_SIZE];
		struct p9_writer w;

		flush->flush = NULL;
		p9_writer_init(&w, rflush, sizeof(rflush), P9_TFLUSH + 1,
			       flush->tag);
		push_reply(p9, flush, rflush, p9_writer_finish(&w));
		flush = next;
	}
	if (p9->waiting_for_slot) {
		p9->waiting_for_slot = false;
		virtio_device_kick(&p9->vdev, 0);
	}
}

struct worker_start {
	struct virtio_9p *p9;
	unsigned int index; /* server=process: its socket to the server */
};

/* Serve REQ in this process or in the file server, on worker INDEX's socket. */
static size_t serve(struct virtio_9p *p9, unsigned int index,
		    struct p9_request *req, uint8_t *reply, size_t cap)
{
	if (!p9->remote)
		return p9_server_handle(&p9->server, req->msg, req->len, reply,
					cap);
	return p9_file_server_call(&p9->file_server, index, req->generation,
				   req->msg, req->held, req->len, reply, cap);
}

static void *worker(void *arg)
{
	struct worker_start start = *(struct worker_start *)arg;
	struct virtio_9p *p9 = start.p9;
	uint8_t *reply;

	free(arg);
	pthread_setname_np(pthread_self(), "hvm-9p");
	/*
	 * A worker serves one share: its Landlock domain allows that tree.
	 * A worker of a file-server process opens nothing: no grant.
	 */
	if (!p9->remote && p9_fs_grant(&p9->server.fs) < 0)
		pr_warn("%s; the share's files will be refused to the guest",
			hvm_error_message());
	sandbox_thread_enter(SANDBOX_9P_WORKER);
	reply = malloc(P9_MAX_MSIZE);

	for (;;) {
		struct p9_request *req;
		size_t cap, len = 0;
		bool reset = false;
		uint32_t generation = 0;

		pthread_mutex_lock(&p9->work_lock);
		while (!p9->head && !p9->stopping && !p9->reset_pending)
			pthread_cond_wait(&p9->work_cond, &p9->work_lock);
		if (p9->reset_pending) {
			reset = true;
			generation = p9->reset_generation;
			p9->reset_pending = false;
		}
		req = reset ? NULL : p9->head;
		if (req) {
			p9->head = req->next;
			if (!p9->head)
				p9->tail = NULL;
		}
		pthread_mutex_unlock(&p9->work_lock);
		if (reset) {
			p9_file_server_reset(&p9->file_server, start.index,
					     generation);
			continue;
		}
		if (!req)
			break; /* stopping, and nothing left */
		cap = req->chain->in_len;
		if (cap > P9_MAX_MSIZE)
			cap = P9_MAX_MSIZE;
		/* Without a reply buffer (ENOMEM) the chain goes back empty. */
		if (reply)
			len = serve(p9, start.index, req, reply, cap);
		pthread_mutex_lock(&p9->vdev.lock);
		finish(p9, req, reply, len);
		pthread_mutex_unlock(&p9->vdev.lock);
	}
	free(reply);
	return NULL;
}

static struct virtq_chain *get_chain(struct virtio_device *vdev, uint16_t q)
{
	struct virtio_9p *p9 = to_p9(vdev);

	for (unsigned int i = 0; i < P9_QUEUE_SIZE; i++)
		if (!p9->reqs[i].busy)
			return p9->reqs[i].chain;
	p9->waiting_for_slot = true;
	return NULL;
}

static struct p9_request *request_of(struct virtio_9p *p9,
				     struct virtq_chain *chain)
{
	for (unsigned int i = 0; i < P9_QUEUE_SIZE; i++)
		if (p9->reqs[i].chain == chain)
			return &p9->reqs[i];
	return NULL;
}

/* A Tflush: answered once the request it names has been (or now). */
static bool flush_waits(struct virtio_9p *p9, struct p9_request *flush)
{
	uint8_t type;
	uint16_t tag, oldtag;

	/* held, not len: an oversized chain kept only its header. */
	if (flush->held < P9_HDR_SIZE + 2 ||
	    p9_peek_header(flush->msg, flush->held, &type, &tag) ||
	    type != P9_TFLUSH)
		return false;
	oldtag = (uint16_t)(flush->msg[7] | (flush->msg[8] << 8));
	for (unsigned int i = 0; i < P9_QUEUE_SIZE; i++) {
		struct p9_request *old = &p9->reqs[i];

		if (old == flush || !old->busy || old->tag != oldtag)
			continue;
		/* Chain behind the Tflushes already waiting for it. */
		while (old->flush)
			old = old->flush;
		old->flush = flush;
		return true;
	}
	return false;
}

static int handle(struct virtio_device *vdev, uint16_t q,
		  struct virtq_chain *chain)
{
	struct virtio_9p *p9 = to_p9(vdev);
	struct p9_request *req = request_of(p9, chain);
	uint8_t type;

	p9->used = true;
	if (chain->in_len < P9_HDR_SIZE + 4)
		return 0; /* no room even for an Rlerror */
	req->len = chain->out_len;
	if (req->len > P9_MAX_MSIZE)
		req->len = P9_HDR_SIZE; /* the header suffices for EMSGSIZE */
	req->msg = malloc(req->len ? req->len : 1);
	if (!req->msg)
		return 0;
	req->held =
		iov_to_buf(chain->iov, chain->nr_out, 0, req->msg, req->len);
	req->len = req->held;
	if (req->held == P9_HDR_SIZE && chain->out_len > P9_HDR_SIZE)
		req->len = chain->out_len; /* oversized: answered EMSGSIZE */
	if (p9_peek_header(req->msg, req->held, &type, &req->tag) < 0)
		req->tag = P9_NOTAG;
	req->generation = p9->generation;
	req->busy = true;
	req->flush = NULL;
	if (flush_waits(p9, req))
		return -EINPROGRESS;
	req->next = NULL;
	pthread_mutex_lock(&p9->work_lock);
	if (p9->tail)
		p9->tail->next = req;
	else
		p9->head = req;
	p9->tail = req;
	pthread_cond_signal(&p9->work_cond);
	pthread_mutex_unlock(&p9->work_lock);
	return -EINPROGRESS;
}

static const struct virtio_queue_handler p9_queue = {
	.get_chain = get_chain,
	.handle = handle,
};

static void p9_queue_notify(struct virtio_device *vdev, uint16_t q)
{
	virtio_queue_drain(vdev, q, &p9_queue);
}

static void p9_reset(struct virtio_device *vdev)
{
	struct virtio_9p *p9 = to_p9(vdev);

	/* Requests in flight finish and are dropped; a new session starts. */
	p9->generation++;
	p9->used = false;
	p9->waiting_for_slot = false;
	/* Tflushes parked behind a request are nobody's now: free them. */
	for (unsigned int i = 0; i < P9_QUEUE_SIZE; i++) {
		struct p9_request *flush = p9->reqs[i].flush;

		p9->reqs[i].flush = NULL;
		while (flush) {
			struct p9_request *next = flush->flush;

			flush->flush = NULL;
			free(flush->msg);
			flush->msg = NULL;
			flush->busy = false;
			flush = next;
		}
	}
	if (!p9->remote) {
		p9_server_reset(&p9->server);
		return;
	}
	/*
	 * The file server hears of it from the next free worker; until then
	 * every request carries the new generation, so none from before the
	 * reset can run after it. A vCPU never waits on that process.
	 */
	pthread_mutex_lock(&p9->work_lock);
	p9->reset_pending = true;
	p9->reset_generation = p9->generation;
	pthread_cond_signal(&p9->work_cond);
	pthread_mutex_unlock(&p9->work_lock);
}

static void stop_workers(struct virtio_9p *p9)
{
	pthread_mutex_lock(&p9->work_lock);
	p9->stopping = true;
	pthread_cond_broadcast(&p9->work_cond);
	pthread_mutex_unlock(&p9->work_lock);
	/* A worker waiting on a slow or stuck file server wakes up. */
	if (p9->remote)
		p9_file_server_stop(&p9->file_server);
	for (unsigned int i = 0; i < p9->nr_workers; i++)
		pthread_join(p9->workers[i], NULL);
	p9->nr_workers = 0;
}

static void p9_destroy(struct virtio_device *vdev)
{
	struct virtio_9p *p9 = to_p9(vdev);

	stop_workers(p9);
	for (unsigned int i = 0; i < P9_QUEUE_SIZE; i++) {
		free(p9->reqs[i].chain);
		free(p9->reqs[i].msg);
	}
	if (p9->remote)
		p9_file_server_release(&p9->file_server);
	else
		p9_server_destroy(&p9->server);
	pthread_mutex_destroy(&p9->work_lock);
	pthread_cond_destroy(&p9->work_cond);
	virtio_device_destroy(vdev);
	free(p9);
}

static const struct virtio_device_ops p9_ops = {
	.queue_notify = p9_queue_notify,
	.reset = p9_reset,
	.destroy = p9_destroy,
};

/* Each fid may hold an open file: make room for all of them. */
static void raise_fd_limit(unsigned int wanted)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= wanted)
		return;
	rl.rlim_cur = rl.rlim_max < wanted ? rl.rlim_max : wanted;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		pr_debug("raised the open-file limit to %llu for --share",
			 (unsigned long long)rl.rlim_cur);
}

_Static_assert(sizeof(((struct virtio_9p_state *)0)->tag) == P9_MOUNT_TAG_MAX,
	       "a saved tag holds the longest tag");

int virtio_9p_save(struct virtio_device *vdev, struct virtio_9p_state *s)
{
	struct virtio_9p *p9 = to_p9(vdev);
	size_t len = p9->config_size - 2;

	memset(s, 0, sizeof(*s));
	if (p9->used)
		return hvm_set_error(
			-EBUSY,
			"device %s (tag %.*s) cannot be snapshotted: the guest has used the share (mounted it), and its open files and walked paths there (9P fids) live in hintvm's 9P server, which a snapshot does not save; a share can be snapshotted only before the guest's first request on it",
			p9->name, (int)len, (const char *)p9->config + 2);
	s->tag_len = htole16((uint16_t)len);
	memcpy(s->tag, p9->config + 2, len);
	return 0;
}

int virtio_9p_load(struct virtio_device *vdev, const struct virtio_9p_state *s)
{
	struct virtio_9p *p9 = to_p9(vdev);
	size_t len = le16toh(s->tag_len), have = p9->config_size - 2;

	for (size_t i = 0; i < sizeof(s->reserved); i++)
		if (s->reserved[i])
			return hvm_set_error(
				-EINVAL,
				"%s: reserved byte %zu is 0x%02x; expected 0",
				p9->name, i, s->reserved[i]);
	if (len == 0 || len > sizeof(s->tag))
		return hvm_set_error(
			-EINVAL,
			"%s: the snapshot's mount tag is %zu bytes; expected 1-%zu",
			p9->name, len, sizeof(s->tag));
	/* The guest read its tag at probe and mounts by it. */
	if (len != have || memcmp(s->tag, p9->config + 2, len))
		return hvm_set_error(
			-EINVAL,
			"%s: the share's tag is %.*s, but the snapshot's was %.*s: the restored guest knows the share by the tag it read at boot; restore with --share DIR,tag=%.*s",
			p9->name, (int)have, (const char *)p9->config + 2,
			(int)len, s->tag, (int)len, s->tag);
	p9->used = false;
	return 0;
}

void virtio_9p_set_before_op(struct virtio_device *vdev,
			     void (*fn)(void *ctx, uint8_t type), void *ctx)
{
	struct virtio_9p *p9 = to_p9(vdev);

	p9->server.before_op = fn;
	p9->server.before_op_ctx = ctx;
}

uint32_t virtio_9p_msize(struct virtio_device *vdev)
{
	struct virtio_9p *p9 = to_p9(vdev);

	return p9->remote ? p9_file_server_msize(&p9->file_server)
			  : p9_server_msize(&p9->server);
}

pid_t virtio_9p_server_pid(struct virtio_device *vdev)
{
	struct virtio_9p *p9 = to_p9(vdev);

	return p9->remote ? p9->file_server.pid : 0;
}

/* The share's server: these threads' own, or a process of its own. */
static int start_server(struct virtio_9p *p9, const struct virtio_host *host,
			const struct virtio_9p_share *share)
{
	struct p9_file_server_config cfg = {
		.dir = share->dir,
		.readonly = share->readonly,
		.ids = share->ids,
		.max_fids = VIRTIO_9P_MAX_FIDS,
		.max_msize = P9_MAX_MSIZE,
		.budget_limit =
			host->guest_objects ? host->guest_objects->limit : 0,
		.channels = VIRTIO_9P_WORKERS,
		.mem = host->mem,
		.deaths = host->share_server_deaths,
		.report = host->share_objects,
	};
	char name[64];

	if (share->server != VIRTIO_9P_SERVER_PROCESS)
		return p9_server_init(&p9->server, share->dir, share->readonly,
				      share->ids, VIRTIO_9P_MAX_FIDS,
				      P9_MAX_MSIZE, host->guest_objects);
	snprintf(name, sizeof(name), "%s (tag %s)", p9->name, share->tag);
	cfg.name = name;
	p9->remote = true;
	return p9_file_server_start(&p9->file_server, &cfg);
}

struct virtio_device *virtio_9p_create(const struct virtio_host *host,
				       const struct virtio_9p_share *share,
				       unsigned int index)
{
	const char *dir = share->dir, *tag = share->tag;
	bool readonly = share->readonly;
	enum p9_id_mode ids = share->ids;
	struct virtio_9p *p9;
	size_t tag_len = strlen(tag);
	uint16_t le_len = htole16((uint16_t)tag_len);
	int r;

	if (!p9_mount_tag_valid(tag)) {
		hvm_set_error(
			-EINVAL,
			"--share %s: tag '%s' must be 1-%d characters of A-Z a-z 0-9 _ . -",
			dir, tag, P9_MOUNT_TAG_MAX);
		return NULL;
	}
	p9 = calloc(1, sizeof(*p9));
	if (!p9) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(p9->name, sizeof(p9->name), "virtio-9p%u", index);
	/* Before the fork: a file server inherits the limit. */
	raise_fd_limit(VIRTIO_9P_MAX_FIDS + 1024);
	if (start_server(p9, host, share) < 0) {
		free(p9);
		return NULL;
	}
	pthread_mutex_init(&p9->work_lock, NULL);
	pthread_cond_init(&p9->work_cond, NULL);
	memcpy(p9->config, &le_len, 2);
	memcpy(p9->config + 2, tag, tag_len);
	p9->config_size = 2 + tag_len;
	r = virtio_device_init(
		&p9->vdev, p9->name, &p9_ops, host->mem, VIRTIO_ID_9P,
		VIRTIO_BIT(VIRTIO_9P_MOUNT_TAG) |
			VIRTIO_BIT(VIRTIO_RING_F_INDIRECT_DESC) |
			VIRTIO_BIT(VIRTIO_RING_F_EVENT_IDX),
		1, P9_QUEUE_SIZE, p9->config, (uint32_t)p9->config_size);
	if (r < 0) {
		if (p9->remote)
			p9_file_server_release(&p9->file_server);
		else
			p9_server_destroy(&p9->server);
		free(p9);
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	for (unsigned int i = 0; i < P9_QUEUE_SIZE; i++) {
		p9->reqs[i].p9 = p9;
		p9->reqs[i].chain = virtq_chain_alloc(P9_QUEUE_SIZE);
		if (!p9->reqs[i].chain) {
			hvm_set_error(-ENOMEM, "out of memory");
			p9_destroy(&p9->vdev);
			return NULL;
		}
	}
	for (unsigned int i = 0; i < VIRTIO_9P_WORKERS; i++) {
		struct worker_start *start = malloc(sizeof(*start));

		r = ENOMEM;
		if (start) {
			*start = (struct worker_start){ p9, i };
			r = vm_thread_create(&p9->workers[i], worker, start);
		}
		if (r) {
			free(start);
			hvm_set_error(-r,
				      "%s: cannot start a worker thread: %s",
				      p9->name, strerror(r));
			p9_destroy(&p9->vdev);
			return NULL;
		}
		p9->nr_workers++;
	}
	/*
	 * Last, as nothing after it may fail: the loop holds the watch until
	 * it is destroyed, which is before p9_destroy().
	 */
	if (p9->remote && host->loop) {
		r = p9_file_server_watch(&p9->file_server, host->loop);
		if (r < 0) {
			hvm_set_error(r, "%s: watching its file server: %s",
				      p9->name, strerror(-r));
			p9_destroy(&p9->vdev);
			return NULL;
		}
	}
	pr_info("%s: %s as '%s'%s%s%s", p9->name, dir, tag,
		readonly ? ", read-only" : "",
		ids == P9_IDS_MAPPED ? ", ids=mapped" : "",
		p9->remote ? ", served by its own process" : "");
	return &p9->vdev;
}
