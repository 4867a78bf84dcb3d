// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Exec: another process in the task's VM (ctr task exec). Exec records it
 * (its process spec, the JSON containerd sends in an Any, goes to a file
 * beside the bundle); Start forks a helper whose stdio are the exec's
 * fifos and runs hintvm-runtime's exec in it in the foreground: through
 * the guest agent it starts the process, pumps its streams, forwards the
 * signals the helper gets and exits with the process's status (128+N for
 * signal N). So the helper's pid is the exec's pid, Kill signals it, and
 * its exit, reaped through SIGCHLD (serve.c), is the exec's TaskExit.
 *
 * With a terminal (ctr task exec -t) the helper's stdio are /dev/null and
 * the runtime's exec gets --tty --console-socket: it opens the pty, sends
 * the master to the shim, which copies the exec's stdin fifo to it and it
 * to the stdout fifo (console.c), and sets its size on ResizePty with the
 * exec id. At the exec's end the last output goes out before TaskExit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events_task.pb-c.h"
#include "hintvm/hintvm.h"
#include "pb_empty.pb-c.h"
#include "runtime/state.h"
#include "shim/shim.h"
#include "task_shim.pb-c.h"

#define NOT_FOUND GOOGLE__RPC__CODE__NOT_FOUND
#define PRECONDITION GOOGLE__RPC__CODE__FAILED_PRECONDITION

/* Process specs larger than this are no process spec. */
#define EXEC_SPEC_MAX (1u << 20)

static struct shim_exec *find_exec(struct shim *s, struct ttrpc_call *call,
				   const char *id, const char *exec_id)
{
	if (!shim_find_task(s, call, id))
		return NULL;
	for (int i = 0; i < SHIM_MAX_EXECS; i++)
		if (s->execs[i].used && !strcmp(s->execs[i].id, exec_id))
			return &s->execs[i];
	ttrpc_call_error(call, NOT_FOUND,
			 "exec \"%s\" of task \"%s\": not found", exec_id, id);
	return NULL;
}

static int copy_path(struct ttrpc_call *call, char *dst, size_t len,
		     const char *what, const char *src)
{
	if (strlen(src) >= len) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
				 "%s: longer than %zu bytes", what, len - 1);
		return -1;
	}
	strcpy(dst, src);
	return 0;
}

const char *shim_exec_container_id(const struct shim *s,
				   const struct shim_exec *e)
{
	return e->container[0] ? e->container : s->task.id;
}

void shim_exec_create(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__ExecProcessRequest *req =
		(const void *)call->request;
	struct shim *s = opaque;

	if (shim_find_task(s, call, req->id))
		(void)shim_exec_add(s, call, NULL, NULL);
}

