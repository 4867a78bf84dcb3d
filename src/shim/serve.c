// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The long-lived shim: one thread, the ttrpc server's poll round, which
 * also watches the VMM process (its pidfd, task.c) and the shim's own
 * signals (a signalfd): SIGCHLD reaps what was reparented to this child
 * subreaper, SIGTERM/SIGINT leave the loop. It logs to the bundle's "log"
 * fifo, which containerd 1.6 creates and reads, and tells `start` through
 * HINTVM_SHIM_READY_FD that it listens.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "runtime/state.h"
#include "shim/pod.h"
#include "shim/shim.h"

/* A Shutdown's answer gets this long to leave before the shim exits. */
#define SHIM_FLUSH_ROUNDS 10
#define SHIM_FLUSH_MS 20

static void tell_start(const char *msg)
{
	const char *env = getenv("HINTVM_SHIM_READY_FD");
	char *end;
	long fd;

	if (!env)
		return;
	fd = strtol(env, &end, 10);
	unsetenv("HINTVM_SHIM_READY_FD");
	if (*end || fd < 3 || fd > 1024)
		return;
	if (write((int)fd, msg, strlen(msg)) < 0)
		rt_warn("cannot tell start: %s", strerror(errno));
	close((int)fd);
}

/* containerd 1.6 reads the shim's log from the fifo "log" in the bundle. */
static void open_log(void)
{
	int fd = open("log", O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	dup2(fd, 2);
	close(fd);
}

/* Children other than the VMM process (what the VM forked and left when
 * it died) are reaped here; the VMM process's status is the task's. */
static void reap(struct shim *s)
{
	for (;;) {
		siginfo_t info = { 0 };

		if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) ||
		    !info.si_pid)
			return;
		if (s->task.exists && info.si_pid == s->task.pid) {
			if (s->task.exited)
				return; /* Delete of a created task reaps it */
			shim_task_reaped(s);
			continue;
		}
		if (shim_exec_reaped(s, info.si_pid))
			continue;
		waitpid(info.si_pid, NULL, WNOHANG);
	}
}

static void on_signal(void *opaque, int fd, short revents)
{
	struct shim *s = opaque;
	struct signalfd_siginfo si;

	(void)revents;
	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(s);
		else
			s->shutdown = true;
	}
}

int shim_serve(const struct shim_flags *f)
{
	static struct shim s;
	struct ttrpc_service svc;
	struct ttrpc_server_config cfg = { 0 };
	char address[PATH_MAX];
	const char *path = f->socket;
	sigset_t set;
	int sfd, ret = 0;

	if (!f->id || !rt_valid_id(f->id)) {
		tell_start("-id: expected a task id");
		return -EINVAL;
	}
	if (f->bundle && *f->bundle && chdir(f->bundle)) {
		tell_start("-bundle: cannot enter it");
		return -errno;
	}
	open_log();
	signal(SIGPIPE, SIG_IGN);
	/* The VMM process is the runtime helper's child; its exit status
	 * must come to us once the helper has gone. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		tell_start("cannot become a child subreaper");
		return -errno;
	}
	if (!path) {
		shim_socket_address(f->address ? f->address : "", f->namespace,
				    f->id, address, sizeof(address));
		path = address + strlen("unix://");
	}
	shim_task_reset(&s.task);
	shim_events_init(&s.events, getenv("TTRPC_ADDRESS"), f->namespace);
	svc = shim_pod_service(&s); /* task.c's, with pods (pod.c) */
	cfg.services = &svc;
	cfg.n_services = 1;
	s.server = ttrpc_server_create(&cfg);
	if (!s.server || ttrpc_server_listen(s.server, path)) {
		char msg[600];

		snprintf(msg, sizeof(msg), "%s", hvm_error_message());
		tell_start(msg);
		rt_error("%s", msg);
		return -EIO;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0 ||
	    ttrpc_server_watch(s.server, sfd, POLLIN, on_signal, &s)) {
		tell_start("cannot watch signals");
		ret = -EIO;
		goto out;
	}
	tell_start("ok");
	rt_debug("shim for %s/%s serving on %s", f->namespace, f->id, path);

	while (!s.shutdown) {
		ret = ttrpc_server_poll(s.server, -1);
		if (ret && ret != -EINTR) {
			rt_error("ttrpc: poll: %s", strerror(-ret));
			break;
		}
		ret = 0;
	}
	for (int i = 0;
	     i < SHIM_FLUSH_ROUNDS && ttrpc_server_conn_count(s.server); i++)
		ttrpc_server_poll(s.server, SHIM_FLUSH_MS);
out:
	unlink(path);
	ttrpc_server_destroy(s.server);
	shim_events_close(&s.events);
	return ret;
}
