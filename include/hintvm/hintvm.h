/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libhintvm: boot and supervise a KVM virtual machine from a C program.
 *
 * The API is string-keyed on purpose: every option the `hintvm run` command
 * line accepts is a key here (without the leading "--"), validated by the
 * same code, so an orchestration tool, a config file and the command line
 * cannot disagree about what a value means.
 *
 *	struct hvm_config *cfg = hvm_config_new();
 *	hvm_config_set(cfg, "cpus", "2");
 *	struct hvm_vm *vm = hvm_vm_create(cfg);
 *	hvm_vm_start(vm);
 *	struct hvm_exit exit;
 *	hvm_vm_wait(vm, &exit);
 *	hvm_vm_destroy(vm);
 *	hvm_config_free(cfg);
 *
 * Functions that can fail return NULL or a negative errno value and leave a
 * one-line, human-readable explanation in hvm_last_error() (per thread).
 */
#ifndef HINTVM_H
#define HINTVM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HVM_API __attribute__((visibility("default")))

struct hvm_config;
struct hvm_vm;

/* The library version, "MAJOR.MINOR.PATCH". */
HVM_API const char *hvm_version(void);

/* Explanation of the last failure in this thread; never NULL. */
HVM_API const char *hvm_last_error(void);

/* ---- configuration ---------------------------------------------------- */

HVM_API struct hvm_config *hvm_config_new(void);
HVM_API void hvm_config_free(struct hvm_config *cfg);

/*
 * Set option KEY (a long option name such as "mem" or "cpus") to VALUE.
 * Flags that take no value accept NULL, "on"/"off", "yes"/"no", "1"/"0".
 * Returns 0, or -EINVAL for an unknown key or a bad value.
 */
HVM_API int hvm_config_set(struct hvm_config *cfg, const char *key,
			   const char *value);

/*
 * Read "key = value" lines ('#' starts a comment) from PATH. Keys already
 * set by hvm_config_set() before this call win, so a command line parsed
 * first overrides the file. Errors name the file and line.
 */
HVM_API int hvm_config_load_file(struct hvm_config *cfg, const char *path);

/*
 * The sandbox is an option like any other, and off unless asked for: the
 * library never confines its caller on its own. hvm_config_set(cfg,
 * "sandbox", "on") is the explicit call (hintvm run makes it unless told
 * --sandbox off): every thread the VM starts then loads the seccomp filter
 * of its kind (vCPU, device event loop, console, control socket,
 * scheduling brain), drops every capability and sets no_new_privs as its
 * first act, and hvm_vm_start() does the same to the calling thread
 * before it returns, with the filter of the thread that waits for and
 * tears down the VM; threads the caller creates afterwards inherit it.
 * Other threads of the process are left alone, so confine them too (or
 * run nothing else in the process) for the full benefit. A forbidden
 * system call kills the process by SIGSYS after one line on stderr naming
 * the call and the kind of thread (docs/sandbox.md). Sanitizer builds must
 * leave it off: LeakSanitizer ptraces the process at exit.
 */

/*
 * The jail (docs/sandbox.md), an explicit call like the sandbox: with the
 * `jail` option set (DIR[,nofile=N][,memlock=SIZE]), fork a child into new
 * mount, PID, IPC and network namespaces whose root is DIR (KVM's device
 * node and a proc are mounted in, taps attached before; everything else
 * the VM opens must be in DIR, named by its path there), with RLIMIT_NOFILE
 * and RLIMIT_MEMLOCK set, and, with a `user`, a user namespace whose root
 * is that uid and gid on the host (/dev/kvm, the VM and its images are
 * opened before it; DIR must let that uid search it); with `cgroup` (PATH)
 * set, the child is moved
 * into that cgroup first. The parent waits for the child, passes SIGINT,
 * SIGTERM and SIGHUP on to it, and returns 1 with the child's exit status
 * in *STATUS (128 + signal if it was killed); the child returns 0 and
 * goes on to create and run the VM. With `cgroup` alone, the calling
 * process joins the cgroup and 0 is returned; with neither, nothing
 * happens. Call before the process has threads (unshare fails otherwise)
 * and as root. Returns -errno on failure.
 */
HVM_API int hvm_jail(const struct hvm_config *cfg, int *status);

