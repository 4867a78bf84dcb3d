// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A share's file-server process (p9_file_server.h, docs/shares.md,
 * server=process). The parent is multithreaded when it forks: the child
 * touches no lock another thread may have held (log_after_fork()), uses
 * only its own copies of what it needs, and _exit()s.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/log.h"
#include "devices/virtio/p9_file_server.h"
#include "devices/virtio/p9_proto.h"
#include "sandbox/sandbox.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The wire (native byte order: both ends are this binary on one host). */
enum { WIRE_MESSAGE = 1, WIRE_RESET = 2 };

struct wire_request {
	uint32_t op;
	uint32_t generation; /* the device's, when the request was queued */
	uint32_t len; /* the T-message's length as the guest gave it */
	uint32_t held; /* bytes that follow (< len: oversized, header only) */
	uint32_t cap; /* room for the reply */
};

struct wire_reply {
	uint32_t len; /* bytes that follow; 0: no reply */
	uint32_t msize; /* the server's negotiated msize */
	/*
	 * Its budget after this request (--stats: shares.server_objects);
	 * the peak is the VM's sum's own, which no server's peak gives.
	 */
	uint64_t used, refused;
};

/* How long setup may take, and exiting after its sockets closed. */
#define SETUP_TIMEOUT_MS 30000
#define EXIT_GRACE_MS 1000

/* 1: all of it; 0: EOF at once; -1: error or EOF part-way. */
static int read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (uint8_t *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 && done == 0 ? 0 : -1;
		done += (size_t)n;
	}
	return 1;
}

/* A peer gone is EPIPE here, never a SIGPIPE for the whole process. */
static int send_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const uint8_t *)buf + done, len - done,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* ---- the process's side ---- */

struct serve_state {
	struct p9_server *s;
	struct budget *budget; /* the server's own (its fid table's) */
	pthread_mutex_t lock;
	uint32_t generation;
};

struct serve_channel {
	struct serve_state *st;
	int fd;
	pthread_t thread;
	bool started;
};

/*
 * Whether a request of GENERATION may run: a newer one means the device
 * was reset (whichever socket said so first), an older one predates that
 * reset and its reply would be dropped anyway.
 */
static bool sync_generation(struct serve_state *st, uint32_t generation)
{
	int32_t ahead;

	pthread_mutex_lock(&st->lock);
	ahead = (int32_t)(generation - st->generation);
	if (ahead > 0) {
		p9_server_reset(st->s);
		st->generation = generation;
	}
	pthread_mutex_unlock(&st->lock);
	return ahead >= 0;
}

/*
 * The VMM is the less trusted side once its threads dropped root: a
 * header that does not describe a message this server could have been
 * sent ends the channel.
 */
static bool request_valid(const struct wire_request *h, uint32_t max)
{
	if (h->op != WIRE_MESSAGE && h->op != WIRE_RESET)
		return false;
	if (h->held > h->len || h->held > max)
		return false;
	if (h->held < h->len && (h->held < P9_HDR_SIZE || h->len <= max))
		return false;
	return h->cap <= max;
}

static void *serve_one(void *arg)
{
	struct serve_channel *c = arg;
	struct p9_server *s = c->st->s;
	uint32_t max = s->max_msize;
	uint8_t *req = malloc(max);
	uint8_t *out = malloc(sizeof(struct wire_reply) + max);

	while (req && out) {
		struct wire_request h;
		struct wire_reply r = { 0 };

		if (read_full(c->fd, &h, sizeof(h)) <= 0 ||
		    !request_valid(&h, max) ||
		    read_full(c->fd, req, h.held) < 0)
			break;
		if (sync_generation(c->st, h.generation) &&
		    h.op == WIRE_MESSAGE)
			r.len = (uint32_t)p9_server_handle(
				s, req, h.len, out + sizeof(r), h.cap);
		r.msize = p9_server_msize(s);
		if (c->st->budget) {
			r.used = atomic_load(&c->st->budget->used);
			r.refused = atomic_load(&c->st->budget->refused);
		}
		memcpy(out, &r, sizeof(r));
		if (send_full(c->fd, out, sizeof(r) + r.len) < 0)
			break;
	}
	free(req);
	free(out);
	close(c->fd);
	return NULL;
}

