// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A pod in one VM (issue 31, docs/shim.md "Pods"). containerd's CRI plugin
 * runs a pod as a sandbox container plus app containers; `start` sends an
 * app container to the shim of its sandbox (commands.c), so this one shim
 * serves them all:
 *
 * - the sandbox is this shim's task (task.c): its VM. Before it is created
 *   its config.json gains a bind mount of the pod's share, a host
 *   directory POD_SHARE_ROOT/<namespace>/<sandbox>, on POD_GUEST_DIR;
 * - an app container's Create mounts its rootfs (containerd's mounts) on
 *   <share>/<id>/rootfs, where the VM sees it through that share, and
 *   records it as an exec of the sandbox's VM (task_exec.c) whose process
 *   is its config.json's and whose root in the guest is that rootfs: the
 *   guest agent runs it chrooted there, in a mount namespace of its own
 *   with its own /proc. Its Start, State, Kill, Wait, CloseIO and Delete
 *   are that exec's; Delete unmounts the rootfs.
 *
 * Not yet (docs/shim.md): a PID namespace and a cgroup of its own per
 * container, the container's own mounts (volumes, /etc/hosts, ...), its
 * limits beyond what an exec gets, Exec into an app container
 * (ExecSync), a terminal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hintvm/hintvm.h"
#include "pb_empty.pb-c.h"
#include "runtime/state.h"
#include "shim/pod.h"
#include "shim/shim.h"
#include "task_shim.pb-c.h"

#define POD_MAX_CONTAINERS SHIM_MAX_EXECS

struct pod_container {
	bool used;
	char id[RT_MAX_ID + 1];
	char rootfs[PATH_MAX]; /* on the host: <share>/<id>/rootfs */
	bool mounted;
};

/* One pod per shim: the sandbox is the shim's one task. */
static struct {
	bool is_sandbox; /* the task is a CRI sandbox: its share exists */
	char share[PATH_MAX];
	struct pod_container ctrs[POD_MAX_CONTAINERS];
	ttrpc_handler_fn task[17]; /* task.c's handlers */
	size_t n_task;
} pod;

/* Task methods, in shim.proto's order (task.c checks it). */
enum {
	M_STATE,
	M_CREATE,
	M_START,
	M_DELETE,
	M_PIDS,
	M_PAUSE,
	M_RESUME,
	M_CHECKPOINT,
	M_KILL,
	M_EXEC,
	M_RESIZE_PTY,
	M_CLOSE_IO,
	M_UPDATE,
	M_WAIT,
	M_STATS,
	M_CONNECT,
	M_SHUTDOWN,
	M_COUNT
};

static void pass(int method, void *opaque, struct ttrpc_call *call)
{
	if ((size_t)method < pod.n_task && pod.task[method])
		pod.task[method](opaque, call);
	else
		ttrpc_call_error(call, GOOGLE__RPC__CODE__UNIMPLEMENTED,
				 "not implemented");
}

static struct pod_container *find_container(const char *id)
{
	for (int i = 0; i < POD_MAX_CONTAINERS; i++)
		if (pod.ctrs[i].used && !strcmp(pod.ctrs[i].id, id))
			return &pod.ctrs[i];
	return NULL;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, mode) && errno != EEXIST ? -errno : 0;
}

/* The container's directory in the share, emptied and removed. */
static void remove_container(struct pod_container *c)
{
	char dir[PATH_MAX + RT_MAX_ID + 2];

	if (c->mounted)
		shim_rootfs_unmount(c->rootfs);
	rmdir(c->rootfs);
	snprintf(dir, sizeof(dir), "%s/%s", pod.share, c->id);
	rmdir(dir);
	memset(c, 0, sizeof(*c));
}

static void create_sandbox(struct shim *s, struct ttrpc_call *call,
			   const Containerd__Task__V2__CreateTaskRequest *req)
{
	char err[PATH_MAX + 256];
	int r;

	snprintf(pod.share, sizeof(pod.share), "%s/%s/%s", POD_SHARE_ROOT,
		 s->events.ns, req->id);
	r = mkdir_p(pod.share, 0755);
	/*
	 * A shared mount of its own: the containers' rootfs mounted under
	 * it later propagate into the share's file-server process, whose
	 * mounts are the host's slaves (p9_file_server.c).
	 */
	if (!r && (mount(pod.share, pod.share, NULL, MS_BIND, NULL) ||
		   mount(NULL, pod.share, NULL, MS_SHARED, NULL)))
		r = -errno;
	if (!r)
		r = pod_spec_add_share(req->bundle, pod.share, err,
				       sizeof(err));
	else
		snprintf(err, sizeof(err), "pod share %s: %s", pod.share,
			 strerror(-r));
	if (r) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INTERNAL,
				 "pod sandbox %s: %s", req->id, err);
		return;
	}
	pod.is_sandbox = true;
	pass(M_CREATE, s, call);
	if (!s->task.exists) { /* refused: task.c said why */
		umount2(pod.share, MNT_DETACH);
		rmdir(pod.share);
		pod.is_sandbox = false;
	}
}

