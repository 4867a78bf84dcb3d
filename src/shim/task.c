// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The Task service (containerd.task.v2.Task) for one task in one VM.
 *
 * The VM is hintvm-runtime's: Create runs the runtime's own `create`
 * (cmd_create, the runtime library) in a short-lived helper process whose
 * stdio are containerd's fifos and which holds no other fd of the shim.
 * The runtime forks the VMM process from it and returns once the VM is
 * built; the helper exits and the VMM process, orphaned, is reparented to
 * the shim (a child subreaper, serve.c). From there the shim watches it
 * through a pidfd in the server's poll round and reaps it itself: its exit
 * status is the task's, 128+N when it was killed by signal N (so a VMM
 * killed with SIGKILL is "exit 137"). Start, Kill, Pause, Resume and
 * Delete are the runtime's commands on the same state directory.
 *
 * Every request is checked here before anything is done with it: a task
 * id that is not this shim's, an exec id (no exec yet), a signal outside
 * 1..64, a bundle that is no absolute path, a second Create: each gets an
 * error status naming the value and what was expected.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events_task.pb-c.h"
#include "hintvm/hintvm.h"
#include "pb_empty.pb-c.h"
#include "runtime/state.h"
#include "shim/shim.h"
#include "task_shim.pb-c.h"

#define INVALID GOOGLE__RPC__CODE__INVALID_ARGUMENT
#define NOT_FOUND GOOGLE__RPC__CODE__NOT_FOUND
#define PRECONDITION GOOGLE__RPC__CODE__FAILED_PRECONDITION
#define UNIMPLEMENTED GOOGLE__RPC__CODE__UNIMPLEMENTED
#define INTERNAL GOOGLE__RPC__CODE__INTERNAL
/* How long a stdio fifo's writer waits for containerd's reader. */
#define SHIM_FIFO_WAIT_MS 2000
#define SHIM_FIFO_STEP_MS 10

static void reply_empty(struct ttrpc_call *call)
{
	Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;

	ttrpc_call_reply(call, &e.base);
}

void shim_timestamp(Google__Protobuf__Timestamp *ts, const struct timespec *t)
{
	ts->seconds = t->tv_sec;
	ts->nanos = (int32_t)t->tv_nsec;
}

/* The task ID names (and EXEC_ID, when given, an exec of it): NULL after
 * answering the call with the reason. */
static struct shim_task *find_task(struct shim *s, struct ttrpc_call *call,
				   const char *id, const char *exec_id)
{
	struct shim_task *t = &s->task;

	if (!t->exists || strcmp(id, t->id)) {
		ttrpc_call_error(
			call, NOT_FOUND,
			"task \"%s\": not found (this shim has %s%s%s)", id,
			t->exists ? "task \"" : "no task",
			t->exists ? t->id : "", t->exists ? "\"" : "");
		return NULL;
	}
	if (exec_id && *exec_id) {
		ttrpc_call_error(call, NOT_FOUND,
				 "exec \"%s\" of task \"%s\": not found",
				 exec_id, id);
		return NULL;
	}
	return t;
}

struct shim_task *shim_find_task(struct shim *s, struct ttrpc_call *call,
				 const char *id)
{
	return find_task(s, call, id, NULL);
}

void shim_task_reset(struct shim_task *t)
{
	memset(t, 0, sizeof(*t));
	t->pidfd = -1;
	shim_console_reset(&t->console);
}

/* ---- the VMM process's end ------------------------------------------- */

static void publish_exit(struct shim *s)
{
	Containerd__Events__TaskExit ev = CONTAINERD__EVENTS__TASK_EXIT__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_task *t = &s->task;

	shim_timestamp(&at, &t->exited_at);
	ev.container_id = t->id;
	ev.id = t->id; /* the init process is named after its task */
	ev.pid = (uint32_t)t->pid;
	ev.exit_status = t->exit_status;
	ev.exited_at = &at;
	shim_events_publish(&s->events, "/tasks/exit", &ev.base);
}

/*
 * The guest's OOM killer ended processes of the task: the count its VMM
 * process left in the state directory before it exited (RT_OOM_FILE),
 * read here after the reap, so it is there already.
 */
