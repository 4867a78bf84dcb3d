// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * THE allow-lists of the sandbox: one table per kind of thread, and the
 * common rules every kind gets. Edit here, and only here, when
 *   - a device or subsystem makes a system call on a thread that did not
 *     make it before (the SIGSYS report names the call and the kind, i.e.
 *     the table below to add it to);
 *   - a new kind of thread appears: add an enum sandbox_kind value
 *     (sandbox.h), a table here, and call sandbox_thread_enter(KIND) as
 *     the thread's first act (after it names itself). A thread started
 *     later by an already confined thread runs under its creator's filter
 *     too (filters stack; the strictest answer wins), so its calls must be
 *     in both tables.
 * Names are libseccomp's (the kernel's); a name the architecture lacks
 * (open, poll on arm64) is skipped, so list both flavours where glibc may
 * use either. Measured with `strace -ff` on the kvm, cli and e2e
 * workloads, both irqchip modes, every device and control request.
 *
 * ioctl is filtered by request (SANDBOX_IOCTLS and the ioctl tables below):
 * no kind may push input into a terminal (TIOCSTI), reconfigure a tap or
 * a disk, or make any request its table does not name. A new request on a
 * thread adds it to that kind's table; the SIGSYS report names the request.
 *
 * io_uring operations are not system calls: seccomp never sees what the
 * event loop's ring does. The ring is restricted to its opcodes instead
 * (allowed_ops in event_loop.c): a new event_loop_* helper adds its
 * opcode there.
 */
#include <linux/capability.h>
#include <linux/if_tun.h>
#include <stddef.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "sandbox/sandbox.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ANY(name)                      \
	{                              \
		name, SANDBOX_ANY_ARGS \
	}

/* One rule per line, so that merges of additions stay trivial. */
/* clang-format off */

/* Thread life (exit, stacks freed), malloc, locks, clocks, log lines. */
const struct sandbox_rule sandbox_common_rules[] = {
	ANY("futex"),
	ANY("exit"),
	ANY("exit_group"),
	ANY("write"), /* log lines to stderr, eventfd doorbells */
	ANY("close"),
	ANY("rt_sigprocmask"),
	ANY("rt_sigreturn"),
	ANY("restart_syscall"),
	ANY("madvise"),
	{ "mmap", SANDBOX_NO_EXEC },
	{ "mprotect", SANDBOX_NO_EXEC },
	ANY("munmap"),
	ANY("mremap"),
	ANY("brk"),
	ANY("clock_gettime"),
	ANY("clock_nanosleep"),
	ANY("nanosleep"),
	ANY("gettid"),
	ANY("getpid"),
	ANY("tgkill"), /* kicking a vCPU (SIGUSR1), abort() */
	ANY("sched_yield"),
	ANY("getrandom"),
	ANY("fstat"),
	ANY("newfstatat"),
};
const unsigned int sandbox_nr_common_rules = N(sandbox_common_rules);

/*
 * Sanitizer builds only (CI's build-asan runs every suite under the real
 * filters, so a call the filters forget shows there too). Each was made by
 * the runtimes themselves, found by running the ASan build sandboxed:
 */
const struct sandbox_rule sandbox_sanitizer_rules[] = {
	ANY("sigaltstack"), /* ASan: each thread's signal stack, set and freed */
	/* ASan's pthread_create on an already confined thread (file-server) */
	ANY("sched_getaffinity"),
	/* LeakSanitizer at exit: a tracer stops every thread with ptrace */
	{ "clone", SANDBOX_LSAN_TRACER },
	ANY("ptrace"),
	ANY("wait4"),
	ANY("prctl"), /* PR_SET_PTRACER, PR_SET_PDEATHSIG */
	ANY("getppid"),
	ANY("rt_sigaction"),
	/* /proc/PID/task, /proc/self/maps: sanitizer_common calls open */
	{ "open", SANDBOX_READ_ONLY_OPEN },
	{ "openat", SANDBOX_READ_ONLY_OPEN },
	ANY("read"),
	ANY("getdents"), /* x86-64: sanitizer_common lists threads with it */
	ANY("getdents64"),
	ANY("readlink"), /* reports: /proc/self/exe names the binary */
	ANY("readlinkat"),
	ANY("lseek"), /* rewinding /proc/PID/task between passes */
};
const unsigned int sandbox_nr_sanitizer_rules =
	SANDBOX_SANITIZED ? N(sandbox_sanitizer_rules) : 0;