static void create_container(struct shim *s, struct ttrpc_call *call,
			     const Containerd__Task__V2__CreateTaskRequest *req,
			     const struct pod_info *info)
{
	Containerd__Task__V2__CreateTaskResponse resp =
		CONTAINERD__TASK__V2__CREATE_TASK_RESPONSE__INIT;
	struct pod_container *c = NULL;
	struct shim_exec *e = NULL;
	char err[PATH_MAX + 256];
	int r;

	if (!pod.is_sandbox || !s->task.exists || !s->task.started ||
	    s->task.exited || strcmp(info->sandbox_id, s->task.id)) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
			"container %s: its pod sandbox %s does not run in this shim (sandbox here: \"%s\")",
			req->id, info->sandbox_id,
			pod.is_sandbox ? s->task.id : "");
		return;
	}
	if (!rt_valid_id(req->id) || find_container(req->id) ||
	    !strcmp(req->id, s->task.id)) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__ALREADY_EXISTS,
			"container id \"%s\": expected a new id of 1 to %d of [A-Za-z0-9_.+-]",
			req->id, RT_MAX_ID);
		return;
	}
	if (req->terminal) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__UNIMPLEMENTED,
			"container %s: a terminal in a pod's container is not implemented yet",
			req->id);
		return;
	}
	for (int i = 0; i < POD_MAX_CONTAINERS && !c; i++)
		if (!pod.ctrs[i].used)
			c = &pod.ctrs[i];
	for (int i = 0; i < SHIM_MAX_EXECS && !e; i++)
		if (!s->execs[i].used)
			e = &s->execs[i];
	if (!c || !e) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__RESOURCE_EXHAUSTED,
				 "pod %s has %d containers and execs already",
				 s->task.id, POD_MAX_CONTAINERS);
		return;
	}
	if (strlen(req->stdin) >= sizeof(e->stdin_path) ||
	    strlen(req->stdout) >= sizeof(e->stdout_path) ||
	    strlen(req->stderr) >= sizeof(e->stderr_path) ||
	    strlen(req->bundle) + 32 >= sizeof(e->process_file)) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			"container %s: a stdio or bundle path is longer than %zu bytes",
			req->id, sizeof(e->stdin_path) - 1);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->used = true;
	snprintf(c->id, sizeof(c->id), "%s", req->id);
	if (snprintf(c->rootfs, sizeof(c->rootfs), "%s/%s/rootfs", pod.share,
		     req->id) >= (int)sizeof(c->rootfs)) {
		snprintf(err, sizeof(err), "its rootfs path is too long");
		goto fail;
	}
	r = mkdir_p(c->rootfs, 0755);
	if (r) {
		snprintf(err, sizeof(err), "%s: %s", c->rootfs, strerror(-r));
		goto fail;
	}
	if (shim_rootfs_mount(req->rootfs, req->n_rootfs, c->rootfs, err,
			      sizeof(err)))
		goto fail;
	c->mounted = req->n_rootfs > 0;
	memset(e, 0, sizeof(*e));
	snprintf(e->process_file, sizeof(e->process_file),
		 "%s/hintvm-process.json", req->bundle);
	if (pod_spec_write_process(req->bundle, e->process_file, err,
				   sizeof(err)))
		goto fail;
	snprintf(e->id, sizeof(e->id), "%s", req->id);
	strcpy(e->stdin_path, req->stdin);
	strcpy(e->stdout_path, req->stdout);
	strcpy(e->stderr_path, req->stderr);
	snprintf(e->guest_root, sizeof(e->guest_root), "%s/%s/rootfs",
		 POD_GUEST_DIR, req->id);
	snprintf(e->container, sizeof(e->container), "%s", req->id);
	e->memory_max = info->memory_limit;
	e->guest_pidns = info->own_pidns;
	e->used = true;
	rt_debug("pod %s: container %s, rootfs %s", s->task.id, c->id,
		 c->rootfs);
	/* Its own process is the exec's helper, from Start on. */
	resp.pid = (uint32_t)s->task.pid;
	ttrpc_call_reply(call, &resp.base);
	return;
