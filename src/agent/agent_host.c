// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `hintvm run --agent` (docs/agent.md): before the VM is assembled, the
 * agent's initramfs for --kernel, a vsock device to reach the agent and
 * the main process on the kernel command line; while it runs, the
 * guest's exit report on host port AGENT_STATUS_PORT, which the builder
 * routes here from the vsock device's in-process listener.
 *
 * The report arrives on the device's event loop thread, which must not
 * block (nor, sandboxed, create threads): it hands the connection to a
 * thread of the agent's own, started with the VM, which reads it (bounded
 * by a timeout), records the status, then acknowledges, so the agent
 * powers off only once the status is in.
 *
 * The guest opens as many connections to the port as it likes, so the
 * host bounds them: at most AGENT_REPORT_MAX_PENDING are pending at once (more
 * are closed by the event loop at once and counted in the VM's stats),
 * and the thread serves the pending ones together, each against its own
 * deadline, so a silent connection costs a slot, never the real report
 * behind it its turn.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "abi/agent_proto.h"
#include "agent/agent_client.h"
#include "agent/agent_host.h"
#include "agent/agent_stdio.h"
#include "base/log.h"
#include "control/registry.h"
#include "core/vm.h"
#include "hintvm/hintvm.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

/* How long a report connection may take to deliver its frame. */
#define REPORT_TIMEOUT_MS 5000
/* An EXIT_REPORT carries three u32s; room for attributes added later. */
#define REPORT_MAX_PAYLOAD 1024
/* The guest CID --agent gives a VM that has no --vsock. */
#define AGENT_DEFAULT_CID 3

/* A report connection the thread is reading, with what came so far. */
struct report_conn {
	int fd; /* -1: a free slot */
	int64_t deadline_ms;
	size_t got; /* bytes of the frame in buf */
	uint8_t buf[AGENT_HDR_SIZE + REPORT_MAX_PAYLOAD];
};

struct agent_host {
	pthread_t thread;
	bool thread_running;
	int pipe[2]; /* report connections, as fd numbers, to the thread */
	/*
	 * Connections in the pipe or in a slot: the event loop counts one
	 * up before it writes the fd, the thread down after it closes one,
	 * so the pipe never holds more than AGENT_REPORT_MAX_PENDING fds and the
	 * thread always has a free slot for the next.
	 */
	atomic_uint pending;
	struct report_conn
		conn[AGENT_REPORT_MAX_PENDING]; /* the thread's own */
	atomic_bool reported;
	atomic_int status; /* shell status: code or 128 + signal */
	/* The main process's cgroup's OOM kills, HVM_GUEST_STAT_UNKNOWN
	 * when the report had none (an agent without a task cgroup). */
	_Atomic uint64_t oom_kills;
};

static void *report_thread(void *arg);

int agent_host_start(struct vm *vm)
{
	struct agent_host *a = calloc(1, sizeof(*a));

	if (!a)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->agent = a;
	for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING; i++)
		a->conn[i].fd = -1;
	if (pipe2(a->pipe, O_CLOEXEC) < 0) {
		a->pipe[0] = a->pipe[1] = -1;
		return hvm_set_errno_error("--agent: pipe");
	}
	if (vm_thread_create(&a->thread, report_thread, a) != 0)
		return hvm_set_error(-EAGAIN, "--agent: cannot start a thread");
	a->thread_running = true;
	return 0;
}

static int append_init_args(struct hvm_config *cfg)
{
	const char *base = cfg->cmdline ? cfg->cmdline : "";
	char *cmdline;

	if (!cfg->init_args || !cfg->init_args[0])
		return 0;
	if (asprintf(&cmdline, "%s%s-- %s", base, base[0] ? " " : "",
		     cfg->init_args) < 0)
		return hvm_set_error(-ENOMEM, "out of memory");
	free(cfg->cmdline);
	cfg->cmdline = cmdline;
	return 0;
}

static int default_vsock(struct hvm_config *cfg)
{
	char dir[108];
	static atomic_uint counter;
	char *uds;
	int r;

	cfg->vsock.enabled = true;
	if (!cfg->vsock.cid)
		cfg->vsock.cid = AGENT_DEFAULT_CID;
	if (cfg->vsock.uds)
		return 0;
	r = registry_open_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	if (cfg->name)
		r = asprintf(&uds, "%s/%s.vsock", dir, cfg->name);
	else
		r = asprintf(&uds, "%s/agent-%d-%u.vsock", dir, (int)getpid(),
			     atomic_fetch_add(&counter, 1));
	if (r < 0)
		return hvm_set_error(-ENOMEM, "out of memory");
	/* The device adds "_<port>" for guest connections: keep room. */
	if (strlen(uds) > 107 - 11) {
		free(uds);
		return hvm_set_error(
			-ENAMETOOLONG,
			"--agent: the vsock socket path in %s is too long; give --vsock cid=N,uds=PATH",
			dir);
	}
	cfg->vsock.uds = uds;
	return 0;
}

