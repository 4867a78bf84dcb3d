/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * containerd-shim-hintvm-v2 (docs/shim.md): what its parts share. The
 * binary has containerd 1.6's commands (main.c, commands.c), serves the
 * Task service over ttrpc as one long-lived process per task (serve.c,
 * task.c), runs the task's VM through hintvm-runtime's code (the
 * runtime library, src/runtime) and publishes events to containerd
 * (events.c).
 */
#ifndef HVM_SHIM_SHIM_H
#define HVM_SHIM_SHIM_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <protobuf-c/protobuf-c.h>

#include "hintvm/hintvm.h"
#include "runtime/runtime.h"
#include "pb_any.pb-c.h"
#include "pb_timestamp.pb-c.h"
#include "types_mount.pb-c.h"
#include "shim/ttrpc_client.h"
#include "shim/ttrpc_server.h"

#define SHIM_NAME "containerd-shim-hintvm-v2"
/* containerd 1.6's socketRoot: shim sockets are /run/containerd/s/HEX. */
#define SHIM_SOCKET_DIR "/run/containerd/s"
/* The runtime's state directories, one per namespace (rt.root). */
#define SHIM_STATE_ROOT "/run/hintvm-shim"
#define SHIM_MAX_NS 76 /* containerd's namespace names: 76 bytes at most */

/* The flags containerd 1.6 passes (runtime/v2/shim/shim.go), Go style. */
struct shim_flags {
	const char *namespace;
	const char *id;
	const char *address; /* containerd's grpc socket */
	const char *publish_binary;
	const char *bundle; /* "" or absent: the working directory */
	const char *socket; /* serve: the socket to listen on */
	bool debug;
	bool version;
	const char *action; /* "start", "delete", or NULL: serve */
};

/* Parses ARGV as Go's flag package would; -1 with a message on stderr. */
int shim_parse_flags(int argc, char **argv, struct shim_flags *f);

/* ---- commands.c: the binary commands --------------------------------- */
int shim_cmd_start(const struct shim_flags *f, char *self);
int shim_cmd_delete(const struct shim_flags *f);
/* The ttrpc address containerd 1.6 gives the shim of (address, ns, id):
 * "unix:///run/containerd/s/" + sha256(address/ns/id) in hex. */
void shim_socket_address(const char *address, const char *ns, const char *id,
			 char *out, size_t len);
/* rt.root for namespace NS; -EINVAL for a name unfit for a path. */
int shim_set_state_root(const char *ns);

/* ---- serve.c: the long-lived shim -------------------------------------- */
int shim_serve(const struct shim_flags *f);

/* ---- events.c: events to containerd (TTRPC_ADDRESS) ------------------ */
struct shim_events {
	char address[PATH_MAX]; /* "" when containerd gave none: dropped */
	char ns[SHIM_MAX_NS + 1];
	struct ttrpc_client client;
	bool connected;
};

void shim_events_init(struct shim_events *ev, const char *ttrpc_address,
		      const char *ns);
/*
 * Forwards EVENT (a containerd.events message) under TOPIC ("/tasks/exit"):
 * the envelope of containerd's Events/Forward, the event as an Any whose
 * type URL is the message's full name, as containerd 1.6's typeurl
 * writes it. 0, or -errno after one reconnect failed (logged: containerd
 * misses the event, the task goes on).
 */
int shim_events_publish(struct shim_events *ev, const char *topic,
			const ProtobufCMessage *event);
void shim_events_close(struct shim_events *ev);

/*
 * A pty whose master the runtime sends over a console socket, and the
 * fifos the shim copies to (out) and from (in) it; -1 when none.
 */
struct shim_console {
	int listen, master, in, out;
	char path[108];
	unsigned short rows, cols; /* asked before the master came */
	struct ttrpc_server *server;
};

/* ---- task.c: the Task service of one task ------------------------------ */
#define SHIM_MAX_WAITERS 16

struct shim_task {
	bool exists; /* Create succeeded, Delete not yet */
	bool started;
	bool exited;
	char id[RT_MAX_ID + 1];
	char bundle[PATH_MAX];
	char stdin_path[PATH_MAX], stdout_path[PATH_MAX], stderr_path[PATH_MAX];
	bool rootfs_mounted;
	bool terminal;
	struct shim_console console; /* a terminal task's (console.c) */
	pid_t pid; /* the VMM process */
	int pidfd;
	uint32_t exit_status;
	struct timespec exited_at;
	struct ttrpc_token waiters[SHIM_MAX_WAITERS];
	unsigned int n_waiters;
};