/*
 * Set KEY as a default of the caller's own: like hvm_config_set(), but a
 * config file loaded later and later hvm_config_set() calls still override
 * it (`hintvm run` turns the sandbox on this way).
 */
HVM_API int hvm_config_set_default(struct hvm_config *cfg, const char *key,
				   const char *value);

/*
 * Guest console wiring for embedders: the serial port reads guest input
 * from IN_FD and writes guest output to OUT_FD (-1 for none). The file
 * descriptors stay owned by the caller. Default: stdin and stdout.
 */
HVM_API int hvm_config_set_console_fds(struct hvm_config *cfg, int in_fd,
				       int out_fd);

/*
 * With option "agent": the main process's stdin, stdout and stderr as
 * three vsock connections the guest opens to host ports 1027, 1028 and
 * 1029 (docs/agent.md), copied from IN_FD and to OUT_FD and ERR_FD, which
 * stay owned by the caller. Unlike the serial console, stderr stays apart
 * and the end of IN_FD reaches the process. All three or none (-1 each,
 * the default: the guest keeps its console).
 */
HVM_API int hvm_config_set_agent_stdio_fds(struct hvm_config *cfg, int in_fd,
					   int out_fd, int err_fd);

/* Description of one option, for help texts and option parsers. */
struct hvm_option_info {
	const char *name; /* long name, e.g. "mem" */
	char short_name; /* e.g. 'm', or 0 */
	const char *arg; /* argument placeholder, e.g. "SIZE"; NULL: flag */
	const char *help; /* one line */
};

/* All options, in help order; *count receives their number. */
HVM_API const struct hvm_option_info *hvm_options(size_t *count);

/* ---- virtual machine -------------------------------------------------- */

enum hvm_exit_reason {
	HVM_EXIT_POWEROFF, /* the guest powered off */
	HVM_EXIT_REBOOT, /* the guest asked for a reset */
	HVM_EXIT_DEBUG, /* the guest wrote the debug-exit port */
	HVM_EXIT_CRASH, /* triple fault, KVM internal or emulation error */
	HVM_EXIT_STOPPED, /* hvm_vm_stop() or a signal */
	HVM_EXIT_HOST_ERROR, /* hintvm itself failed while running */
};

struct hvm_exit {
	enum hvm_exit_reason reason;
	uint32_t debug_code; /* value written to the debug-exit port */
	int vcpu; /* vCPU that ended the VM, or -1 */
	char detail[160]; /* human-readable cause */
	/*
	 * With option "agent": the guest agent reported its main process's
	 * exit before the guest powered off (docs/agent.md); guest_status
	 * is then that status as a shell says it (the code, or 128 + signal)
	 * and is what hvm_exit_status() returns.
	 */
	int guest_reported;
	int guest_status;
	/*
	 * With guest_reported: how many processes of the main process's
	 * cgroup the guest's OOM killer had killed by its exit (its
	 * memory.events oom_kill; hintvm-oci-init sends it), or
	 * HVM_GUEST_STAT_UNKNOWN when the guest did not say. The VM is gone
	 * after the exit: this is the one place the count survives it.
	 */
	uint64_t guest_oom_kills;
};

/*
 * Process exit statuses `hintvm run` uses; documented in README.md.
 * Debug-exit values map to (code << 1) | 1 as QEMU's isa-debug-exit does,
 * so every status hintvm itself picks is even.
 */
enum hvm_exit_status {
	HVM_STATUS_POWEROFF = 0,
	HVM_STATUS_USAGE = 2, /* bad option, file or host: guest never ran */
	HVM_STATUS_REBOOT = 4,
	HVM_STATUS_CRASH = 6,
	HVM_STATUS_HOST_ERROR = 8,
	HVM_STATUS_STOPPED = 10,
};

/* The process exit status for EXIT (see enum hvm_exit_status). */
HVM_API int hvm_exit_status(const struct hvm_exit *exit);

/* Human-readable name of REASON ("poweroff", "crash", ...). */
HVM_API const char *hvm_exit_reason_name(enum hvm_exit_reason reason);

