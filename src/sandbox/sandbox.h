/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox (docs/sandbox.md): with the `sandbox` option on, every thread
 * a VM starts confines itself as its first act, each with the seccomp
 * filter of its kind of thread, and drops its capabilities and sets
 * no_new_privs. Seccomp filters, capabilities and no_new_privs are all per
 * thread: nothing here touches a thread that did not ask, which is what
 * lets the library leave an embedder's own threads alone.
 *
 * The allow-list of each kind is one table in src/sandbox/sandbox_rules.c:
 * a new kind of thread, or a device that makes a new system call, adds it
 * there and nowhere else.
 */
#ifndef HVM_SANDBOX_SANDBOX_H
#define HVM_SANDBOX_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

struct hvm_config;

/* Every kind of thread hintvm runs; each has its own allow-list. */
enum sandbox_kind {
	/*
	 * The thread that called hvm_vm_start() (and waits, prints the
	 * statistics and tears down), and the threads it creates afterwards
	 * (the CLI's signal watcher), which inherit its filter.
	 */
	SANDBOX_MAIN,
	SANDBOX_VCPU, /* KVM_RUN and the exits it hands to devices */
	SANDBOX_EVENT_LOOP, /* io_uring device backends (hvm-virtio) */
	SANDBOX_CONSOLE_IN, /* reads stdin into the guest console */
	SANDBOX_CONSOLE_OUT, /* drains guest output to stdout */
	SANDBOX_CONTROL, /* the control socket */
	SANDBOX_BRAIN, /* the scheduling brain (hintvm-sched) */
	SANDBOX_RR_PARTNER, /* the rr benchmark's partner (bench/) */
	SANDBOX_9P_WORKER, /* virtio-9p's file system workers (hvm-9p) */
	SANDBOX_AGENT_STATUS, /* --agent: the guest's exit report (hvm-agent) */
	SANDBOX_AGENT_STDIO, /* the agent's main process's stdio (hvm-stdio) */
	SANDBOX_FILE_SERVER, /* a share's file-server process (hvm-9p-server) */
	SANDBOX_NR_KINDS
};

/* "vcpu", "event-loop", ... as the SIGSYS report and the docs name them. */
const char *sandbox_kind_name(enum sandbox_kind kind);

/* A kind by name; -1 when there is none. */
int sandbox_kind_by_name(const char *name);

/*
 * Whether threads created from this thread confine themselves. Per
 * thread, like the log level: the builder sets it for the length of each
 * hvm_vm_* call from the VM's `sandbox` option, and vm_thread_create() (thread.h)
 * hands it to the new thread.
 */
void sandbox_set_requested(bool on);
bool sandbox_requested(void);

/*
 * Process-wide preparation, on the thread that creates a VM with the
 * sandbox on, before any of its threads exist: the SIGSYS reporter, the
 * table of system call names it prints, RLIMIT_NICE raised so that
 * boosting a vCPU (src/sched) needs no CAP_SYS_NICE after the drop, and a
 * check that every kind's filter can be built. Returns 0 or -errno.
 */
int sandbox_prepare(void);

/*
 * Whether this kernel can load hintvm's filters (seccomp filters with the
 * TRAP and KILL_PROCESS actions); when not, false with the reason recorded
 * (hvm_error_message()).
 */
bool sandbox_supported(void);

/*
 * On the calling thread: become the VM's user (identity.h, --user) when
 * one is requested, the bounding set dropped first where the sandbox is
 * on. sandbox_thread_enter() does it first; the thread that builds the
 * VM calls it before the vCPUs start. 0 or -errno (hvm_error_message()).
 */
int sandbox_become_vm_user(void);

/*
 * On the calling thread, when sandbox_requested(): drop every capability
 * (and the bounding and ambient sets), set no_new_privs, unblock SIGSYS and
 * load KIND's filter. A forbidden system call then traps: the reporter
 * writes which call and which kind of thread, and the process dies by
 * SIGSYS. A thread that cannot confine itself must not run: a failure
 * (the filters were already built once by sandbox_prepare) is logged and
 * aborts the process.
 */
void sandbox_thread_enter(enum sandbox_kind kind);

/*
 * For a process hintvm forked (a share's file server) while it has one
 * thread: keep only KIND's keep_caps (the bounding set too), set
 * no_new_privs, and, when sandbox_requested(), load KIND's filter, which
 * the threads it starts afterwards inherit. Unlike sandbox_thread_enter
 * the capabilities go whatever the sandbox setting: they are what the
 * process is for. 0 or -errno with the reason recorded.
 */
int sandbox_process_enter(enum sandbox_kind kind);

/* ---- the allow-lists (sandbox_rules.c) ---- */

/* What a rule lets through besides the system call's number. */
enum sandbox_arg_check {
	SANDBOX_ANY_ARGS,
	SANDBOX_NO_EXEC, /* mmap/mprotect: PROT_EXEC clear in arg 2 */
	SANDBOX_READ_ONLY_OPEN, /* openat: no write, create or truncate */
	SANDBOX_THREAD_CLONE, /* clone: CLONE_THREAD set (no new process) */
	SANDBOX_ENOSYS, /* fails with ENOSYS (clone3: glibc uses clone) */
	SANDBOX_UNIX_SOCKET, /* socket/socketpair: AF_UNIX only (arg 0) */
	SANDBOX_LSAN_TRACER, /* clone: exactly LeakSanitizer's tracer's flags */
	SANDBOX_IOCTLS, /* ioctl: only the kind's requests (its ioctl table) */
};

struct sandbox_rule {
	const char *syscall; /* libseccomp's name; absent on an arch: skipped */
	enum sandbox_arg_check check;
};

/*
 * An ioctl request a kind may make: (request & mask) == value, compared on
 * the low 32 bits only, which are all the kernel reads (its cmd is an
 * unsigned int), so that high bits cannot smuggle a request past the
 * filter. mask 0xffffffff: one request; 0xff00: every request of one
 * ioctl type (KVMIO: a KVM fd's).
 */
struct sandbox_ioctl {
	const char *name;
	unsigned long value;
	unsigned long mask;
};

struct sandbox_kind_rules {
	const char *name;
	const struct sandbox_rule *rules;
	unsigned int nr_rules;
	const struct sandbox_ioctl *ioctls; /* for SANDBOX_IOCTLS */
	unsigned int nr_ioctls;
	uint64_t keep_caps; /* bit N: capability N stays; 0 for threads */
};

/* Rules every kind gets (thread exit, memory, locks, logging). */
extern const struct sandbox_rule sandbox_common_rules[];
extern const unsigned int sandbox_nr_common_rules;
/*
 * Sanitizer builds: what the ASan/UBSan/LeakSanitizer runtimes call on any
 * thread (sandbox_nr_sanitizer_rules is 0 in other builds).
 */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_SANITIZED 1
#endif
#endif
#ifndef SANDBOX_SANITIZED
#define SANDBOX_SANITIZED 0
#endif
extern const struct sandbox_rule sandbox_sanitizer_rules[];
extern const unsigned int sandbox_nr_sanitizer_rules;
/* Indexed by enum sandbox_kind. */
extern const struct sandbox_kind_rules sandbox_kinds[SANDBOX_NR_KINDS];

#endif