/* An exec of the task (task_exec.c): its host process is a helper
 * running the runtime's exec in the foreground, which stands for the
 * guest process as runc's exec does: the guest process's status is its. */
#define SHIM_MAX_EXECS 16
struct shim_exec {
	bool used, started, exited, terminal;
	struct shim_console console; /* with a terminal (console.c) */
	char id[RT_MAX_ID + 1];
	char stdin_path[PATH_MAX], stdout_path[PATH_MAX], stderr_path[PATH_MAX];
	char process_file[PATH_MAX + RT_MAX_ID + 16];
	/* A pod's container (pod.c): its root in the guest; "": none. */
	char guest_root[PATH_MAX];
	/*
	 * The pod's app container this process is of (its own process, or
	 * an exec into it: pod.c), named so in events; "": the task's.
	 */
	char container[RT_MAX_ID + 1];
	/* The container's own process: its cgroup's memory.max; 0: none. */
	unsigned long long memory_max;
	/* A PID namespace of the container's own: made by its process,
	 * joined by its execs (guest_pidns_join). */
	bool guest_pidns, guest_pidns_join;
	/*
	 * Its process is reaped but its exit not yet told: a pod
	 * container's TaskExit waits for the guest's OOM count (the exit
	 * is "exited" once TaskExit is sent). The pid may be reused now.
	 */
	bool reaped;
	pid_t pid;
	uint32_t exit_status;
	struct timespec exited_at;
	struct ttrpc_token waiters[SHIM_MAX_WAITERS];
	unsigned int n_waiters;
};

struct shim {
	struct ttrpc_server *server;
	struct shim_events events;
	struct shim_task task;
	struct shim_exec execs[SHIM_MAX_EXECS];
	bool shutdown; /* Shutdown answered: leave the loop */
};

/* No task: every fd -1 (a zeroed task would own fd 0). */
void shim_task_reset(struct shim_task *t);
/* The Task service (containerd.task.v2.Task) on S. */
/* The VMM process has ended (its pidfd, or SIGCHLD): reap it, send
 * TaskExit, answer the Waits. */
void shim_task_reaped(struct shim *s);
struct ttrpc_service shim_task_service(struct shim *s);

/* T as a protobuf Timestamp. */
void shim_timestamp(Google__Protobuf__Timestamp *ts, const struct timespec *t);
/*
 * One of containerd's stdio paths as an fd: "" is /dev/null, a fifo is
 * opened without blocking (a writer waits up to 2 s for its reader, then
 * it is an error, not a hang), file:///PATH appends to PATH. -errno with
 * the reason in ERR.
 */
int shim_open_stdio(const char *path, bool input, char *err, size_t errlen);

/* ---- task_exec.c: Exec and the requests naming an exec id ------------- */
/* The task ID names, or NULL after answering CALL with the reason. */
struct shim_task *shim_find_task(struct shim *s, struct ttrpc_call *call,
				 const char *id);
void shim_exec_create(void *opaque, struct ttrpc_call *call);
/*
 * Exec's work once the task is known to run: CALL's ExecProcessRequest as
 * an exec of the pod's app container CONTAINER, run in GUEST_ROOT (both
 * NULL: the task's own). The exec, or NULL when CALL was refused.
 */
struct shim_exec *shim_exec_add(struct shim *s, struct ttrpc_call *call,
				const char *container, const char *guest_root);
/* The container an exec's events name: its app container's, or the task's. */
const char *shim_exec_container_id(const struct shim *s,
				   const struct shim_exec *e);
void shim_exec_start(struct shim *s, struct ttrpc_call *call, const char *id,
		     const char *exec_id);
void shim_exec_state(struct shim *s, struct ttrpc_call *call, const char *id,
		     const char *exec_id);
void shim_exec_close_io(struct shim *s, struct ttrpc_call *call, const char *id,
			const char *exec_id);
void shim_exec_kill(struct shim *s, struct ttrpc_call *call, const char *id,
		    const char *exec_id, uint32_t signal);
void shim_exec_wait(struct shim *s, struct ttrpc_call *call, const char *id,
		    const char *exec_id);
void shim_exec_delete(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *exec_id);
void shim_exec_resize(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *exec_id, uint32_t width, uint32_t height);
/* PID (a zombie child) is an exec's: reap it, TaskExit, the Waits. */
bool shim_exec_reaped(struct shim *s, pid_t pid);