void p9_file_server_serve(struct p9_server *s, const int *fds, unsigned int n)
{
	struct serve_state st = { .s = s,
				  .budget = s->fids.budget,
				  .generation = 0 };
	struct serve_channel c[P9_FILE_SERVER_MAX_CHANNELS];

	if (n > P9_FILE_SERVER_MAX_CHANNELS)
		n = P9_FILE_SERVER_MAX_CHANNELS;
	pthread_mutex_init(&st.lock, NULL);
	for (unsigned int i = 0; i < n; i++) {
		c[i] = (struct serve_channel){ .st = &st, .fd = fds[i] };
		/* The caller's thread serves the first; one thread per other. */
		if (i > 0)
			c[i].started = pthread_create(&c[i].thread, NULL,
						      serve_one, &c[i]) == 0;
		if (i > 0 && !c[i].started)
			close(fds[i]); /* its worker sees EOF: EIO, logged */
	}
	if (n)
		serve_one(&c[0]);
	for (unsigned int i = 1; i < n; i++)
		if (c[i].started)
			pthread_join(c[i].thread, NULL);
	pthread_mutex_destroy(&st.lock);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every descriptor but KEEP[0, N) (sorted here). */
static void close_all_but(int *keep, unsigned int n)
{
	struct rlimit rl;
	unsigned int from = 0;
	unsigned int top = 65536;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < top)
		top = (unsigned int)rl.rlim_cur;
	qsort(keep, n, sizeof(*keep), cmp_int);
	for (unsigned int i = 0; i <= n; i++) {
		unsigned int to = i < n ? (unsigned int)keep[i] : ~0u;

		if (to > from &&
		    syscall(SYS_close_range, from, to - 1, 0) < 0) {
			/* Before Linux 5.9: one by one, up to the limit. */
			for (unsigned int fd = from; fd < to && fd < top; fd++)
				close((int)fd);
		}
		if (i < n)
			from = (unsigned int)keep[i] + 1;
	}
}

/*
 * Its own mount namespace whose root is the share: nothing outside the
 * share can be named, even by a path, whatever p9_fs.c would allow.
 */
static int enter_share(const char *root, bool readonly)
{
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV;

	if (unshare(CLONE_NEWNS) < 0)
		return hvm_set_errno_error("unshare(CLONE_NEWNS)");
	/*
	 * Nothing it does here may propagate back to the host's mounts;
	 * what the host mounts later under a shared mount of the share
	 * comes in (as virtiofsd does): a pod's share gets each container's
	 * rootfs mounted on the host after the VM started (docs/shim.md).
	 */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return hvm_set_errno_error("making its mounts slaves");
	if (mount(root, root, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hvm_set_errno_error("bind-mounting %s", root);
	/* ro: the kernel refuses writes too, not only p9_fs.c. */
	if (mount(NULL, root, NULL, flags | (readonly ? MS_RDONLY : 0), NULL) <
		    0 &&
	    readonly)
		return hvm_set_errno_error("remounting %s read-only", root);
	if (chdir(root) < 0)
		return hvm_set_errno_error("chdir %s", root);
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		if (umount2(".", MNT_DETACH) < 0)
			return hvm_set_errno_error("detaching the old root");
	} else if (errno != EINVAL ||
		   /*
		    * An initramfs root (rootfs) cannot be pivoted away from:
		    * move the share over / instead, as switch_root does. The
		    * old root stays below it, out of reach without
		    * CAP_SYS_CHROOT and CAP_SYS_ADMIN, which we drop.
		    */
		   mount(".", "/", NULL, MS_MOVE, NULL) < 0 ||
		   chroot(".") < 0) {
		return hvm_set_errno_error("pivot_root into %s", root);
	}
	if (chdir("/") < 0)
		return hvm_set_errno_error("chdir /");
	return 0;
}

static _Noreturn void child_fail(int status_fd, const char *what)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s: %s", what,
			 hvm_error_message());

	if (n > 0 && write(status_fd, line, (size_t)n) < 0) {
		/* the parent reports that the child exited without a word */
	}
	_exit(1);
}