struct shim_exec *shim_exec_add(struct shim *s, struct ttrpc_call *call,
				const char *container, const char *guest_root)
{
	const Containerd__Task__V2__ExecProcessRequest *req =
		(const void *)call->request;
	Containerd__Events__TaskExecAdded ev =
		CONTAINERD__EVENTS__TASK_EXEC_ADDED__INIT;
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	struct shim_task *t = &s->task;
	struct shim_exec *e = NULL;
	FILE *fp;

	if (!rt_valid_id(req->exec_id)) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			"exec id \"%s\": expected 1 to %d of [A-Za-z0-9_.+-], not starting with '.'",
			req->exec_id, RT_MAX_ID);
		return NULL;
	}
	if (!t->started || t->exited) {
		ttrpc_call_error(call, PRECONDITION,
				 "task %s is not running: no exec in it",
				 t->id);
		return NULL;
	}
	if (!req->spec || !req->spec->value.data || !req->spec->value.len ||
	    req->spec->value.len > EXEC_SPEC_MAX) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			"exec \"%s\": expected a process spec of 1 to %u bytes",
			req->exec_id, EXEC_SPEC_MAX);
		return NULL;
	}
	for (int i = 0; i < SHIM_MAX_EXECS; i++) {
		if (s->execs[i].used && !strcmp(s->execs[i].id, req->exec_id)) {
			ttrpc_call_error(
				call, GOOGLE__RPC__CODE__ALREADY_EXISTS,
				"exec \"%s\" exists already", req->exec_id);
			return NULL;
		}
		if (!s->execs[i].used && !e)
			e = &s->execs[i];
	}
	if (!e) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				 "task %s has %d execs already: delete some",
				 t->id, SHIM_MAX_EXECS);
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	shim_console_reset(&e->console);
	e->terminal = req->terminal;
	if (copy_path(call, e->stdin_path, sizeof(e->stdin_path), "stdin",
		      req->stdin) ||
	    copy_path(call, e->stdout_path, sizeof(e->stdout_path), "stdout",
		      req->stdout) ||
	    copy_path(call, e->stderr_path, sizeof(e->stderr_path), "stderr",
		      req->stderr))
		return NULL;
	snprintf(e->id, sizeof(e->id), "%s", req->exec_id);
	if (container)
		snprintf(e->container, sizeof(e->container), "%s", container);
	if (guest_root && snprintf(e->guest_root, sizeof(e->guest_root), "%s",
				   guest_root) >= (int)sizeof(e->guest_root)) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
				 "exec %s: guest root %s is too long", e->id,
				 guest_root);
		return NULL;
	}
	/* The runtime's exec reads the process spec from a file, as
	 * runc's does (--process). */
	snprintf(e->process_file, sizeof(e->process_file), "%s/exec-%s.json",
		 t->bundle, e->id);
	fp = fopen(e->process_file, "we");
	if (!fp ||
	    fwrite(req->spec->value.data, 1, req->spec->value.len, fp) !=
		    req->spec->value.len ||
	    fclose(fp)) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL, "%s: %s",
				 e->process_file, strerror(errno));
		unlink(e->process_file);
		return NULL;
	}
	e->used = true;
	ev.container_id = (char *)shim_exec_container_id(s, e);
	ev.exec_id = e->id;
	shim_events_publish(&s->events, "/tasks/exec-added", &ev.base);
	ttrpc_call_reply(call, &empty.base);
	return e;
}