/* ---- console.c: a terminal task's or exec's pty ------------------------ */
/* No console: every fd -1. */
void shim_console_reset(struct shim_console *c);
/* The --console-socket the runtime sends the master to, named
 * NAME-<shim pid>.sock under SHIM_STATE_ROOT. */
int shim_console_listen(struct shim_console *c, struct ttrpc_server *server,
			const char *name, char *err, size_t errlen);
/* Takes the master now (the runtime has sent it), starts copying. */
int shim_console_attach(struct shim_console *c, char *err, size_t errlen);
/* Takes it in the poll round once the runtime connects. */
int shim_console_attach_later(struct shim_console *c);
/* At the end: the last output to out, then everything closed. */
void shim_console_drain(struct shim_console *c);
void shim_console_close(struct shim_console *c);
/* -ENOTTY without a terminal; a size asked early is set later. */
int shim_console_resize(struct shim_console *c, uint32_t width,
			uint32_t height);

/*
 * Stats' answer (task.c) for task or container ID: the guest's numbers
 * of the task's cgroup, or of the pod container's CGROUP (pod.c).
 */
void shim_stats_reply(struct shim *s, struct ttrpc_call *call, const char *id,
		      const char *cgroup);

/* ---- guest_ask.c: the guest agent asked in a child process ----------- */
struct shim_guest_answer {
	int r; /* 0, or a negative errno with the reason in err */
	struct hvm_guest_stats g;
	char err[256];
};
/* A's answer (NULL: the child ended without one, its time ran out) for
 * the OPAQUE of shim_guest_ask, on the server's thread. */
typedef void (*shim_guest_answer_fn)(struct shim *s, void *opaque,
				     const struct shim_guest_answer *a);
/*
 * Asks the agent at VSOCK for CGROUP's numbers (NULL: the task's) in a
 * child process, LIMIT_S seconds at most (0: the agent's own deadlines);
 * FN gets the answer in a later poll round. 0, or -errno when it could
 * not be asked (FN is never called then).
 */
int shim_guest_ask(struct shim *s, const char *vsock, const char *cgroup,
		   unsigned int limit_s, shim_guest_answer_fn fn, void *opaque);
/* Questions asked and not yet answered. */
unsigned int shim_guest_asks_pending(void);

/* ---- stats.c: Task.Stats' message ---------------------------------------- */
/*
 * G as containerd's io.containerd.cgroups.v1.Metrics in ANY (type URL
 * the message's full name; its value malloc'ed: free any->value.data).
 * 0 or -ENOMEM.
 */
int shim_stats_encode(const struct hvm_guest_stats *g,
		      Google__Protobuf__Any *any);
/*
 * G as the StatsResponse to the deferred request TOKEN of SERVER; WHAT
 * ("task ID") names it in the error when G cannot be encoded.
 */
void shim_stats_send(struct ttrpc_server *server,
		     const struct ttrpc_token *token, const char *what,
		     const struct hvm_guest_stats *g);
/*
 * The VMM process PID's own numbers on the host, from /proc/PID/stat (a
 * pod sandbox's Stats): CPU user/system time, resident memory, threads as
 * pids; limits and OOM kills unknown. 0 or a negative errno.
 */
int shim_stats_vmm(pid_t pid, struct hvm_guest_stats *g);
/* The parsing part: TEXT is /proc/PID/stat's line; TICKS per second and
 * PAGE_SIZE as sysconf says. 0 or -EINVAL. */
int shim_stats_parse_proc_stat(const char *text, long ticks, long page_size,
			       struct hvm_guest_stats *g);

/* ---- options.c: CreateTaskRequest.options ------------------------------ */
/*
 * ANY (NULL: none) as runtime options: none, or runtimeoptions.v1.Options
 * whose config_path (absolute, an existing file) goes to CONFIG_PATH ("":
 * none asked). -EINVAL/-ENOENT with the reason, naming the value, in ERR.
 */
int shim_parse_options(const Google__Protobuf__Any *any, char *config_path,
		       size_t len, char *err, size_t errlen);

/* ---- rootfs.c: the mounts containerd hands Create --------------------- */
/* Mounts M[0..N) on TARGET in order; on failure undoes what it did and
 * leaves the reason in ERR. */
int shim_rootfs_mount(Containerd__Types__Mount *const *m, size_t n,
		      const char *target, char *err, size_t errlen);
/* Unmounts everything on TARGET (lazily: a VMM may still hold it). */
void shim_rootfs_unmount(const char *target);

#endif