static _Noreturn void child_main(const struct p9_file_server_config *cfg,
				 const char *root, int *fds, int status_fd,
				 pid_t parent)
{
	struct budget budget = { .limit = cfg->budget_limit };
	int keep[P9_FILE_SERVER_MAX_CHANNELS + 2];
	unsigned int n = cfg->channels;
	struct p9_server s;
	sigset_t none;
	int null;

	log_after_fork();
	/* Never outlive the VMM (the thread that forked, strictly). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, "hvm-9p-server");
	/* Ctrl-C at the terminal is the VMM's to handle, not ours. */
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Guest RAM was copied into this process by fork: give it back. */
	if (cfg->mem && cfg->mem->mapping)
		munmap(cfg->mem->mapping, cfg->mem->mapping_size);
	/* Its sockets, its status pipe, stderr for the log: nothing else. */
	memcpy(keep, fds, n * sizeof(*fds));
	keep[n] = status_fd;
	keep[n + 1] = STDERR_FILENO;
	close_all_but(keep, n + 2);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (null > STDOUT_FILENO)
			close(null);
	}
	if (enter_share(root, cfg->readonly) < 0)
		child_fail(status_fd, "its mount namespace");
	if (p9_server_init(&s, "/", cfg->readonly, cfg->ids, cfg->max_fids,
			   cfg->max_msize, &budget) < 0)
		child_fail(status_fd, "opening the share");
	/* Landlock, where the kernel has it: the share (its /) and no more. */
	if (p9_fs_grant(&s.fs) < 0 ||
	    sandbox_process_enter(SANDBOX_FILE_SERVER) < 0)
		child_fail(status_fd, "confining itself");
	if (write(status_fd, "ok", 2) != 2)
		_exit(1);
	close(status_fd);
	p9_file_server_serve(&s, fds, n);
	_exit(0);
}

/* ---- the VMM's side ---- */

static bool have_cap_sys_admin(void)
{
	struct __user_cap_header_struct header = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &header, data) < 0)
		return false;
	return data[CAP_SYS_ADMIN / 32].effective &
	       (1u << (CAP_SYS_ADMIN % 32));
}

static void reap(struct p9_file_server *fs, int grace_ms)
{
	struct pollfd p = { .fd = fs->pidfd, .events = POLLIN };
	siginfo_t info;

	if (fs->pidfd < 0)
		return;
	if (poll(&p, 1, grace_ms) <= 0)
		syscall(SYS_pidfd_send_signal, fs->pidfd, SIGKILL, NULL, 0);
	while (waitid(P_PIDFD, (id_t)fs->pidfd, &info, WEXITED) < 0 &&
	       errno == EINTR)
		;
	close(fs->pidfd);
	fs->pidfd = -1;
	fs->pid = 0;
}

/* Wait for "ok" or the child's reason; 0 or -errno recorded. */
static int wait_ready(struct p9_file_server *fs, int status_fd)
{
	struct pollfd p = { .fd = status_fd, .events = POLLIN };
	char line[512];
	ssize_t n = -1;

	if (poll(&p, 1, SETUP_TIMEOUT_MS) > 0) {
		do
			n = read(status_fd, line, sizeof(line) - 1);
		while (n < 0 && errno == EINTR);
	}
	if (n == 2 && !memcmp(line, "ok", 2))
		return 0;
	if (n > 0) {
		line[n] = '\0';
		return hvm_set_error(-EIO, "%s: its file-server process: %s",
				     fs->name, line);
	}
	return hvm_set_error(-EIO,
			     "%s: its file-server process %s during setup",
			     fs->name, n == 0 ? "exited" : "hung");
}