/*
 * Build the VM described by CFG: opens /dev/kvm, checks capabilities,
 * allocates guest memory, loads the kernel and creates the vCPUs, but runs
 * nothing. On failure nothing is left behind and NULL is returned. CFG may
 * be freed afterwards. With "core-sched" vm or vcpu, the calling thread
 * takes the VM's core-scheduling cookie for good (the VM's threads inherit
 * it from there), and hvm_vm_start() must then be called on the same
 * thread (docs/sandbox.md).
 */
HVM_API struct hvm_vm *hvm_vm_create(const struct hvm_config *cfg);

/* Start the vCPU threads. */
HVM_API int hvm_vm_start(struct hvm_vm *vm);

/* Wait until the VM ends and describe why. */
HVM_API int hvm_vm_wait(struct hvm_vm *vm, struct hvm_exit *exit);

/*
 * Ask a running VM to stop (async-signal-safe: callable from a signal
 * handler). hvm_vm_wait() then reports HVM_EXIT_STOPPED.
 */
HVM_API void hvm_vm_stop(struct hvm_vm *vm);

/*
 * Take every vCPU out of KVM_RUN and keep it out (returns once all are
 * parked), or let them run again. Not async-signal-safe.
 */
HVM_API int hvm_vm_pause(struct hvm_vm *vm);
HVM_API int hvm_vm_resume(struct hvm_vm *vm);

/*
 * Snapshots (docs/snapshot.md). hvm_vm_snapshot: pause the running VM at
 * a clean point, write DIR/state and DIR/memory (created mode 0600, DIR
 * must exist), then let it run on, or keep it paused when STAY_PAUSED.
 * Returns 0 or -errno (hvm_last_error() names the reason, e.g. a device
 * that cannot be snapshotted yet). x86 only for now.
 *
 * hvm_vm_restore: a VM built from the snapshot in DIR, not started (call
 * hvm_vm_start): its machine options (cpus, mem, irqchip) come from the
 * snapshot, the rest (console, name, user, sandbox, ...) from CFG, which
 * must add the snapshot's virtio devices in the same order: "disk" (a
 * clone's own copy of the image, of the same size and mode), "console"
 * virtio, "rng", "vsock" (a clone's own cid= and uds=). The same as
 * hvm_vm_create with the "restore" option set. NULL on error: a
 * truncated, corrupt, other-version, other-arch or CPU-incompatible
 * snapshot, a missing file, or one not owned by the caller or root, a
 * device the snapshot lacks or one of its own left out, a disk of
 * another size or written since, with the file and the fault in
 * hvm_last_error().
 */
HVM_API int hvm_vm_snapshot(struct hvm_vm *vm, const char *dir,
			    int stay_paused);
HVM_API struct hvm_vm *hvm_vm_restore(const struct hvm_config *cfg,
				      const char *dir);

/*
 * VM templates (docs/template.md): a snapshot of a VM booted until its
 * guest agent answers, kept under a key, the SHA-256 of what such a
 * guest's memory depends on: the contents of the kernel, initrd, agent
 * and the agent's initramfs, the options that shape the guest (cmdline,
 * cpus, mem, irqchip, console, rng, vsock), this hintvm's snapshot
 * formats and the host CPU (vendor, family, model, features). DIR is the
 * store (NULL: $HINTVM_TEMPLATE_DIR, else /var/cache/hintvm/templates
 * for root, else ~/.cache/hintvm/templates); the store, each template
 * and its files must be owned by root or the caller and writable by
 * nobody else, or they are refused (-EPERM, naming owner and mode).
 *
 * hvm_template_key: CFG's key into KEY (64 hex digits and a NUL).
 * hvm_template_make: make CFG's template unless the store has it: boot,
 * wait up to TIMEOUT_MS (<= 0: 60 s) for the agent's greeting on vsock
 * port 1024, snapshot, stop. CFG needs "agent" (or "vsock" with an agent
 * in the guest) and no disk, net, share, init-args or restore. Returns 1
 * when made, 0 when it was there, or -errno; its key into KEY.
 * hvm_template_restore: a clone of template KEY ("auto": CFG's key, the
 * template made first when missing), not started: the template's
 * devices and machine, CFG's identity (name, control, vsock cid= and
 * uds=, console fds, user, sandbox). A stale template is refused.
 * hvm_template_list: the store's templates, sorted by key, as a
 * malloc'ed array for hvm_template_list_free; a stale one (its key can
 * no longer match: another CPU or snapshot format, a kernel, initrd or
 * agent changed or gone) is removed on the way and listed with problem
 * and removed set; one refused (owner, mode, corrupt) with problem set.
 * hvm_template_drop: remove template KEY, or every one when KEY is NULL.
 */