static bool task_oom_killed(const struct shim_task *t)
{
	unsigned long long n = 0;
	struct rt_container c;

	if (rt_container_init(&c, t->id, false) ||
	    rt_container_oom_kills(&c, &n))
		return false;
	return n > 0;
}

/* Records STATUS (waitpid's) as the task's end, tells containerd, then
 * answers every Wait: the exit event comes first, as containerd expects. */
static void task_exited(struct shim *s, int status)
{
	Containerd__Task__V2__WaitResponse resp =
		CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_task *t = &s->task;

	t->exited = true;
	t->exit_status = WIFEXITED(status) ? (uint32_t)WEXITSTATUS(status)
			 : WIFSIGNALED(status)
				 ? 128u + (uint32_t)WTERMSIG(status)
				 : 255u;
	clock_gettime(CLOCK_REALTIME, &t->exited_at);
	if (t->pidfd >= 0) {
		ttrpc_server_unwatch(s->server, t->pidfd);
		close(t->pidfd);
		t->pidfd = -1;
	}
	rt_debug("task %s: VMM process %d ended, status %u", t->id, (int)t->pid,
		 t->exit_status);
	/* A terminal's last output reaches ctr before the exit does. */
	shim_console_drain(&t->console);
	/* As runc's shim: the OOM before the exit it caused, so that
	 * containerd (and the CRI) know why by the time the task stops. */
	if (task_oom_killed(t)) {
		Containerd__Events__TaskOOM oom =
			CONTAINERD__EVENTS__TASK_OOM__INIT;

		oom.container_id = t->id;
		shim_events_publish(&s->events, "/tasks/oom", &oom.base);
	}
	publish_exit(s);
	resp.exit_status = t->exit_status;
	shim_timestamp(&at, &t->exited_at);
	resp.exited_at = &at;
	for (unsigned int i = 0; i < t->n_waiters; i++)
		ttrpc_server_reply(s->server, &t->waiters[i], &resp.base);
	t->n_waiters = 0;
}

void shim_task_reaped(struct shim *s)
{
	int status;
	pid_t r;

	if (!s->task.exists || s->task.exited)
		return;
	r = waitpid(s->task.pid, &status, WNOHANG);
	if (r == s->task.pid) {
		task_exited(s, status);
	} else if (r < 0) {
		/* Not our child after all (reaped elsewhere): no status. */
		rt_error("task %s: waitpid %d: %s", s->task.id,
			 (int)s->task.pid, strerror(errno));
		task_exited(s, 255 << 8);
	}
}

static void on_vmm_exit(void *opaque, int fd, short revents)
{
	(void)fd;
	(void)revents;
	shim_task_reaped(opaque);
}

/* ---- Create -------------------------------------------------------------- */

int shim_open_stdio(const char *path, bool input, char *err, size_t errlen)
{
	int fd;

	if (!path || !*path)
		return open("/dev/null", O_RDWR | O_CLOEXEC);
	if (!strncmp(path, "file://", 7)) {
		fd = open(path + 7,
			  (input ? O_RDONLY : O_WRONLY | O_APPEND | O_CREAT) |
				  O_CLOEXEC,
			  0640);
	} else if (strstr(path, "://")) {
		snprintf(
			err, errlen,
			"stdio %s: only fifos and file:// are supported (binary:// is not implemented)",
			path);
		return -ENOTSUP;
	} else {
		/*
		 * containerd's client opens its reading ends in goroutines
		 * (containerd/fifo), so they may come a little after the
		 * request: a writer waits for one, in steps, for a bounded
		 * time, never in a blocking open(2) a reader that never
		 * comes would leave the shim stuck in.
		 */
		for (int waited = 0;; waited += SHIM_FIFO_STEP_MS) {
			fd = open(path, (input ? O_RDONLY : O_WRONLY) |
						O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0 || errno != ENXIO ||
			    waited >= SHIM_FIFO_WAIT_MS)
				break;
			usleep(SHIM_FIFO_STEP_MS * 1000);
		}
		if (fd >= 0)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	}
	if (fd < 0) {
		fd = -errno;
		snprintf(err, errlen, "stdio %s: %s%s", path, strerror(errno),
			 errno == ENXIO ? " (no reader within 2 s)" : "");
	}
	return fd;
}