int p9_file_server_start(struct p9_file_server *fs,
			 const struct p9_file_server_config *cfg)
{
	int child[P9_FILE_SERVER_MAX_CHANNELS];
	char root[PATH_MAX];
	int status[2], r;
	struct stat st;
	pid_t parent = getpid(), pid;
	unsigned int n = cfg->channels;

	memset(fs, 0, sizeof(*fs));
	fs->pidfd = -1;
	fs->deaths = cfg->deaths;
	fs->report = cfg->report;
	atomic_store(&fs->msize, cfg->max_msize);
	snprintf(fs->name, sizeof(fs->name), "%s", cfg->name);
	if (n < 1 || n > P9_FILE_SERVER_MAX_CHANNELS)
		return hvm_set_error(-EINVAL, "%s: %u file-server channels",
				     fs->name, n);
	/* The words of p9_fs_open()'s refusal: one message, either server. */
	if (!realpath(cfg->dir, root) || stat(root, &st) < 0)
		return hvm_set_errno_error(
			"--share %s: cannot open the directory", cfg->dir);
	if (!S_ISDIR(st.st_mode))
		return hvm_set_error(
			-ENOTDIR, "--share %s: cannot open the directory: %s",
			cfg->dir, strerror(ENOTDIR));
	if (!have_cap_sys_admin())
		return hvm_set_error(
			-EPERM,
			"%s: --share %s,server=process: the share's file-server process needs root (CAP_SYS_ADMIN, for its own mount namespace); run hintvm as root or use server=thread",
			fs->name, cfg->dir);
	for (unsigned int i = 0; i < n; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) <
		    0) {
			r = hvm_set_errno_error("%s: socketpair", fs->name);
			goto fail;
		}
		fs->chan[i] = sv[0];
		child[i] = sv[1];
		fs->nr_chan++;
	}
	if (pipe2(status, O_CLOEXEC) < 0) {
		r = hvm_set_errno_error("%s: pipe", fs->name);
		goto fail;
	}
	pid = fork();
	if (pid == 0)
		child_main(cfg, root, child, status[1], parent);
	close(status[1]);
	for (unsigned int i = 0; i < n; i++)
		close(child[i]);
	if (pid < 0) {
		close(status[0]);
		r = hvm_set_errno_error("%s: fork", fs->name);
		goto fail_closed;
	}
	fs->pid = pid;
	fs->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fs->pidfd < 0) {
		r = hvm_set_errno_error("%s: pidfd_open (Linux 5.3)", fs->name);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(status[0]);
		goto fail_closed;
	}
	r = wait_ready(fs, status[0]);
	close(status[0]);
	if (r < 0) {
		p9_file_server_release(fs);
		return r;
	}
	pr_debug("%s: file-server process %d serves %s", fs->name, (int)pid,
		 root);
	return 0;
fail:
	for (unsigned int i = 0; i < fs->nr_chan; i++)
		close(child[i]);
fail_closed:
	for (unsigned int i = 0; i < fs->nr_chan; i++)
		close(fs->chan[i]);
	fs->nr_chan = 0;
	return r;
}

void p9_file_server_attach(struct p9_file_server *fs, const int *fds,
			   unsigned int n, const char *name)
{
	memset(fs, 0, sizeof(*fs));
	fs->pidfd = -1;
	atomic_store(&fs->msize, P9_MAX_MSIZE);
	snprintf(fs->name, sizeof(fs->name), "%s", name);
	for (unsigned int i = 0; i < n && i < P9_FILE_SERVER_MAX_CHANNELS; i++)
		fs->chan[fs->nr_chan++] = fds[i];
}