struct hvm_template {
	char key[65];
	char *parts; /* the key's parts: "name=value" lines, as hashed */
	char *origin; /* where its files came from, when it was made */
	uint64_t disk_bytes; /* what its files take on disk */
	uint64_t mem_bytes; /* its guest RAM */
	char problem[512]; /* empty, or why it is not usable */
	int removed; /* stale, and removed by this listing */
};
HVM_API int hvm_template_dir(char *buf, size_t len);
HVM_API int hvm_template_key(const struct hvm_config *cfg, char key[65]);
HVM_API int hvm_template_make(const struct hvm_config *cfg, const char *dir,
			      int timeout_ms, char key[65]);
HVM_API struct hvm_vm *hvm_template_restore(const struct hvm_config *cfg,
					    const char *dir, const char *key);
HVM_API int hvm_template_list(const char *dir, struct hvm_template **list,
			      size_t *count);
HVM_API void hvm_template_list_free(struct hvm_template *list, size_t count);
HVM_API int hvm_template_drop(const char *dir, const char *key);

/* Stop the VM if it runs and free everything it holds. */
HVM_API void hvm_vm_destroy(struct hvm_vm *vm);

/*
 * The calling thread becomes the VM's --user (docs/sandbox.md), as every
 * thread of the VM does once it is set up: for an embedder's own thread
 * that serves the VM after setup (a signal relay), so that no thread of
 * the process stays root. Irreversible; 0 (also when the VM has no
 * --user) or -errno.
 */
HVM_API int hvm_vm_become_user(struct hvm_vm *vm);

/*
 * A client of the VM's vsock hybrid socket without its path (--vsock
 * cid=N[,uds=PATH], docs/virtio.md): a Unix stream socket on which the
 * caller writes "CONNECT <port>\n" and reads "OK <port>\n", then talks to
 * the guest's PORT. Works after the VM's --user took over, when PATH may
 * no longer be reachable. The fd (blocking, close-on-exec), or -errno
 * (-ENODEV: the VM has no vsock device).
 */
HVM_API int hvm_vm_vsock_connect(struct hvm_vm *vm);

/* ---- statistics (docs/sched.md) --------------------------------------- */

/*
 * The VM's exit, halt-poll and scheduling statistics as text: the
 * `--stats` table, or with JSON non-zero the `--stats-json` document.
 * Like snprintf: writes at most LEN bytes including the NUL and returns
 * the length the whole text needs (or a negative errno). Works while the
 * VM runs and after it ended, until hvm_vm_destroy().
 */
HVM_API int hvm_vm_stats(struct hvm_vm *vm, int json, char *buf, size_t len);

/*
 * One statistic by NAME: a per-vCPU name summed over all vCPUs ("exits",
 * "halt_successful_poll", "wait_ns", "hint_accepted", "hint_dropped", any
 * KVM vCPU statistic), "vcpuN.NAME" for one vCPU, or "vm.NAME"
 * ("vm.halt_poll_ns", "vm.commit", "vm.pv_enabled", any KVM VM
 * statistic; docs/sched.md lists them). Returns 0, or -ENOENT for an
 * unknown name.
 */
HVM_API int hvm_vm_stat(struct hvm_vm *vm, const char *name, uint64_t *value);

/* ---- names, the registry and the control socket ----------------------- */

/*
 * Every VM has a name (option "name", default "vm-PID") and, unless option
 * "control" is "none", a control socket registered under that name in the
 * runtime directory, so that `hintvm ctl NAME`, `hintvm ls` and other
 * programs find it. Protocol and directory: docs/control-socket.md.
 */

/* The VM's name. */
HVM_API const char *hvm_vm_name(struct hvm_vm *vm);

/*
 * Change a setting of a running VM: KEY is an option name that can change
 * at run time (`hintvm ctl --help` and docs/control-socket.md list them),
 * VALUE as on the command line. Returns 0; -ENOENT for a key no option has,
 * -EPERM for an option fixed once the VM exists, -EINVAL for a bad value.
 */