void shim_exec_start(struct shim *s, struct ttrpc_call *call, const char *id,
		     const char *exec_id)
{
	Containerd__Task__V2__StartResponse resp =
		CONTAINERD__TASK__V2__START_RESPONSE__INIT;
	Containerd__Events__TaskExecStarted ev =
		CONTAINERD__EVENTS__TASK_EXEC_STARTED__INIT;
	struct shim_exec *e = find_exec(s, call, id, exec_id);
	const char *paths[3];
	char err[PATH_MAX + 128];
	int stdio[3] = { -1, -1, -1 };
	pid_t pid;

	if (!e)
		return;
	if (e->started) {
		ttrpc_call_error(call, PRECONDITION, "exec %s: already started",
				 e->id);
		return;
	}
	paths[0] = e->stdin_path;
	paths[1] = e->stdout_path;
	paths[2] = e->stderr_path;
	for (int i = 0; i < 3; i++) {
		/* A terminal has no stderr of its own. */
		if (e->terminal && i == 2)
			break;
		stdio[i] = shim_open_stdio(paths[i], i == 0, err, sizeof(err));
		if (stdio[i] < 0) {
			ttrpc_call_error(call, PRECONDITION, "exec %s: %s",
					 e->id, err);
			goto out;
		}
	}
	if (e->terminal) {
		char name[32];

		/* The shim copies the fifos; the helper's stdio are
		 * /dev/null, the pty's slave is the runtime's. */
		snprintf(name, sizeof(name), "exec-console-%d",
			 (int)(e - s->execs));
		if (shim_console_listen(&e->console, s->server, name, err,
					sizeof(err))) {
			ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL,
					 "exec %s: %s", e->id, err);
			goto out;
		}
		e->console.in = stdio[0];
		e->console.out = stdio[1];
		for (int i = 0; i < 3; i++)
			stdio[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (stdio[0] < 0 || stdio[1] < 0 || stdio[2] < 0 ||
		    shim_console_attach_later(&e->console)) {
			ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL,
					 "exec %s: cannot set up its terminal",
					 e->id);
			shim_console_close(&e->console);
			goto out;
		}
	}
	pid = fork();
	if (pid < 0) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL, "fork: %s",
				 strerror(errno));
		if (e->terminal)
			shim_console_close(&e->console);
		goto out;
	}
	if (pid == 0) {
		char *argv[18], mem[24];
		int argc = 0;
		sigset_t none;

		argv[argc++] = "exec";
		if (e->guest_root[0]) { /* a pod's container (pod.c) */
			argv[argc++] = "--guest-root";
			argv[argc++] = e->guest_root;
		}
		if (e->container[0]) { /* ... and its cgroup there */
			argv[argc++] = "--guest-cgroup";
			argv[argc++] = e->container;
		}
		if (e->guest_pidns || e->guest_pidns_join) {
			argv[argc++] = "--guest-pidns";
			argv[argc++] = e->guest_pidns ? "new" : "join";
		}
		if (e->memory_max) {
			snprintf(mem, sizeof(mem), "%llu", e->memory_max);
			argv[argc++] = "--guest-memory-max";
			argv[argc++] = mem;
		}
		argv[argc++] = "--process";
		argv[argc++] = e->process_file;
		if (e->terminal) {
			argv[argc++] = "--tty";
			argv[argc++] = "--console-socket";
			argv[argc++] = e->console.path;
		}
		argv[argc++] = s->task.id;
		argv[argc] = NULL;
		for (int i = 0; i < 3; i++)
			if (dup2(stdio[i], i) < 0)
				_exit(127);
		syscall(SYS_close_range, 3, ~0u, 0);
		/* Its own process group: signals for containerd's shim
		 * (SIGTERM at its shutdown) are not the exec's. */
		setpgid(0, 0);
		/* Not the shim's blocked set: the exec forwards signals. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		optind = 0;
		_exit(cmd_exec(argc, argv));
	}
	e->pid = pid;
	e->started = true;
	ev.container_id = (char *)shim_exec_container_id(s, e);
	ev.exec_id = e->id;
	ev.pid = (uint32_t)pid;
	shim_events_publish(&s->events, "/tasks/exec-started", &ev.base);
	resp.pid = (uint32_t)pid;
	ttrpc_call_reply(call, &resp.base);
out:
	for (int i = 0; i < 3; i++)
		if (stdio[i] >= 0)
			close(stdio[i]);
}

void shim_exec_close_io(struct shim *s, struct ttrpc_call *call, const char *id,
			const char *exec_id)
{
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;

	/* As for the task: the helper reads the stdin fifo to its end. */
	if (find_exec(s, call, id, exec_id))
		ttrpc_call_reply(call, &empty.base);
}

void shim_exec_state(struct shim *s, struct ttrpc_call *call, const char *id,
		     const char *exec_id)
{
	Containerd__Task__V2__StateResponse resp =
		CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_exec *e = find_exec(s, call, id, exec_id);

	if (!e)
		return;
	resp.id = (char *)shim_exec_container_id(s, e);
	resp.exec_id = e->id;
	resp.bundle = s->task.bundle;
	resp.pid = (uint32_t)e->pid;
	resp.status = e->exited	   ? CONTAINERD__V1__TYPES__STATUS__STOPPED
		      : e->started ? CONTAINERD__V1__TYPES__STATUS__RUNNING
				   : CONTAINERD__V1__TYPES__STATUS__CREATED;
	resp.stdin = e->stdin_path;
	resp.stdout = e->stdout_path;
	resp.stderr = e->stderr_path;
	if (e->exited) {
		resp.exit_status = e->exit_status;
		shim_timestamp(&at, &e->exited_at);
		resp.exited_at = &at;
	}
	ttrpc_call_reply(call, &resp.base);
}