/* The last error line the runtime wrote to LOG, for Create's answer. */
static void last_error(const char *log, char *msg, size_t len)
{
	char line[1024];
	FILE *fp = fopen(log, "re");

	snprintf(msg, len, "see %s", log);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, "level=error")) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(msg, len, "%s", line);
		}
	fclose(fp);
}

/*
 * The runtime's create in a helper process: stdio are the task's, no
 * other fd of the shim leaks into the VMM process it forks. Returns the
 * helper's exit status.
 */
static int run_create(const struct shim_task *t, const int stdio[3],
		      const char *log)
{
	char *argv[] = { "create",	"--bundle", (char *)t->bundle,
			 (char *)t->id, NULL,	    NULL,
			 NULL };
	int argc = 4, status;
	sigset_t none;
	pid_t pid;

	if (t->terminal) {
		argv[3] = "--console-socket";
		argv[4] = (char *)t->console.path;
		argv[5] = (char *)t->id;
		argc = 6;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			if (dup2(stdio[i], i) < 0)
				_exit(127);
		syscall(SYS_close_range, 3, ~0u, 0);
		/* The VMM process sets up its own signals, from none
		 * blocked, as under hintvm-runtime; not the shim's set. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		rt.log_path = log;
		rt.log_json = false;
		optind = 0;
		_exit(cmd_create(argc, argv));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int copy_path(struct ttrpc_call *call, char *dst, size_t len,
		     const char *what, const char *src)
{
	if (strlen(src) >= len) {
		ttrpc_call_error(call, INVALID, "%s: longer than %zu bytes",
				 what, len - 1);
		return -1;
	}
	strcpy(dst, src);
	return 0;
}

/* The runtime configuration a Create's options named (options.c). */
static char config_path[PATH_MAX];
static const char *default_config;

static void h_create(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__CreateTaskRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__CreateTaskResponse resp =
		CONTAINERD__TASK__V2__CREATE_TASK_RESPONSE__INIT;
	Containerd__Events__TaskCreate ev =
		CONTAINERD__EVENTS__TASK_CREATE__INIT;
	Containerd__Events__TaskIO io = CONTAINERD__EVENTS__TASK_IO__INIT;
	struct shim *s = opaque;
	struct shim_task *t = &s->task;
	struct rt_container c;
	int stdio[3] = { -1, -1, -1 }, st;
	char rootfs[PATH_MAX + 8], log[PATH_MAX + 32], err[PATH_MAX + 128];

	if (t->exists) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__ALREADY_EXISTS,
			"task \"%s\": this shim runs task \"%s\" already",
			req->id, t->id);
		return;
	}
	if (!rt_valid_id(req->id)) {
		ttrpc_call_error(
			call, INVALID,
			"task id \"%s\": expected 1 to %d of [A-Za-z0-9_.+-], not starting with '.'",
			req->id, RT_MAX_ID);
		return;
	}
	if (req->bundle[0] != '/') {
		ttrpc_call_error(call, INVALID,
				 "bundle \"%s\": expected an absolute path",
				 req->bundle);
		return;
	}
	if (req->checkpoint[0] || req->parent_checkpoint[0]) {
		ttrpc_call_error(call, UNIMPLEMENTED,
				 "restore from a checkpoint: not implemented");
		return;
	}
	/* The configuration before any Create's options changed it. */
	if (!default_config)
		default_config = rt.config_path;
	if (shim_parse_options(req->options, config_path, sizeof(config_path),
			       err, sizeof(err))) {
		ttrpc_call_error(call, INVALID, "task %s: %s", req->id, err);
		return;
	}
	rt.config_path = config_path[0] ? config_path : default_config;
	shim_task_reset(t);
	t->terminal = req->terminal;
	if (copy_path(call, t->bundle, sizeof(t->bundle), "bundle",
		      req->bundle) ||
	    copy_path(call, t->stdin_path, sizeof(t->stdin_path), "stdin",
		      req->stdin) ||
	    copy_path(call, t->stdout_path, sizeof(t->stdout_path), "stdout",
		      req->stdout) ||
	    copy_path(call, t->stderr_path, sizeof(t->stderr_path), "stderr",
		      req->stderr))
		return;
	snprintf(t->id, sizeof(t->id), "%s", req->id);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", t->bundle);
	snprintf(log, sizeof(log), "%s/hintvm-runtime.log", t->bundle);

	if (shim_rootfs_mount(req->rootfs, req->n_rootfs, rootfs, err,
			      sizeof(err))) {
		ttrpc_call_error(call, INTERNAL, "%s", err);
		return;
	}
	t->rootfs_mounted = req->n_rootfs > 0;
	stdio[0] = shim_open_stdio(t->stdin_path, true, err, sizeof(err));
	if (stdio[0] >= 0)
		stdio[1] = shim_open_stdio(t->stdout_path, false, err,
					   sizeof(err));
	if (stdio[1] >= 0)
		stdio[2] = shim_open_stdio(t->stderr_path, false, err,
					   sizeof(err));
	if (stdio[2] < 0) {
		ttrpc_call_error(call, PRECONDITION, "%s", err);
		goto fail;
	}
	if (t->terminal) {
		/* The pty's slave is the VMM's stdio; the shim keeps the
		 * fifos to copy to and from the master. */
		t->console.in = stdio[0];
		t->console.out = stdio[1];
		for (int i = 0; i < 3; i++) {
			if (i == 2)
				close(stdio[i]);
			stdio[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
		}
		if (shim_console_listen(&t->console, s->server, "console", err,
					sizeof(err))) {
			ttrpc_call_error(call, INTERNAL, "%s", err);
			goto fail;
		}
	}
	st = run_create(t, stdio, log);
	if (st) {
		last_error(log, err, sizeof(err));
		ttrpc_call_error(
			call, INTERNAL,
			"hintvm-runtime create of %s failed (status %d): %s",
			t->id, st, err);
		goto fail;
	}
	if (rt_container_load(&c, t->id)) {
		ttrpc_call_error(call, INTERNAL,
				 "task %s: the runtime recorded no state in %s",
				 t->id, rt.root);
		goto fail;
	}
	t->pid = c.pid;
	if (t->terminal && shim_console_attach(&t->console, err, sizeof(err))) {
		ttrpc_call_error(call, INTERNAL, "task %s: %s", t->id, err);
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		goto fail_state;
	}
	t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (t->pidfd < 0 ||
	    ttrpc_server_watch(s->server, t->pidfd, POLLIN, on_vmm_exit, s)) {
		ttrpc_call_error(call, INTERNAL,
				 "task %s: cannot watch VMM process %d: %s",
				 t->id, (int)t->pid, strerror(errno));
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		goto fail_state;
	}
	for (int i = 0; i < 3; i++)
		close(stdio[i]);
	t->exists = true;

	ev.container_id = t->id;
	ev.bundle = t->bundle;
	ev.n_rootfs = req->n_rootfs;
	ev.rootfs = req->rootfs;
	io.stdin = t->stdin_path;
	io.stdout = t->stdout_path;
	io.stderr = t->stderr_path;
	ev.io = &io;
	ev.pid = (uint32_t)t->pid;
	shim_events_publish(&s->events, "/tasks/create", &ev.base);
	resp.pid = (uint32_t)t->pid;
	ttrpc_call_reply(call, &resp.base);
	return;

fail_state : {
	char *del[] = { "delete", "--force", t->id, NULL };

	optind = 0;
	cmd_delete(3, del);
}
fail:
	for (int i = 0; i < 3; i++)
		if (stdio[i] >= 0)
			close(stdio[i]);
	if (t->pidfd >= 0)
		close(t->pidfd);
	shim_console_close(&t->console);
	if (t->rootfs_mounted)
		shim_rootfs_unmount(rootfs);
	shim_task_reset(t);
}

/* ---- the rest of the lifecycle ---------------------------------------- */

static int runtime_cmd(const char *cmd, const char *id)
{
	char *argv[] = { (char *)cmd, (char *)id, NULL };

	optind = 0;
	if (!strcmp(cmd, "start"))
		return cmd_start(2, argv);
	if (!strcmp(cmd, "pause"))
		return cmd_pause(2, argv);
	return cmd_resume(2, argv);
}

static void h_start(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__StartRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__StartResponse resp =
		CONTAINERD__TASK__V2__START_RESPONSE__INIT;
	Containerd__Events__TaskStart ev = CONTAINERD__EVENTS__TASK_START__INIT;
	struct shim *s = opaque;
	struct shim_task *t;

	if (req->exec_id[0]) {
		shim_exec_start(s, call, req->id, req->exec_id);
		return;
	}
	t = find_task(s, call, req->id, req->exec_id);
	if (!t)
		return;
	if (t->started || t->exited) {
		ttrpc_call_error(
			call, PRECONDITION,
			"task %s: already %s: Start is once, after Create",
			t->id, t->exited ? "ended" : "started");
		return;
	}
	if (runtime_cmd("start", t->id)) {
		ttrpc_call_error(call, INTERNAL,
				 "task %s: the runtime's start failed", t->id);
		return;
	}
	t->started = true;
	ev.container_id = t->id;
	ev.pid = (uint32_t)t->pid;
	shim_events_publish(&s->events, "/tasks/start", &ev.base);
	resp.pid = (uint32_t)t->pid;
	ttrpc_call_reply(call, &resp.base);
}

static Containerd__V1__Types__Status task_status(const struct shim_task *t)
{
	struct rt_container c;
	char path[PATH_MAX + 16];

	if (t->exited)
		return CONTAINERD__V1__TYPES__STATUS__STOPPED;
	if (!t->started)
		return CONTAINERD__V1__TYPES__STATUS__CREATED;
	/* `pause` leaves its marker in the runtime's state directory. */
	if (!rt_container_init(&c, t->id, false)) {
		rt_container_path(&c, "paused", path, sizeof(path));
		if (!access(path, F_OK))
			return CONTAINERD__V1__TYPES__STATUS__PAUSED;
	}
	return CONTAINERD__V1__TYPES__STATUS__RUNNING;
}

static void h_state(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__StateRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__StateResponse resp =
		CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_task *t;

	if (req->exec_id[0]) {
		shim_exec_state(opaque, call, req->id, req->exec_id);
		return;
	}
	t = find_task(opaque, call, req->id, req->exec_id);
	if (!t)
		return;
	resp.id = t->id;
	resp.bundle = t->bundle;
	resp.pid = (uint32_t)t->pid;
	resp.status = task_status(t);
	resp.stdin = t->stdin_path;
	resp.stdout = t->stdout_path;
	resp.stderr = t->stderr_path;
	resp.terminal = t->terminal;
	if (t->exited) {
		resp.exit_status = t->exit_status;
		shim_timestamp(&at, &t->exited_at);
		resp.exited_at = &at;
	}
	ttrpc_call_reply(call, &resp.base);
}

static void h_kill(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__KillRequest *req =
		(const void *)call->request;
	struct shim_task *t;

	t = find_task(opaque, call, req->id, NULL);
	if (!t)
		return;
	if (req->signal < 1 || req->signal >= (uint32_t)NSIG) {
		ttrpc_call_error(call, INVALID, "signal %u: expected 1 to %d",
				 req->signal, NSIG - 1);
		return;
	}
	if (req->exec_id[0]) {
		shim_exec_kill(opaque, call, req->id, req->exec_id,
			       req->signal);
		return;
	}
	if (t->exited) {
		/* containerd's own answer for a process that is gone. */
		ttrpc_call_error(call, NOT_FOUND,
				 "task %s: process already finished", t->id);
		return;
	}
	/*
	 * The VMM process hands the signal to the task's process in the
	 * guest; SIGKILL ends the VM (create.c). `all` is the same: every
	 * process of the task is inside that one VM.
	 */
	if (kill(t->pid, (int)req->signal)) {
		ttrpc_call_error(call, INTERNAL, "kill %d: %s", (int)t->pid,
				 strerror(errno));
		return;
	}
	reply_empty(call);
}

static void h_wait(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__WaitRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__WaitResponse resp =
		CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim_task *t;

	if (req->exec_id[0]) {
		shim_exec_wait(opaque, call, req->id, req->exec_id);
		return;
	}
	t = find_task(opaque, call, req->id, req->exec_id);
	if (!t)
		return;
	if (t->exited) {
		resp.exit_status = t->exit_status;
		shim_timestamp(&at, &t->exited_at);
		resp.exited_at = &at;
		ttrpc_call_reply(call, &resp.base);
		return;
	}
	if (t->n_waiters == SHIM_MAX_WAITERS) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				 "task %s: %d Waits are pending already", t->id,
				 SHIM_MAX_WAITERS);
		return;
	}
	t->waiters[t->n_waiters++] = ttrpc_call_defer(call);
}