/*
 * Injecting an interrupt (KVM_SIGNAL_MSI, KVM_IRQ_LINE) lets the brain
 * boost the target vCPU from the injecting thread: it reads the target's
 * /proc/self/task/TID/stat and changes its nice value.
 */
#define INJECT_RULES \
	{ "ioctl", SANDBOX_IOCTLS }, \
	ANY("getpriority"), \
	ANY("setpriority"), \
	{ "openat", SANDBOX_READ_ONLY_OPEN }, \
	ANY("read"), \
	ANY("io_uring_enter") /* work handed to the event loop */

static const struct sandbox_rule main_rules[] = {
	INJECT_RULES,
	/* hvm_vm_wait/destroy: teardown, the registry, --stats-json */
	ANY("openat"), /* --stats-json is created at exit */
	ANY("unlink"),
	ANY("unlinkat"),
	ANY("fcntl"),
	ANY("flock"),
	ANY("fsync"), /* disk images at a clean exit */
	ANY("fdatasync"),
	ANY("lseek"),
	ANY("pread64"),
	ANY("poll"),
	ANY("ppoll"),
	ANY("sched_getaffinity"),
	ANY("sched_setaffinity"),
	ANY("rt_sigaction"),
	ANY("dup"),
	ANY("dup3"),
	/* Threads it creates after hvm_vm_start (the CLI's signal watcher). */
	{ "clone", SANDBOX_THREAD_CLONE },
	{ "clone3", SANDBOX_ENOSYS },
	ANY("set_robust_list"),
	ANY("rseq"),
	ANY("prctl"), /* pthread_setname_np */
	/* a share's file-server process (p9_file_server.c): ended, reaped */
	ANY("shutdown"),
	ANY("pidfd_send_signal"),
	ANY("waitid"),
};

static const struct sandbox_rule vcpu_rules[] = {
	INJECT_RULES,
	ANY("pread64"),
	ANY("sched_getaffinity"),
	ANY("sched_setaffinity"),
};

static const struct sandbox_rule event_loop_rules[] = {
	INJECT_RULES,
	ANY("readv"), /* virtio-net: the tap */
	ANY("writev"),
	ANY("timerfd_settime"), /* --disk/--net rate limits, vsock deadlines */
	/*
	 * virtio-vsock's hybrid host side: Unix sockets only (a guest
	 * connection dials PATH_port), its epoll set, in-process services
	 * on a socketpair.
	 */
	{ "socket", SANDBOX_UNIX_SOCKET },
	{ "socketpair", SANDBOX_UNIX_SOCKET },
	ANY("connect"),
	ANY("accept4"),
	ANY("sendmsg"),
	ANY("sendto"),
	ANY("recvmsg"),
	ANY("recvfrom"),
	ANY("shutdown"),
	ANY("epoll_ctl"),
	ANY("epoll_wait"),
	ANY("epoll_pwait"),
	ANY("fcntl"),
};

static const struct sandbox_rule console_in_rules[] = {
	INJECT_RULES,
	ANY("poll"),
	ANY("ppoll"),
};

static const struct sandbox_rule console_out_rules[] = {
	ANY("poll"),
	ANY("ppoll"),
};

static const struct sandbox_rule control_rules[] = {
	INJECT_RULES,
	ANY("poll"),
	ANY("ppoll"),
	ANY("accept4"),
	ANY("recvfrom"),
	ANY("recvmsg"),
	ANY("sendto"),
	ANY("sendmsg"),
	ANY("getsockopt"), /* SO_PEERCRED */
	ANY("geteuid"), /* ... compared with the VM's own user */
	ANY("fcntl"),
	ANY("pread64"), /* KVM binary statistics */
	ANY("sched_getaffinity"),
	ANY("sched_setaffinity"),
	/*
	 * `snapshot` (docs/snapshot.md): into the two files its client
	 * passed (SCM_RIGHTS), never a path.
	 */
	ANY("pwrite64"),
	ANY("ftruncate"),
	ANY("fdatasync"),
};