int agent_host_prepare(struct vm *vm)
{
	struct hvm_config *cfg = vm->cfg;
	char path[4096];
	int r;

	if (!cfg->agent) {
		if (cfg->agent_modules)
			pr_warn("--agent-modules without --agent: ignored");
		if (cfg->agent_stdio_fd[0] >= 0)
			return hvm_set_error(
				-EINVAL,
				"--agent-stdio (agent stdio fds) needs --agent: only the agent connects them in the guest");
		return append_init_args(cfg);
	}
	/* A restored guest's agent is in its memory already: no boot files. */
	if (!cfg->kernel && !cfg->restore)
		return hvm_set_error(
			-EINVAL,
			"--agent boots a Linux kernel: give --kernel (e.g. /boot/vmlinuz-$(uname -r))");
	if (!cfg->restore) {
		r = hvm_initramfs_cached(cfg->kernel, cfg->agent_modules, path,
					 sizeof(path));
		if (r < 0)
			return r;
		free(cfg->agent_initrd);
		cfg->agent_initrd = strdup(path);
		if (!cfg->agent_initrd)
			return hvm_set_error(-ENOMEM, "out of memory");
		pr_debug("agent: initramfs %s", path);
	}
	r = default_vsock(cfg);
	if (r < 0)
		return r;
	r = agent_host_start(vm);
	if (r < 0)
		return r;
	r = agent_stdio_start(vm);
	if (r < 0)
		return r;
	return append_init_args(cfg);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The status an EXIT_REPORT's validated payload carries, and its OOM
 * kills (HVM_GUEST_STAT_UNKNOWN without), or -EPROTO.
 */
static int parse_report(const struct agent_hdr *hdr, const uint8_t *payload,
			int *status, uint64_t *oom_kills)
{
	uint32_t v = 0, version = 0;

	if (hdr->type != AGENT_MSG_EXIT_REPORT ||
	    agent_get_u32(payload, hdr->len, AGENT_ATTR_VERSION, &version) ||
	    version != AGENT_PROTO_VERSION)
		return -EPROTO;
	if (!agent_get_u32(payload, hdr->len, AGENT_ATTR_TERM_SIGNAL, &v) &&
	    v >= 1 && v <= 64)
		*status = agent_shell_status(true, v);
	else if (!agent_get_u32(payload, hdr->len, AGENT_ATTR_EXIT_CODE, &v) &&
		 v <= 255)
		*status = agent_shell_status(false, v);
	else
		return -EPROTO;
	if (agent_get_u64(payload, hdr->len, AGENT_ATTR_OOM_KILLS, oom_kills))
		*oom_kills = HVM_GUEST_STAT_UNKNOWN;
	return 0;
}

/* Free C's slot; the event loop may take one more connection. */
static void conn_close(struct agent_host *a, struct report_conn *c)
{
	close(c->fd);
	c->fd = -1;
	atomic_fetch_sub(&a->pending, 1);
}

/* The whole frame is in: record the status, acknowledge. */
static void conn_finish(struct agent_host *a, struct report_conn *c,
			const struct agent_hdr *hdr)
{
	const uint8_t *payload = c->buf + AGENT_HDR_SIZE;
	uint8_t ok[AGENT_HDR_SIZE];
	uint64_t oom_kills = HVM_GUEST_STAT_UNKNOWN;
	int status = 0, r;

	r = agent_payload_validate(payload, hdr->len);
	if (r == 0)
		r = parse_report(hdr, payload, &status, &oom_kills);
	if (r < 0) {
		pr_warn("agent: unusable exit report from the guest: %s",
			strerror(-r));
		return;
	}
	/* Both before reported: a reader that sees it sees them. */
	atomic_store(&a->status, status);
	atomic_store(&a->oom_kills, oom_kills);
	atomic_store(&a->reported, true);
	pr_debug("agent: the main process exited, status %d", status);
	agent_hdr_encode(ok,
			 &(struct agent_hdr){ .type = AGENT_MSG_OK, .id = 1 });
	/* A fresh connection's buffer takes 12 bytes: never waits. */
	if (send(c->fd, ok, sizeof(ok), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		pr_debug("agent: cannot acknowledge the exit report");
}

/*
 * C is readable: take what of its frame has come, without waiting (the
 * header first, then exactly the payload it announces, never more).
 * False when the connection is done with: served, refused or gone.
 */
static bool conn_read(struct agent_host *a, struct report_conn *c)
{
	struct agent_hdr hdr = { 0 };
	size_t want = AGENT_HDR_SIZE;
	ssize_t n;

	if (c->got >= AGENT_HDR_SIZE)
		want += agent_hdr_decode(c->buf, &hdr) == 0 ? hdr.len : 0;
	n = recv(c->fd, c->buf + c->got, want - c->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		/* Debug only: a guest can repeat this as fast as it likes. */
		if (c->got)
			pr_debug(
				"agent: exit report connection ended mid-frame");
		return false;
	}
	c->got += (size_t)n;
	if (c->got < want)
		return true;
	if (want == AGENT_HDR_SIZE) {
		if (agent_hdr_decode(c->buf, &hdr) < 0 ||
		    hdr.len > REPORT_MAX_PAYLOAD) {
			pr_warn("agent: exit report frame too large (at most %u bytes)",
				REPORT_MAX_PAYLOAD);
			return false;
		}
		if (hdr.len)
			return true;
	}
	conn_finish(a, c, &hdr);
	return false;
}

/* A new connection from the event loop goes into a free slot. */
static void conn_add(struct agent_host *a, int fd)
{
	for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING; i++) {
		if (a->conn[i].fd >= 0)
			continue;
		a->conn[i].fd = fd;
		a->conn[i].got = 0;
		a->conn[i].deadline_ms = now_ms() + REPORT_TIMEOUT_MS;
		return;
	}
	/* Not reached: pending bounds the fds in the pipe and the slots. */
	close(fd);
	atomic_fetch_sub(&a->pending, 1);
}

/*
 * "hvm-agent": started before the sandbox closes, so the event loop (which
 * may not create threads) only writes a connection's fd number here. It
 * polls the pipe and every pending connection at once: a frame on any is
 * served as it arrives, and each connection is closed at its own
 * deadline. -1 on the pipe ends the thread.
 */
static void *report_thread(void *arg)
{
	struct agent_host *a = arg;
	struct pollfd pfd[1 + AGENT_REPORT_MAX_PENDING];
	bool running = true;

	pthread_setname_np(pthread_self(), "hvm-agent"); /* prctl: first */
	sandbox_thread_enter(SANDBOX_AGENT_STATUS);
	while (running) {
		int64_t now = now_ms(), next = -1;
		int timeout, fd;
		ssize_t n;

		pfd[0] = (struct pollfd){ .fd = a->pipe[0], .events = POLLIN };
		for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING; i++) {
			struct report_conn *c = &a->conn[i];

			if (c->fd >= 0 && now >= c->deadline_ms) {
				pr_warn("agent: no exit report within %d ms on a connection to port %u: closed",
					REPORT_TIMEOUT_MS, AGENT_STATUS_PORT);
				conn_close(a, c);
			}
			pfd[1 + i] = (struct pollfd){ .fd = c->fd,
						      .events = POLLIN };
			if (c->fd >= 0 && (next < 0 || c->deadline_ms < next))
				next = c->deadline_ms;
		}
		timeout = next < 0 ? -1 : (int)(next - now);
		if (poll(pfd, 1 + AGENT_REPORT_MAX_PENDING, timeout) < 0)
			continue; /* EINTR; the deadlines are checked above */
		for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING; i++)
			if (pfd[1 + i].fd >= 0 && pfd[1 + i].revents &&
			    !conn_read(a, &a->conn[i]))
				conn_close(a, &a->conn[i]);
		if (!(pfd[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(a->pipe[0], &fd, sizeof(fd));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(fd) || fd < 0)
			running = false;
		else
			conn_add(a, fd);
	}
	for (unsigned int i = 0; i < AGENT_REPORT_MAX_PENDING; i++)
		if (a->conn[i].fd >= 0)
			conn_close(a, &a->conn[i]);
	return NULL;
}

void agent_host_on_connect(int fd, void *opaque)
{
	struct vm *vm = opaque;
	struct agent_host *a = vm->agent;

	if (!a) {
		close(fd);
		return;
	}
	/* Over the bound: refused here, so the guest cannot pile up fds. */
	if (atomic_fetch_add(&a->pending, 1) >= AGENT_REPORT_MAX_PENDING) {
		atomic_fetch_sub(&a->pending, 1);
		atomic_fetch_add(&vm->agent_reports_refused, 1);
		close(fd);
		return;
	}
	/* Never blocks: the pipe holds AGENT_REPORT_MAX_PENDING fd numbers. */
	if (write(a->pipe[1], &fd, sizeof(fd)) != sizeof(fd)) {
		atomic_fetch_sub(&a->pending, 1);
		close(fd);
	}
}

bool agent_host_status(struct vm *vm, int *status)
{
	if (!vm->agent || !atomic_load(&vm->agent->reported))
		return false;
	*status = atomic_load(&vm->agent->status);
	return true;
}

uint64_t agent_host_oom_kills(struct vm *vm)
{
	if (!vm->agent || !atomic_load(&vm->agent->reported))
		return HVM_GUEST_STAT_UNKNOWN;
	return atomic_load(&vm->agent->oom_kills);
}

void agent_host_destroy(struct vm *vm)
{
	struct agent_host *a = vm->agent;
	int stop = -1;

	if (!a)
		return;
	if (a->thread_running) {
		if (write(a->pipe[1], &stop, sizeof(stop)) == sizeof(stop))
			pthread_join(a->thread, NULL);
		else
			pthread_detach(a->thread);
	}
	/* Connections the thread never took (it had stopped): close them. */
	if (a->pipe[0] >= 0 && fcntl(a->pipe[0], F_SETFL, O_NONBLOCK) == 0) {
		int fd;

		while (read(a->pipe[0], &fd, sizeof(fd)) == sizeof(fd))
			if (fd >= 0)
				close(fd);
	}
	if (a->pipe[0] >= 0)
		close(a->pipe[0]);
	if (a->pipe[1] >= 0)
		close(a->pipe[1]);
	free(a);
	vm->agent = NULL;
}