void shim_exec_kill(struct shim *s, struct ttrpc_call *call, const char *id,
		    const char *exec_id, uint32_t signal)
{
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	struct shim_exec *e = find_exec(s, call, id, exec_id);

	if (!e)
		return;
	/* Reaped, its exit still to be told: its pid may be another's. */
	if (!e->started || e->reaped) {
		ttrpc_call_error(call, NOT_FOUND, "exec %s: process %s", e->id,
				 e->reaped ? "already finished"
					   : "not started");
		return;
	}
	/* The helper forwards it to the guest process (runtime exec). */
	if (kill(e->pid, (int)signal)) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL,
				 "kill %d: %s", (int)e->pid, strerror(errno));
		return;
	}
	ttrpc_call_reply(call, &empty.base);
}

void shim_exec_wait(struct shim *s, struct ttrpc_call *call, const char *id,
		    const char *exec_id)
{
	Containerd__Task__V2__WaitResponse resp =
		CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_exec *e = find_exec(s, call, id, exec_id);

	if (!e)
		return;
	if (e->exited) {
		resp.exit_status = e->exit_status;
		shim_timestamp(&at, &e->exited_at);
		resp.exited_at = &at;
		ttrpc_call_reply(call, &resp.base);
		return;
	}
	if (e->n_waiters == SHIM_MAX_WAITERS) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				 "exec %s: %d Waits are pending already", e->id,
				 SHIM_MAX_WAITERS);
		return;
	}
	e->waiters[e->n_waiters++] = ttrpc_call_defer(call);
}

void shim_exec_delete(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *exec_id)
{
	Containerd__Task__V2__DeleteResponse resp =
		CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_exec *e = find_exec(s, call, id, exec_id);

	if (!e)
		return;
	if (e->started && !e->exited) {
		ttrpc_call_error(call, PRECONDITION,
				 "exec %s is running: kill it before Delete",
				 e->id);
		return;
	}
	unlink(e->process_file);
	if (e->terminal)
		shim_console_close(&e->console);
	resp.pid = (uint32_t)e->pid;
	resp.exit_status = e->exit_status;
	shim_timestamp(&at, &e->exited_at);
	resp.exited_at = &at;
	ttrpc_call_reply(call, &resp.base);
	memset(e, 0, sizeof(*e));
}

/* E's end told: TaskOOM first when OOM, as runc's shim (so that the
 * CRI's status says OOMKilled by the time the container is EXITED), then
 * TaskExit, then the Waits. */
static void exec_exit_publish(struct shim *s, struct shim_exec *e, bool oom)
{
	Containerd__Task__V2__WaitResponse resp =
		CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
	Containerd__Events__TaskExit ev = CONTAINERD__EVENTS__TASK_EXIT__INIT;
	Containerd__Events__TaskOOM oom_ev = CONTAINERD__EVENTS__TASK_OOM__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;

	e->exited = true;
	shim_timestamp(&at, &e->exited_at);
	if (oom) {
		oom_ev.container_id = (char *)shim_exec_container_id(s, e);
		shim_events_publish(&s->events, "/tasks/oom", &oom_ev.base);
	}
	ev.container_id = (char *)shim_exec_container_id(s, e);
	ev.id = e->id;
	ev.pid = (uint32_t)e->pid;
	ev.exit_status = e->exit_status;
	ev.exited_at = &at;
	shim_events_publish(&s->events, "/tasks/exit", &ev.base);
	resp.exit_status = e->exit_status;
	resp.exited_at = &at;
	for (unsigned int i = 0; i < e->n_waiters; i++)
		ttrpc_server_reply(s->server, &e->waiters[i], &resp.base);
	e->n_waiters = 0;
}

/* Which exec an OOM question is for: its slot and id (a slot may be
 * another exec's by the time the answer comes, in principle). */
struct oom_job {
	int slot;
	char id[RT_MAX_ID + 1];
};