static const struct sandbox_rule brain_rules[] = {
	INJECT_RULES,
	ANY("pread64"), /* KVM binary statistics */
	ANY("lseek"),
	ANY("sched_getaffinity"),
	ANY("sched_setaffinity"),
	ANY("poll"),
	ANY("ppoll"),
};

static const struct sandbox_rule rr_partner_rules[] = {
	ANY("read"),
	ANY("poll"),
	ANY("ppoll"),
};

/*
 * virtio-9p: every file operation of a 9P2000.L server, confined to the
 * share by openat2(RESOLVE_BENEATH) in p9_fs.c (seccomp cannot read the
 * path or the how struct, so openat2 is allowed whole). The reply's
 * interrupt is INJECT_RULES.
 */
#define P9_FS_RULES \
	ANY("openat2"), \
	ANY("openat"), /* the fd walk where openat2 is missing (p9_fs.c) */ \
	ANY("getdents64"), \
	ANY("fcntl"), \
	ANY("lseek"), \
	ANY("pread64"), \
	ANY("pwrite64"), \
	ANY("ftruncate"), \
	ANY("fsync"), \
	ANY("fdatasync"), \
	ANY("fchmod"), \
	ANY("fstatfs"), \
	ANY("utimensat"), \
	ANY("mkdirat"), \
	ANY("symlinkat"), \
	ANY("linkat"), \
	ANY("unlinkat"), \
	ANY("renameat"), \
	ANY("renameat2"), /* arm64 has no renameat */ \
	ANY("readlinkat"), \
	ANY("fgetxattr"), \
	ANY("fsetxattr"), \
	ANY("flistxattr"), \
	ANY("fremovexattr")

static const struct sandbox_rule p9_worker_rules[] = {
	INJECT_RULES,
	P9_FS_RULES,
	/* server=process: the T-message out to the file server (MSG_NOSIGNAL) */
	ANY("sendto"),
};

/*
 * The share's file-server process (p9_file_server.c, server=process): the
 * same file operations on its own threads, one per worker's socket; no
 * ioctl at all (it never sees KVM), no socket it did not inherit.
 */
static const struct sandbox_rule file_server_rules[] = {
	P9_FS_RULES,
	ANY("read"), /* a T-message from the VMM */
	ANY("sendto"), /* the R-message back (MSG_NOSIGNAL) */
	/* one thread per socket, started after the filter is loaded */
	{ "clone", SANDBOX_THREAD_CLONE },
	{ "clone3", SANDBOX_ENOSYS },
	ANY("set_robust_list"),
	ANY("rseq"),
};

/*
 * --agent's exit-report reader (agent/agent_host.c): fds from its pipe,
 * one poll over them and the pending connections, recv and the OK.
 */
static const struct sandbox_rule agent_status_rules[] = {
	ANY("read"),
	ANY("poll"),
	ANY("ppoll"),
	ANY("recvfrom"),
	ANY("sendto"),
};

/* The main process's stdio copiers (agent/agent_stdio.c): read, poll, write. */
static const struct sandbox_rule agent_stdio_rules[] = {
	ANY("read"),
	ANY("poll"),
	ANY("ppoll"),
};

/* ---- ioctl requests, per kind (SANDBOX_IOCTLS) ---- */

#define IOCTL(req) { #req, (unsigned long)(req), 0xffffffffUL }
#define IOCTL_TYPE(type) { #type " (every request of the type)", \
			   (unsigned long)(type) << _IOC_TYPESHIFT, \
			   0xffUL << _IOC_TYPESHIFT }

/*
 * The caller's thread tears the VM down and may create the next one (an
 * embedder's loop): any KVM request. The CLI restores its terminal at
 * exit, from whichever thread calls exit().
 */