static void h_delete(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__DeleteRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__DeleteResponse resp =
		CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
	Containerd__Events__TaskDelete ev =
		CONTAINERD__EVENTS__TASK_DELETE__INIT;
	Google__Protobuf__Timestamp at = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	struct shim *s = opaque;
	struct shim_task *t;
	char *del[] = { "delete", "--force", NULL, NULL };
	char rootfs[PATH_MAX + 8];
	int status;

	if (req->exec_id[0]) {
		shim_exec_delete(s, call, req->id, req->exec_id);
		return;
	}
	t = find_task(s, call, req->id, req->exec_id);
	if (!t)
		return;
	if (t->started && !t->exited) {
		ttrpc_call_error(call, PRECONDITION,
				 "task %s is running: kill it before Delete",
				 t->id);
		return;
	}
	if (!t->exited) {
		/* Created, never started: its VM goes, as runc's does. */
		kill(t->pid, SIGKILL);
		while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
			;
		task_exited(s, status);
	}
	del[2] = t->id;
	optind = 0;
	if (cmd_delete(3, del))
		rt_warn("task %s: the runtime's delete failed", t->id);
	if (t->rootfs_mounted) {
		snprintf(rootfs, sizeof(rootfs), "%s/rootfs", t->bundle);
		shim_rootfs_unmount(rootfs);
	}
	shim_timestamp(&at, &t->exited_at);
	ev.container_id = t->id;
	ev.id = t->id;
	ev.pid = (uint32_t)t->pid;
	ev.exit_status = t->exit_status;
	ev.exited_at = &at;
	shim_events_publish(&s->events, "/tasks/delete", &ev.base);
	resp.pid = (uint32_t)t->pid;
	resp.exit_status = t->exit_status;
	resp.exited_at = &at;
	ttrpc_call_reply(call, &resp.base);
	t->exists = false;
}