fail:
	ttrpc_call_error(call, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
			 "container %s in pod %s: %s", req->id, s->task.id,
			 err);
	remove_container(c);
}

static void h_create(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__CreateTaskRequest *req =
		(const void *)call->request;
	struct shim *s = opaque;
	struct pod_info info;
	char err[512];

	if (req->bundle[0] != '/') {
		pass(M_CREATE, opaque, call); /* task.c says why */
		return;
	}
	if (pod_info_read(req->bundle, &info, err, sizeof(err))) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
				 "container %s: %s", req->id, err);
		return;
	}
	if (info.role == POD_SANDBOX && !s->task.exists)
		create_sandbox(s, call, req);
	else if (info.role == POD_CONTAINER)
		create_container(s, call, req, &info);
	else
		pass(M_CREATE, opaque, call);
}

/*
 * Exec into app container C (CRI ExecSync, kubectl exec): an exec of the
 * VM like any other (task_exec.c), run by the guest agent chrooted in
 * the container's rootfs, named as C's in its events.
 */
static void exec_into(struct shim *s, struct ttrpc_call *call,
		      const struct pod_container *c)
{
	const Containerd__Task__V2__ExecProcessRequest *req =
		(const void *)call->request;
	struct shim_exec *own = NULL;

	for (int i = 0; i < SHIM_MAX_EXECS && !own; i++)
		if (s->execs[i].used && !strcmp(s->execs[i].id, c->id))
			own = &s->execs[i];
	if (!own || !own->started || own->reaped) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
			"exec \"%s\" in container %s: it is not running",
			req->exec_id, c->id);
		return;
	}
	struct shim_exec *e = shim_exec_add(s, call, c->id, own->guest_root);

	/* In its PID namespace, if it has one. */
	if (e)
		e->guest_pidns_join = own->guest_pidns;
}

/*
 * Update (CRI UpdateContainerResources): the container's guest cgroup
 * gets the new memory limit and CPU quota. The VM's own size stays what
 * it was at the pod's start.
 */
static void update_container(struct shim *s, struct ttrpc_call *call,
			     const struct pod_container *c)
{
	const Containerd__Task__V2__UpdateTaskRequest *req =
		(const void *)call->request;
	Google__Protobuf__Empty empty = GOOGLE__PROTOBUF__EMPTY__INIT;
	struct pod_resources res;
	struct rt_container rc;
	char err[256], vsock[PATH_MAX + 32];

	if (!req->resources ||
	    strcmp(req->resources->type_url, POD_RESOURCES_TYPE)) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
			"Update of container %s: resources of type \"%s\", expected %s",
			c->id, req->resources ? req->resources->type_url : "",
			POD_RESOURCES_TYPE);
		return;
	}
	if (pod_resources_parse((const char *)req->resources->value.data,
				req->resources->value.len, &res, err,
				sizeof(err))) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__INVALID_ARGUMENT,
				 "Update of container %s: %s", c->id, err);
		return;
	}
	if (!s->task.started || s->task.exited ||
	    rt_container_load(&rc, s->task.id)) {
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
			"Update of container %s: its pod's VM is not running",
			c->id);
		return;
	}
	rt_container_path(&rc, RT_VSOCK_FILE, vsock, sizeof(vsock));
	if (hvm_guest_cgroup_set(vsock, c->id, res.memory_limit,
				 res.set_cpu ? res.cpu_quota : 0,
				 res.set_cpu ? res.cpu_period : 0) < 0) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
				 "Update of container %s: %s", c->id,
				 hvm_last_error());
		return;
	}
	ttrpc_call_reply(call, &empty.base);
}