static const struct sandbox_ioctl main_ioctls[] = {
	IOCTL_TYPE(KVMIO),
	IOCTL(TCGETS), /* isatty, tcgetattr */
	IOCTL(TCSETS), /* tcsetattr: TCSANOW */
	IOCTL(TCSETSW), /* TCSADRAIN */
	IOCTL(TCSETSF), /* TCSAFLUSH */
	IOCTL(TIOCGWINSZ),
};

/*
 * KVM_RUN and what an exit's handling asks of KVM (registers on arm64's
 * PSCI CPU_ON and resets, interrupts, ioeventfds), and the tap's offloads,
 * which virtio-net sets when the guest driver starts the device (an MMIO
 * write, handled on the vCPU thread).
 */
static const struct sandbox_ioctl vcpu_ioctls[] = {
	IOCTL_TYPE(KVMIO),
	IOCTL(TUNSETOFFLOAD),
};

/*
 * Device backends, the console's input, 9P replies: raising a guest
 * interrupt (INJECT_RULES) and nothing else.
 */
static const struct sandbox_ioctl inject_ioctls[] = {
	IOCTL(KVM_SIGNAL_MSI), /* x86 split irqchip, virtio MSI-X */
	IOCTL(KVM_IRQ_LINE), /* the in-kernel irqchip, the GIC's SPIs */
};

/*
 * The brain and the control socket's `set`: halt polling
 * (KVM_ENABLE_CAP), the kernel series' controls (KVM_SET/GET/
 * HAS_DEVICE_ATTR, KVM_YIELD_TO_VCPU, KVM_CHECK_EXTENSION), statistics.
 */
static const struct sandbox_ioctl sched_ioctls[] = {
	IOCTL_TYPE(KVMIO),
};

#define KIND(name, table) { name, table, N(table), NULL, 0, 0 }
#define KIND_IOCTLS(name, table, ioctls) \
	{ name, table, N(table), ioctls, N(ioctls), 0 }
#define CAP(c) (1ull << (c))

const struct sandbox_kind_rules sandbox_kinds[SANDBOX_NR_KINDS] = {
	[SANDBOX_MAIN] = KIND_IOCTLS("main", main_rules, main_ioctls),
	[SANDBOX_VCPU] = KIND_IOCTLS("vcpu", vcpu_rules, vcpu_ioctls),
	[SANDBOX_EVENT_LOOP] = KIND_IOCTLS("event-loop", event_loop_rules,
					   inject_ioctls),
	[SANDBOX_CONSOLE_IN] = KIND_IOCTLS("console-in", console_in_rules,
					   inject_ioctls),
	[SANDBOX_CONSOLE_OUT] = KIND("console-out", console_out_rules),
	[SANDBOX_CONTROL] = KIND_IOCTLS("control", control_rules, sched_ioctls),
	[SANDBOX_BRAIN] = KIND_IOCTLS("brain", brain_rules, sched_ioctls),
	[SANDBOX_RR_PARTNER] = KIND("rr-partner", rr_partner_rules),
	[SANDBOX_9P_WORKER] = KIND_IOCTLS("9p-worker", p9_worker_rules,
					  inject_ioctls),
	[SANDBOX_AGENT_STATUS] = KIND("agent-status", agent_status_rules),
	[SANDBOX_AGENT_STDIO] = KIND("agent-stdio", agent_stdio_rules),
	/*
	 * The one kind that keeps capabilities: root's view of a share
	 * (docs/shares.md, server=process). p9_fs.c never chowns and never
	 * makes device nodes (CAP_CHOWN, CAP_MKNOD) and strips set-id bits
	 * itself (CAP_FSETID); CAP_DAC_READ_SEARCH is left out on purpose:
	 * it grants open_by_handle_at, the classic way out of a chroot.
	 */
	[SANDBOX_FILE_SERVER] = { "file-server", file_server_rules,
				  N(file_server_rules), NULL, 0,
				  CAP(CAP_DAC_OVERRIDE) | CAP(CAP_FOWNER) },
};
/* clang-format on */
