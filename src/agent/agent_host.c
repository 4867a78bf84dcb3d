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

#define REPORT_TIMEOUT_MS 5000
/* The guest CID --agent gives a VM that has no --vsock. */
#define AGENT_DEFAULT_CID 3

struct agent_host {
	pthread_t thread;
	bool thread_running;
	int pipe[2]; /* report connections, as fd numbers, to the thread */
	atomic_bool reported;
	atomic_int status; /* shell status: code or 128 + signal */
};

static void *report_thread(void *arg);

static int agent_host_start(struct vm *vm)
{
	struct agent_host *a = calloc(1, sizeof(*a));

	if (!a)
		return hvm_set_error(-ENOMEM, "out of memory");
	vm->agent = a;
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
	if (!cfg->kernel)
		return hvm_set_error(
			-EINVAL,
			"--agent boots a Linux kernel: give --kernel (e.g. /boot/vmlinuz-$(uname -r))");
	r = hvm_initramfs_cached(cfg->kernel, cfg->agent_modules, path,
				 sizeof(path));
	if (r < 0)
		return r;
	free(cfg->agent_initrd);
	cfg->agent_initrd = strdup(path);
	if (!cfg->agent_initrd)
		return hvm_set_error(-ENOMEM, "out of memory");
	pr_debug("agent: initramfs %s", path);
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

static int read_report(int fd, int *status)
{
	uint32_t v = 0, version = 0;
	struct agent_hdr hdr;
	uint8_t *payload;
	int r;

	r = agent_read_frame(fd, &hdr, &payload, REPORT_TIMEOUT_MS);
	if (r < 0)
		return r;
	if (hdr.type != AGENT_MSG_EXIT_REPORT ||
	    agent_get_u32(payload, hdr.len, AGENT_ATTR_VERSION, &version) ||
	    version != AGENT_PROTO_VERSION) {
		free(payload);
		return -EPROTO;
	}
	if (!agent_get_u32(payload, hdr.len, AGENT_ATTR_TERM_SIGNAL, &v) &&
	    v >= 1 && v <= 64)
		*status = agent_shell_status(true, v);
	else if (!agent_get_u32(payload, hdr.len, AGENT_ATTR_EXIT_CODE, &v) &&
		 v <= 255)
		*status = agent_shell_status(false, v);
	else
		r = -EPROTO;
	free(payload);
	return r;
}

/* One report connection: read, record, acknowledge. */
static void serve_report(struct agent_host *a, int fd)
{
	uint8_t ok[AGENT_HDR_SIZE];
	int status = 0, r;

	r = read_report(fd, &status);
	if (r == 0) {
		atomic_store(&a->status, status);
		atomic_store(&a->reported, true);
		pr_debug("agent: the main process exited, status %d", status);
		agent_hdr_encode(ok, &(struct agent_hdr){ .type = AGENT_MSG_OK,
							  .id = 1 });
		if (send(fd, ok, sizeof(ok), MSG_NOSIGNAL) < 0)
			pr_debug("agent: cannot acknowledge the exit report");
	} else {
		pr_warn("agent: unusable exit report from the guest: %s",
			strerror(-r));
	}
	close(fd);
}

/*
 * "hvm-agent": started before the sandbox closes, so the event loop (which
 * may not create threads) only writes a connection's fd number here. -1
 * ends the thread.
 */
static void *report_thread(void *arg)
{
	struct agent_host *a = arg;
	int fd;

	pthread_setname_np(pthread_self(), "hvm-agent"); /* prctl: first */
	sandbox_thread_enter(SANDBOX_AGENT_STATUS);
	for (;;) {
		ssize_t n = read(a->pipe[0], &fd, sizeof(fd));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(fd) || fd < 0)
			break;
		serve_report(a, fd);
	}
	return NULL;
}

void agent_host_on_connect(int fd, void *opaque)
{
	struct vm *vm = opaque;
	struct agent_host *a = vm->agent;

	/* Never blocks: a pipe holds thousands of fd numbers. */
	if (!a || write(a->pipe[1], &fd, sizeof(fd)) != sizeof(fd))
		close(fd);
}

bool agent_host_status(struct vm *vm, int *status)
{
	if (!vm->agent || !atomic_load(&vm->agent->reported))
		return false;
	*status = atomic_load(&vm->agent->status);
	return true;
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
	if (a->pipe[0] >= 0)
		close(a->pipe[0]);
	if (a->pipe[1] >= 0)
		close(a->pipe[1]);
	free(a);
	vm->agent = NULL;
}