/* A request naming exec EXEC_ID of app container C. */
static void exec_call(struct shim *s, struct ttrpc_call *call, int method,
		      const struct pod_container *c, const char *exec_id,
		      uint32_t signal)
{
	const struct shim_exec *e = NULL;

	for (int i = 0; i < SHIM_MAX_EXECS && !e; i++)
		if (s->execs[i].used && !strcmp(s->execs[i].id, exec_id))
			e = &s->execs[i];
	/* Exec ids are the shim's, one table: another container's exec
	 * (or a container's own process) is not this one's. */
	if (!e || strcmp(e->container, c->id) || !strcmp(exec_id, c->id)) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__NOT_FOUND,
				 "exec \"%s\" of container %s: not found",
				 exec_id, c->id);
		return;
	}
	switch (method) {
	case M_STATE:
		shim_exec_state(s, call, s->task.id, exec_id);
		break;
	case M_START:
		shim_exec_start(s, call, s->task.id, exec_id);
		break;
	case M_DELETE:
		shim_exec_delete(s, call, s->task.id, exec_id);
		break;
	case M_KILL:
		shim_exec_kill(s, call, s->task.id, exec_id, signal);
		break;
	case M_WAIT:
		shim_exec_wait(s, call, s->task.id, exec_id);
		break;
	case M_CLOSE_IO:
		shim_exec_close_io(s, call, s->task.id, exec_id);
		break;
	default:
		ttrpc_call_error(
			call, GOOGLE__RPC__CODE__UNIMPLEMENTED,
			"this request for exec %s of pod container %s: not implemented",
			exec_id, c->id);
		break;
	}
}

/* A request naming a pod's container by ID with no exec id is its own
 * process's, with one its exec's; true when it was handled here. */
static bool container_call(struct shim *s, struct ttrpc_call *call, int method,
			   const char *id, const char *exec_id, uint32_t signal)
{
	Containerd__Task__V2__PidsResponse pids =
		CONTAINERD__TASK__V2__PIDS_RESPONSE__INIT;
	Containerd__Task__V2__ConnectResponse conn =
		CONTAINERD__TASK__V2__CONNECT_RESPONSE__INIT;
	Containerd__V1__Types__ProcessInfo pi =
		CONTAINERD__V1__TYPES__PROCESS_INFO__INIT;
	Containerd__V1__Types__ProcessInfo *pis[1] = { &pi };
	struct pod_container *c = find_container(id);
	struct shim_exec *e = NULL;

	if (!c)
		return false;
	if (method == M_EXEC) {
		exec_into(s, call, c);
		return true;
	}
	if (method == M_UPDATE) {
		update_container(s, call, c);
		return true;
	}
	if (exec_id && *exec_id) {
		exec_call(s, call, method, c, exec_id, signal);
		return true;
	}
	for (int i = 0; i < SHIM_MAX_EXECS && !e; i++)
		if (s->execs[i].used && !strcmp(s->execs[i].id, id))
			e = &s->execs[i];
	switch (method) {
	case M_STATE:
		shim_exec_state(s, call, s->task.id, id);
		break;
	case M_START:
		shim_exec_start(s, call, s->task.id, id);
		break;
	case M_DELETE:
		shim_exec_delete(s, call, s->task.id, id);
		if (!e || !e->used) /* deleted, not refused as running */
			remove_container(c);
		break;
	case M_KILL:
		shim_exec_kill(s, call, s->task.id, id, signal);
		break;
	case M_WAIT:
		shim_exec_wait(s, call, s->task.id, id);
		break;
	case M_CLOSE_IO:
		shim_exec_close_io(s, call, s->task.id, id);
		break;
	case M_PIDS:
		pi.pid = e && e->started ? (uint32_t)e->pid : 0;
		pids.processes = pis;
		pids.n_processes = pi.pid ? 1 : 0;
		ttrpc_call_reply(call, &pids.base);
		break;
	case M_STATS: /* its own cgroup in the guest (ContainerStats) */
		shim_stats_reply(s, call, id, id);
		break;
	case M_CONNECT:
		conn.shim_pid = (uint32_t)getpid();
		conn.task_pid = e && e->started ? (uint32_t)e->pid : 0;
		conn.version = (char *)hvm_version();
		ttrpc_call_reply(call, &conn.base);
		break;
	default:
		ttrpc_call_error(call, GOOGLE__RPC__CODE__UNIMPLEMENTED,
				 "%s of pod container %s: not implemented yet",
				 method == M_EXEC ? "Exec" : "this request",
				 id);
		break;
	}
	return true;
}

#define BY_ID(name, method, type, exec_field, sig)                             \
	static void name(void *opaque, struct ttrpc_call *call)                \
	{                                                                      \
		const type *req = (const void *)call->request;                 \
                                                                               \
		if (!container_call(opaque, call, method, req->id, exec_field, \
				    sig))                                      \
			pass(method, opaque, call);                            \
	}

