// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A question to a task's guest agent without holding the shim: its cgroup
 * numbers (hvm_guest_cgroup_stats), which Stats reports and a pod
 * container's exit needs for its OOM kills. A guest can leave the agent's
 * connection unanswered for up to 15 s (10 s handshake, 5 s answer), and
 * the shim serves every request and notices every exit on one thread; so
 * the question goes to a child process of its own, whose answer comes
 * back through a pipe watched beside the requests, and the caller's
 * function gets it there (the child itself is reaped with the others,
 * serve.c). A time limit, when given, is the child's alarm: the kernel
 * ends it, and the caller hears "no answer", whatever the guest does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hintvm/hintvm.h"
#include "shim/shim.h"

struct guest_job {
	struct shim *s;
	shim_guest_answer_fn fn;
	void *opaque;
};

static unsigned int pending;

unsigned int shim_guest_asks_pending(void)
{
	return pending;
}

static void answered(void *opaque, int fd, short revents)
{
	struct guest_job *job = opaque;
	struct shim_guest_answer a;
	ssize_t n;

	(void)revents;
	do
		n = read(fd, &a, sizeof(a));
	while (n < 0 && errno == EINTR);
	ttrpc_server_unwatch(job->s->server, fd);
	close(fd);
	pending--;
	if (n == (ssize_t)sizeof(a))
		a.err[sizeof(a.err) - 1] = 0;
	job->fn(job->s, job->opaque, n == (ssize_t)sizeof(a) ? &a : NULL);
	free(job);
}

int shim_guest_ask(struct shim *s, const char *vsock, const char *cgroup,
		   unsigned int limit_s, shim_guest_answer_fn fn, void *opaque)
{
	struct guest_job *job = calloc(1, sizeof(*job));
	int p[2], r;
	pid_t pid;

	if (!job)
		return -ENOMEM;
	job->s = s;
	job->fn = fn;
	job->opaque = opaque;
	if (pipe2(p, O_CLOEXEC)) {
		r = -errno;
		free(job);
		return r;
	}
	pid = fork();
	if (pid == 0) {
		struct shim_guest_answer a = { 0 };
		sigset_t alrm;

		close(p[0]);
		if (limit_s) {
			/* Not the shim's mask or handler: the alarm kills. */
			signal(SIGALRM, SIG_DFL);
			sigemptyset(&alrm);
			sigaddset(&alrm, SIGALRM);
			sigprocmask(SIG_UNBLOCK, &alrm, NULL);
			alarm(limit_s);
		}
		a.r = hvm_guest_cgroup_stats(vsock, cgroup, &a.g);
		if (a.r < 0)
			snprintf(a.err, sizeof(a.err), "%s", hvm_last_error());
		_exit(write(p[1], &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 1);
	}
	r = pid < 0 ? -errno : 0;
	close(p[1]);
	if (!r)
		r = ttrpc_server_watch(s->server, p[0], POLLIN, answered, job);
	if (r) {
		/* A child already asking ends on its own: EPIPE at most. */
		close(p[0]);
		free(job);
		return r;
	}
	pending++;
	return 0;
}