static void h_pids(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__PidsRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__PidsResponse resp =
		CONTAINERD__TASK__V2__PIDS_RESPONSE__INIT;
	Containerd__V1__Types__ProcessInfo info =
		CONTAINERD__V1__TYPES__PROCESS_INFO__INIT;
	Containerd__V1__Types__ProcessInfo *list[1] = { &info };
	struct shim_task *t = find_task(opaque, call, req->id, NULL);

	if (!t)
		return;
	/* The host's view: the VMM process is the task's one process. */
	if (!t->exited) {
		info.pid = (uint32_t)t->pid;
		resp.n_processes = 1;
		resp.processes = list;
	}
	ttrpc_call_reply(call, &resp.base);
}

static void pause_or_resume(struct shim *s, struct ttrpc_call *call,
			    const char *id, bool pause)
{
	Containerd__Events__TaskPaused paused =
		CONTAINERD__EVENTS__TASK_PAUSED__INIT;
	Containerd__Events__TaskResumed resumed =
		CONTAINERD__EVENTS__TASK_RESUMED__INIT;
	struct shim_task *t = find_task(s, call, id, NULL);

	if (!t)
		return;
	if (!t->started || t->exited) {
		ttrpc_call_error(call, PRECONDITION, "task %s is not running",
				 t->id);
		return;
	}
	if (runtime_cmd(pause ? "pause" : "resume", t->id)) {
		ttrpc_call_error(
			call, INTERNAL,
			"task %s: %s through the VM's control socket failed",
			t->id, pause ? "pause" : "resume");
		return;
	}
	paused.container_id = resumed.container_id = t->id;
	shim_events_publish(&s->events,
			    pause ? "/tasks/paused" : "/tasks/resumed",
			    pause ? &paused.base : &resumed.base);
	reply_empty(call);
}