HVM_API int hvm_vm_set(struct hvm_vm *vm, const char *key, const char *value);

/*
 * The VM's effective configuration and identity (name, pid, state,
 * options as they are now) as one JSON object. Like snprintf: writes at
 * most LEN bytes including the NUL, returns the length the text needs.
 */
HVM_API int hvm_vm_info(struct hvm_vm *vm, char *buf, size_t len);

/*
 * Subscribe to the VM's events: returns a new file descriptor (close it
 * to unsubscribe) that becomes readable with one JSON object per line for
 * each event, as the control socket's "events" request delivers them. A
 * reader that falls behind loses the oldest events and is told how many;
 * it never slows the VM. Valid from hvm_vm_start() on; -EBUSY when too
 * many subscribers exist already.
 */
HVM_API int hvm_vm_event_fd(struct hvm_vm *vm);

/* The directory running VMs register in (not created). */
HVM_API int hvm_runtime_dir(char *buf, size_t len);

struct hvm_vm_entry {
	char name[65];
	char socket[108]; /* the registry entry: connect() to it */
};

/*
 * The VMs running on this host under this runtime directory, sorted by
 * name, as a malloc'ed array of *COUNT entries (free() it). Entries left
 * behind by VMs that died are removed on the way.
 */
HVM_API int hvm_list_vms(struct hvm_vm_entry **entries, size_t *count);

/*
 * Connect to the control socket of a running VM: NAME_OR_PATH is a VM
 * name or, when it contains a '/', a socket path. Returns the socket
 * (blocking, close-on-exec) or a negative errno.
 */
HVM_API int hvm_control_connect(const char *name_or_path);

/* ---- processes in a running guest (the guest agent) ------------------- */

/*
 * A VM booted with the guest agent (`hintvm run --agent`, or any guest
 * running guest-firmware/agent) runs processes on request, over vsock:
 * the protocol is docs/agent.md. Each stdio stream is a connection of its
 * own, handed to the caller as a file descriptor: read the output ones to
 * EOF, write the input one and close it (hvm_process_close_fd) for EOF.
 * A process that fills a pipe nobody reads waits, so read stdout and
 * stderr while waiting for the exit (poll them with hvm_process_event_fd).
 */
struct hvm_process;

/* hvm_process_spec.flags */
#define HVM_PROCESS_STDIN 0x1u /* attach stdin (else /dev/null) */
#define HVM_PROCESS_STDOUT 0x2u /* attach stdout (else /dev/null) */
#define HVM_PROCESS_STDERR 0x4u /* attach stderr (else /dev/null) */
#define HVM_PROCESS_TTY 0x8u /* one terminal instead of the three */
#define HVM_PROCESS_KEEP 0x10u /* keep running when the handle is freed */

enum hvm_stream {
	HVM_STREAM_STDIN = 0,
	HVM_STREAM_STDOUT = 1,
	HVM_STREAM_STDERR = 2,
	HVM_STREAM_TTY = 3, /* both directions of the terminal */
};

/*
 * What a started process is confined to (hvm_process_spec.limits). The
 * agent applies it between fork and exec, in runc's order: rlimits,
 * no_new_privs, the bounding set, the uid/gid switch keeping the
 * capabilities, then the effective/permitted/inheritable and ambient
 * sets, and the seccomp program last (before the switch when
 * no_new_privs is off: loading it then needs CAP_SYS_ADMIN).
 */
struct hvm_process_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard; /* UINT64_MAX: unlimited */
};

struct hvm_process_limits {
	const struct hvm_process_rlimit *rlimits;
	size_t nrlimits; /* at most 16, one per resource */
	int set_caps; /* 0: the capabilities stay as they are */
	/* bit N = capability N: bounding, effective, permitted,
	 * inheritable, ambient */
	uint64_t caps[5];
	int no_new_privs;
	/* A classic BPF program (struct sock_filter[]), at most 4096
	 * instructions, for the guest's architecture; NULL: none. */
	const void *seccomp;
	size_t seccomp_len; /* bytes */
};