static void died(struct p9_file_server *fs)
{
	if (atomic_load(&fs->stopping) || atomic_exchange(&fs->dead, true))
		return;
	if (fs->deaths)
		atomic_fetch_add(fs->deaths, 1);
	pr_err("%s: its file-server process (pid %d) died; every request to the share fails with EIO from now on",
	       fs->name, (int)fs->pid);
}

static void pidfd_ready(struct event_watch *w)
{
	struct p9_file_server *fs =
		(struct p9_file_server *)((char *)w -
					  offsetof(struct p9_file_server,
						   watch));

	died(fs);
}

int p9_file_server_watch(struct p9_file_server *fs, struct event_loop *loop)
{
	if (fs->pidfd < 0)
		return 0;
	return event_loop_watch(loop, &fs->watch, fs->pidfd, false,
				pidfd_ready);
}

/* The server's figures into the VM's sum (budget_follow). */
static void report_budget(struct p9_file_server *fs, const struct wire_reply *r)
{
	if (!fs->report)
		return;
	budget_follow(fs->report, &fs->last_used, r->used);
	atomic_fetch_add(
		&fs->report->refused,
		r->refused - atomic_exchange(&fs->last_refused, r->refused));
}

/* One request and its reply on CHAN; the reply's length or -1. */
static ssize_t exchange(struct p9_file_server *fs, unsigned int chan,
			const struct wire_request *h, const uint8_t *req,
			uint8_t *reply, size_t cap)
{
	struct wire_reply r;
	int fd;

	if (chan >= fs->nr_chan || atomic_load(&fs->dead))
		return -1;
	fd = fs->chan[chan];
	if (send_full(fd, h, sizeof(*h)) < 0 ||
	    (h->held && send_full(fd, req, h->held) < 0) ||
	    read_full(fd, &r, sizeof(r)) <= 0 || r.len > cap ||
	    read_full(fd, reply, r.len) < 0) {
		died(fs);
		return -1;
	}
	atomic_store(&fs->msize, r.msize);
	report_budget(fs, &r);
	return r.len;
}

size_t p9_file_server_call(struct p9_file_server *fs, unsigned int chan,
			   uint32_t generation, const uint8_t *req, size_t held,
			   size_t len, uint8_t *reply, size_t cap)
{
	struct wire_request h = { WIRE_MESSAGE, generation, 0, 0, 0 };
	uint8_t type;
	uint16_t tag;
	ssize_t n;

	/* What p9_server_handle() would not answer either. */
	if (p9_peek_header(req, held, &type, &tag) < 0 || cap < P9_HDR_SIZE + 4)
		return 0;
	if (cap > P9_MAX_MSIZE)
		cap = P9_MAX_MSIZE;
	h.len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	h.held = (uint32_t)held;
	h.cap = (uint32_t)cap;
	n = exchange(fs, chan, &h, req, reply, cap);
	if (n < 0)
		return p9_build_lerror(reply, cap, tag, EIO);
	return (size_t)n;
}

void p9_file_server_reset(struct p9_file_server *fs, unsigned int chan,
			  uint32_t generation)
{
	struct wire_request h = { WIRE_RESET, generation, 0, 0, 0 };
	uint8_t none[1];

	atomic_store(&fs->msize, P9_MAX_MSIZE);
	exchange(fs, chan, &h, NULL, none, 0);
}

void p9_file_server_stop(struct p9_file_server *fs)
{
	atomic_store(&fs->stopping, true);
	/* shutdown, not close: it wakes a worker blocked in read(). */
	for (unsigned int i = 0; i < fs->nr_chan; i++)
		shutdown(fs->chan[i], SHUT_RDWR);
}

void p9_file_server_release(struct p9_file_server *fs)
{
	for (unsigned int i = 0; i < fs->nr_chan; i++)
		close(fs->chan[i]);
	fs->nr_chan = 0;
	/* Its sockets are closed: it exits by itself, or is made to. */
	reap(fs, EXIT_GRACE_MS);
}