static void h_pause(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__PauseRequest *req =
		(const void *)call->request;

	pause_or_resume(opaque, call, req->id, true);
}

static void h_resume(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__ResumeRequest *req =
		(const void *)call->request;

	pause_or_resume(opaque, call, req->id, false);
}

static void h_resize_pty(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__ResizePtyRequest *req =
		(const void *)call->request;
	struct shim_task *t;
	int ret;

	if (req->exec_id[0]) {
		shim_exec_resize(opaque, call, req->id, req->exec_id,
				 req->width, req->height);
		return;
	}
	t = find_task(opaque, call, req->id, NULL);
	if (!t)
		return;
	if (req->width > 0xffff || req->height > 0xffff) {
		ttrpc_call_error(
			call, INVALID,
			"terminal size %ux%u: expected at most 65535x65535",
			req->width, req->height);
		return;
	}
	ret = shim_console_resize(&t->console, req->width, req->height);
	if (ret) {
		ttrpc_call_error(call, PRECONDITION, "task %s: %s", t->id,
				 ret == -ENOTTY ? "it has no terminal"
						: strerror(-ret));
		return;
	}
	reply_empty(call);
}

/*
 * Stats: the guest's own numbers for the task, through its agent
 * (hvm_guest_stats), as containerd's cgroups v1 Metrics (stats.c).
 */