struct hvm_process_spec {
	const char *const *argv; /* NULL-terminated; argv[0] searched in PATH */
	/* NULL-terminated "K=V" entries added to (or replacing entries of)
	 * the agent's default environment (PATH, HOME, TERM with a tty);
	 * NULL: the defaults alone. */
	const char *const *envp;
	const char *cwd; /* absolute; NULL: "/" */
	long long uid; /* -1: the agent's (root) */
	long long gid; /* -1: the agent's (root) */
	unsigned int flags; /* HVM_PROCESS_* */
	unsigned short rows, cols; /* terminal size with HVM_PROCESS_TTY */
	const struct hvm_process_limits *limits; /* NULL: none */
	/* The process's root in the guest, absolute, without "..": it runs
	 * in a mount namespace of its own with /proc mounted there, chrooted
	 * (a pod's container, docs/shim.md); NULL: the agent's root. */
	const char *root;
	/*
	 * The guest cgroup to run it in, by name (1 to 64 of
	 * [A-Za-z0-9_.+-], not starting with '.'): made on first use, as a
	 * pod container's own (docs/shim.md), with MEMORY_MAX (bytes) as
	 * its memory.max when not 0; later processes naming it join it.
	 * NULL: the agent's cgroup (MEMORY_MAX must be 0).
	 */
	const char *cgroup;
	unsigned long long memory_max;
	/*
	 * With CGROUP: HVM_PIDNS_NEW, a PID namespace of its own, named by
	 * CGROUP, whose PID 1 it is; HVM_PIDNS_JOIN, the one of that name
	 * (an exec into the container); 0: the guest's.
	 */
	unsigned int pidns;
};
#define HVM_PIDNS_NEW 1u
#define HVM_PIDNS_JOIN 2u

/*
 * Start SPEC's process in the guest of VM: a VM name (whose vsock socket
 * the registry reports) or the path of its vsock socket (`--vsock
 * uds=PATH`, when VM contains a '/'). Returns once the process runs, or
 * NULL: hvm_last_error() says why, hvm_process_errno() whether the
 * command itself could not be started.
 */
HVM_API struct hvm_process *
hvm_process_start(const char *vm, const struct hvm_process_spec *spec);

/*
 * Why the agent refused the last failed hvm_process_start() of this
 * thread: the errno of starting the command (ENOENT, EACCES, ...), or 0
 * when the failure was elsewhere (no VM, no agent, a broken connection).
 */
HVM_API int hvm_process_errno(void);

/*
 * The stream's file descriptor (a socket, blocking, close-on-exec), owned
 * by the handle; -EBADF when the stream was not attached or was closed.
 */
HVM_API int hvm_process_fd(struct hvm_process *p, enum hvm_stream stream);

/* Close a stream: for stdin, the process then reads EOF. */
HVM_API int hvm_process_close_fd(struct hvm_process *p, enum hvm_stream stream);

/* The process's pid inside the guest. */
HVM_API int hvm_process_pid(struct hvm_process *p);

/* Send signal SIG (1..64, the guest's numbers) to the process. */
HVM_API int hvm_process_signal(struct hvm_process *p, int sig);

/* Set the terminal's window size (HVM_PROCESS_TTY only). */
HVM_API int hvm_process_resize(struct hvm_process *p, unsigned short rows,
			       unsigned short cols);

/*
 * A file descriptor that becomes readable when the agent has something to
 * say about the process (its exit): poll it with the stream fds, then
 * call hvm_process_wait() with timeout 0. hvm_process_signal() and
 * hvm_process_resize() read the connection up to their reply and may take
 * in the exit on the way (it is kept, and the fd stays quiet): call
 * hvm_process_wait() with timeout 0 after them too.
 */
HVM_API int hvm_process_event_fd(struct hvm_process *p);

struct hvm_process_exit {
	int signaled; /* 1: killed by signal, 0: exited with code */
	int code; /* exit code, when !signaled */
	int signal; /* the signal, when signaled */
	int status; /* as a shell says it: code, or 128 + signal */
};

/*
 * Wait up to TIMEOUT_MS (-1: forever) for the process's exit. The agent
 * reports it once the process exited and its output streams are closed.
 * Returns 0 with EXIT filled, -ETIMEDOUT, or another negative errno
 * (-ECONNRESET: the guest or its agent went away).
 */
HVM_API int hvm_process_wait(struct hvm_process *p,
			     struct hvm_process_exit *exit, int timeout_ms);