static void oom_answered(struct shim *s, void *opaque,
			 const struct shim_guest_answer *a)
{
	struct oom_job *job = opaque;
	struct shim_exec *e = &s->execs[job->slot];
	bool oom = a && a->r == 0 && a->g.oom_kills != HVM_GUEST_STAT_UNKNOWN &&
		   a->g.oom_kills > 0;

	if (!a || a->r < 0)
		rt_debug("container %s: no OOM count: %s", job->id,
			 a ? a->err : "the guest did not answer in time");
	if (e->used && e->reaped && !e->exited && !strcmp(e->id, job->id))
		exec_exit_publish(s, e, oom);
	free(job);
}

/*
 * A pod container's own process ended: did the guest's OOM killer kill
 * any of its processes? Its cgroup (one per container id) counts the
 * kills in memory.events (the agent's STATS for that cgroup). runc's shim
 * reports each OOM as it happens; asked here once, at the exit, it is the
 * same for the CRI, whose status says OOMKilled after any. Asked in a
 * child (guest_ask.c), OOM_ASK_LIMIT_S at most: TaskExit waits for the
 * answer, the shim's other requests do not. 0 once asked; a guest that
 * cannot be asked (the VM gone) means no OOM.
 */
#define OOM_ASK_LIMIT_S 5

static int oom_ask(struct shim *s, struct shim_exec *e)
{
	struct oom_job *job;
	struct rt_container c;
	char vsock[PATH_MAX + 32];
	int r;

	if (!e->container[0] || strcmp(e->id, e->container) || s->task.exited ||
	    rt_container_load(&c, s->task.id))
		return -ENOENT;
	rt_container_path(&c, RT_VSOCK_FILE, vsock, sizeof(vsock));
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->slot = (int)(e - s->execs);
	snprintf(job->id, sizeof(job->id), "%s", e->id);
	r = shim_guest_ask(s, vsock, e->container, OOM_ASK_LIMIT_S,
			   oom_answered, job);
	if (r) {
		rt_warn("container %s: cannot ask the guest for OOM kills: %s",
			e->container, strerror(-r));
		free(job);
	}
	return r;
}

bool shim_exec_reaped(struct shim *s, pid_t pid)
{
	struct shim_exec *e = NULL;
	int status;

	for (int i = 0; i < SHIM_MAX_EXECS && !e; i++)
		if (s->execs[i].used && s->execs[i].started &&
		    !s->execs[i].reaped && s->execs[i].pid == pid)
			e = &s->execs[i];
	if (!e || waitpid(pid, &status, WNOHANG) != pid)
		return false;
	e->reaped = true;
	e->exit_status = WIFEXITED(status) ? (uint32_t)WEXITSTATUS(status)
			 : WIFSIGNALED(status)
				 ? 128u + (uint32_t)WTERMSIG(status)
				 : 255u;
	clock_gettime(CLOCK_REALTIME, &e->exited_at);
	/* A terminal's last output reaches ctr before the exit does. */
	if (e->terminal)
		shim_console_drain(&e->console);
	if (oom_ask(s, e))
		exec_exit_publish(s, e, false);
	return true;
}

void shim_exec_resize(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *exec_id, uint32_t width, uint32_t height)
{
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	struct shim_exec *e = find_exec(s, call, id, exec_id);

	if (!e)
		return;
	if (width > 0xffff || height > 0xffff) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			"terminal size %ux%u: expected at most 65535x65535",
			width, height);
		return;
	}
	if (!e->terminal) {
		ttrpc_call_error(call, PRECONDITION,
				 "exec %s: it has no terminal", e->id);
		return;
	}
	if (!e->started || e->reaped) {
		ttrpc_call_error(call, PRECONDITION, "exec %s: %s", e->id,
				 e->reaped ? "already finished"
					   : "not started");
		return;
	}
	shim_console_resize(&e->console, width, height);
	ttrpc_call_reply(call, &empty.base);
}