static void h_stats(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__StatsRequest *req =
		(const void *)call->request;
	struct shim_task *t = find_task(opaque, call, req->id, NULL);

	if (t)
		shim_stats_reply(opaque, call, t->id, NULL);
}

/*
 * Stats asks the guest's agent in a child process (guest_ask.c): a
 * silent guest holds its own Stats, never the shim's other requests; at
 * most STATS_MAX_PENDING questions wait at once.
 */
#define STATS_MAX_PENDING 8

struct stats_job {
	struct ttrpc_token token;
	char id[RT_MAX_ID + 1];
};

static void stats_answered(struct shim *s, void *opaque,
			   const struct shim_guest_answer *a)
{
	struct stats_job *job = opaque;
	char what[RT_MAX_ID + 8];

	if (!a) {
		ttrpc_server_error(
			s->server, &job->token, GOOGLE__RPC__CODE__INTERNAL,
			"task %s: the stats helper ended without an answer",
			job->id);
	} else if (a->r < 0) {
		ttrpc_server_error(
			s->server, &job->token,
			a->r == -ENOENT ? PRECONDITION
					: GOOGLE__RPC__CODE__UNAVAILABLE,
			"task %s: the guest's stats: %s", job->id, a->err);
	} else {
		snprintf(what, sizeof(what), "task %s", job->id);
		shim_stats_send(s->server, &job->token, what, &a->g);
	}
	free(job);
}

/* Starts the question for VSOCK's agent (CGROUP's numbers, or the
 * task's); the answer goes to CALL later. */
static void stats_ask(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *vsock, const char *cgroup)
{
	struct stats_job *job;
	int r;

	if (shim_guest_asks_pending() >= STATS_MAX_PENDING) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__UNAVAILABLE,
			"task %s: %d questions are waiting for guests already",
			id, STATS_MAX_PENDING);
		return;
	}
	job = calloc(1, sizeof(*job));
	r = job ? shim_guest_ask(s, vsock, cgroup, 0, stats_answered, job)
		: -ENOMEM;
	if (r) {
		free(job);
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL,
				 "task %s: cannot ask the guest: %s", id,
				 r == -ENOSPC ? "no room to watch"
					      : strerror(-r));
		return;
	}
	snprintf(job->id, sizeof(job->id), "%s", id);
	job->token = ttrpc_call_defer(call);
}