BY_ID(h_state, M_STATE, Containerd__Task__V2__StateRequest, req->exec_id, 0)
BY_ID(h_start, M_START, Containerd__Task__V2__StartRequest, req->exec_id, 0)
BY_ID(h_pids, M_PIDS, Containerd__Task__V2__PidsRequest, NULL, 0)
BY_ID(h_kill, M_KILL, Containerd__Task__V2__KillRequest, req->exec_id,
      req->signal)
BY_ID(h_exec, M_EXEC, Containerd__Task__V2__ExecProcessRequest, NULL, 0)
BY_ID(h_close_io, M_CLOSE_IO, Containerd__Task__V2__CloseIORequest,
      req->exec_id, 0)
BY_ID(h_wait, M_WAIT, Containerd__Task__V2__WaitRequest, req->exec_id, 0)
BY_ID(h_connect, M_CONNECT, Containerd__Task__V2__ConnectRequest, NULL, 0)

/*
 * A pod's sandbox is no process in the guest but the VM: its Stats are
 * the VMM process's cost on the host, the overhead its containers' own
 * numbers (their guest cgroups, above) leave out. A task that is no
 * sandbox keeps its guest cgroup's numbers (task.c).
 */
static void h_stats(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__StatsRequest *req =
		(const void *)call->request;
	struct hvm_guest_stats g;
	struct ttrpc_token token;
	struct shim *s = opaque;
	char what[RT_MAX_ID + 16];
	int r;

	if (container_call(s, call, M_STATS, req->id, NULL, 0))
		return;
	if (!pod.is_sandbox || !s->task.exists || strcmp(req->id, s->task.id)) {
		pass(M_STATS, opaque, call);
		return;
	}
	if (!s->task.started || s->task.exited) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__FAILED_PRECONDITION,
				 "pod sandbox %s is not running: no stats",
				 req->id);
		return;
	}
	r = shim_stats_vmm(s->task.pid, &g);
	if (r < 0) {
		ttrpc_call_error(call, GOOGLE__RPC__CODE__UNAVAILABLE,
				 "pod sandbox %s: the VMM process %d: %s",
				 req->id, (int)s->task.pid, strerror(-r));
		return;
	}
	snprintf(what, sizeof(what), "pod sandbox %s", req->id);
	token = ttrpc_call_defer(call);
	shim_stats_send(s->server, &token, what, &g);
}
BY_ID(h_update, M_UPDATE, Containerd__Task__V2__UpdateTaskRequest, NULL, 0)

static void h_delete(void *opaque, struct ttrpc_call *call)
{
	const Containerd__Task__V2__DeleteRequest *req =
		(const void *)call->request;
	struct shim *s = opaque;

	if (container_call(s, call, M_DELETE, req->id, req->exec_id, 0))
		return;
	pass(M_DELETE, opaque, call);
	/* The sandbox gone: its share goes too (containers are deleted
	 * before their sandbox; any left are unmounted now). */
	if (pod.is_sandbox && !s->task.exists) {
		for (int i = 0; i < POD_MAX_CONTAINERS; i++)
			if (pod.ctrs[i].used)
				remove_container(&pod.ctrs[i]);
		umount2(pod.share, MNT_DETACH);
		rmdir(pod.share);
		pod.is_sandbox = false;
	}
}

struct ttrpc_service shim_pod_service(struct shim *s)
{
	static ttrpc_handler_fn handlers[M_COUNT];
	struct ttrpc_service svc = shim_task_service(s);

	pod.n_task = svc.n_handlers < M_COUNT ? svc.n_handlers : M_COUNT;
	for (size_t i = 0; i < pod.n_task; i++)
		handlers[i] = pod.task[i] = svc.handlers[i];
	handlers[M_STATE] = h_state;
	handlers[M_CREATE] = h_create;
	handlers[M_START] = h_start;
	handlers[M_DELETE] = h_delete;
	handlers[M_PIDS] = h_pids;
	handlers[M_KILL] = h_kill;
	handlers[M_EXEC] = h_exec;
	handlers[M_CLOSE_IO] = h_close_io;
	handlers[M_WAIT] = h_wait;
	handlers[M_CONNECT] = h_connect;
	handlers[M_STATS] = h_stats;
	handlers[M_UPDATE] = h_update;
	svc.handlers = handlers;
	svc.n_handlers = M_COUNT;
	return svc;
}