/*
 * The agent's id of the process (its session), stable for the process's
 * life: another program (a later `runtime kill`, say) reaches a process
 * started with HVM_PROCESS_KEEP through hvm_process_attach().
 */
HVM_API unsigned int hvm_process_session(struct hvm_process *p);

/*
 * A handle on a process another handle started (with HVM_PROCESS_KEEP):
 * no streams, but hvm_process_pid, _signal, _resize, _event_fd and _wait
 * work, and the wait delivers its exit status (the agent keeps a KEEP
 * process's status until a wait collects it). NULL with -ESRCH in
 * hvm_last_error() when the agent has no such session.
 */
HVM_API struct hvm_process *hvm_process_attach(const char *vm,
					       unsigned int session);

/*
 * Close every stream and free the handle. A process still running is
 * killed (SIGKILL to its process group) unless it was started with
 * HVM_PROCESS_KEEP.
 */
HVM_API void hvm_process_free(struct hvm_process *p);

/*
 * A container VM's task as its own guest counts it (the cgroup
 * hintvm-oci-init puts the container's processes in), asked of the
 * guest agent. A number the guest could not read is
 * HVM_GUEST_STAT_UNKNOWN.
 */
#define HVM_GUEST_STAT_UNKNOWN UINT64_MAX
struct hvm_guest_stats {
	uint64_t cpu_usage_ns, cpu_user_ns, cpu_system_ns;
	uint64_t memory_usage; /* bytes */
	uint64_t memory_limit; /* bytes; the guest's RAM when unlimited */
	uint64_t pids_current;
	uint64_t pids_limit; /* 0: no limit */
	uint64_t oom_kills; /* processes the guest's OOM killer ended */
};

/*
 * Fill STATS for the VM VM (a name, or its vsock socket's path as for
 * hvm_process_start). 0, or a negative errno with hvm_last_error():
 * -ENOENT when the guest has no task cgroup (not a container VM, or a
 * guest kernel without cgroup v2).
 */
HVM_API int hvm_guest_stats(const char *vm, struct hvm_guest_stats *stats);
/*
 * The same for the guest cgroup CGROUP (hvm_process_spec's cgroup) rather
 * than the task's: -ENOENT when no process was started in it.
 */
HVM_API int hvm_guest_cgroup_stats(const char *vm, const char *cgroup,
				   struct hvm_guest_stats *stats);
/*
 * Change the limits of the guest cgroup CGROUP (a pod container's): its
 * memory.max to MEMORY_MAX bytes (0: unchanged) and, when CPU_PERIOD_US
 * is not 0, its cpu.max to CPU_QUOTA_US per CPU_PERIOD_US (a quota of 0:
 * no limit). 0, or a negative errno with hvm_last_error(): -ENOENT when
 * no process was started in it.
 */
HVM_API int hvm_guest_cgroup_set(const char *vm, const char *cgroup,
				 unsigned long long memory_max,
				 unsigned long long cpu_quota_us,
				 unsigned long long cpu_period_us);

/*
 * The guest agent's initramfs (a newc cpio): the agent built into this
 * library as /init, /dev/console, and the kernel modules the agent needs
 * (virtio transports, vsock, blk, net, ext4, erofs, overlay, 9p, with
 * their dependencies from MODULES_DIR/modules.dep; NULL: none), plus
 * FILES, NULL-terminated "SRC=DEST" entries (DEST relative). Written to
 * OUT atomically.
 */
HVM_API int hvm_initramfs_build(const char *modules_dir,
				const char *const *files, const char *out);

/*
 * The cached initramfs for KERNEL, built on first use: its modules come
 * from MODULES_DIR or, when NULL, /lib/modules/VERSION (the version read
 * from the kernel image). The cache is $HINTVM_CACHE_DIR, else
 * /var/cache/hintvm/initramfs for root, else ~/.cache/hintvm; the file's
 * path goes to PATH.
 */
HVM_API int hvm_initramfs_cached(const char *kernel, const char *modules_dir,
				 char *path, size_t len);

/* The release of a Linux kernel image ("6.1.0-27-amd64"), from its header. */
HVM_API int hvm_kernel_version(const char *kernel, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* HINTVM_H */