void shim_stats_reply(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *cgroup)
{
	struct shim_task *t = &s->task;
	struct rt_container c;
	char vsock[PATH_MAX + 32], paused[PATH_MAX + 16];

	if (!t->started || t->exited) {
		ttrpc_call_error(call, PRECONDITION,
				 "task %s is not running: no stats", id);
		return;
	}
	if (rt_container_load(&c, t->id)) {
		ttrpc_call_error(call, INTERNAL,
				 "task %s: the runtime's state is gone", id);
		return;
	}
	/* A paused VM's agent cannot answer: say so instead of waiting. */
	rt_container_path(&c, "paused", paused, sizeof(paused));
	if (!access(paused, F_OK)) {
		ttrpc_call_error(call, PRECONDITION,
				 "task %s is paused: no stats until it resumes",
				 id);
		return;
	}
	rt_container_path(&c, RT_VSOCK_FILE, vsock, sizeof(vsock));
	stats_ask(s, call, id, vsock, cgroup);
}

static void h_close_io(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__CloseIORequest *req =
		(const void *)call->request;

	/*
	 * The VMM process reads the stdin fifo itself: once containerd
	 * closes its end, the task's stdin ends; nothing to do here.
	 */
	if (req->exec_id[0])
		shim_exec_close_io(opaque, call, req->id, req->exec_id);
	else if (find_task(opaque, call, req->id, NULL))
		reply_empty(call);
}

static void h_connect(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__ConnectRequest *req =
		(const void *)call->request;
	Containerd__Task__V2__ConnectResponse resp =
		CONTAINERD__TASK__V2__CONNECT_RESPONSE__INIT;
	struct shim *s = opaque;

	if (s->task.exists && strcmp(req->id, s->task.id)) {
		find_task(s, call, req->id, NULL);
		return;
	}
	resp.shim_pid = (uint32_t)getpid();
	resp.task_pid = s->task.exists ? (uint32_t)s->task.pid : 0;
	resp.version = (char *)hvm_version();
	ttrpc_call_reply(call, &resp.base);
}

static void h_shutdown(void *opaque, struct ttrpc_call *call)
{
	struct shim *s = opaque;

	/* A shim with a task keeps serving it, as containerd's runc shim. */
	if (!s->task.exists)
		s->shutdown = true;
	reply_empty(call);
}

/* In the descriptor's method order (shim.proto); NULL: UNIMPLEMENTED. */
static const ttrpc_handler_fn task_handlers[] = {
	h_state, /* State */
	h_create, /* Create */
	h_start, /* Start */
	h_delete, /* Delete */
	h_pids, /* Pids */
	h_pause, /* Pause */
	h_resume, /* Resume */
	NULL, /* Checkpoint */
	h_kill, /* Kill */
	shim_exec_create, /* Exec */
	h_resize_pty, /* ResizePty */
	h_close_io, /* CloseIO */
	NULL, /* Update */
	h_wait, /* Wait */
	h_stats, /* Stats */
	h_connect, /* Connect */
	h_shutdown, /* Shutdown */
};

/* The names the table above assumes, checked against the descriptor: a
 * proto with another order must fail loudly, not call the wrong handler. */
static const char *const task_methods[] = {
	"State",  "Create",	"Start", "Delete",  "Pids",	 "Pause",
	"Resume", "Checkpoint", "Kill",	 "Exec",    "ResizePty", "CloseIO",
	"Update", "Wait",	"Stats", "Connect", "Shutdown",
};

struct ttrpc_service shim_task_service(struct shim *s)
{
	const ProtobufCServiceDescriptor *d =
		&containerd__task__v2__task__descriptor;
	bool same =
		d->n_methods >= sizeof(task_methods) / sizeof(task_methods[0]);

	for (size_t i = 0;
	     same && i < sizeof(task_methods) / sizeof(task_methods[0]); i++)
		same = !strcmp(d->methods[i].name, task_methods[i]);
	if (!same)
		rt_error(
			"containerd.task.v2.Task: the generated methods are not in shim.proto 1.6's order");
	return (struct ttrpc_service){
		.desc = same ? d : NULL,
		.handlers = task_handlers,
		.n_handlers = sizeof(task_handlers) / sizeof(task_handlers[0]),
		.opaque = s,
	};
}
