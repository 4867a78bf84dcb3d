// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Landlock per thread kind (landlock.h, docs/sandbox.md), with the raw
 * system calls: liblandlock is no dependency of ours, and the three calls
 * are simple. The build host's <linux/landlock.h> may predate the rights
 * the running kernel offers, so the ones newer than ABI 1 are defined
 * here when it lacks them: they are kernel ABI, fixed forever.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "sandbox/landlock.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif
/*
 * Erratum 2 (fixed in the ABI 6 kernels that report it): before the fix,
 * a scoped thread could not signal a thread of its own process in another
 * domain, and every hintvm thread has a domain of its own (kicking a vCPU
 * is a SIGUSR1 from another thread).
 */
#define ERRATUM_SIGNAL_SAME_PROCESS (1U << (2 - 1))

/* The attribute as ABI 6 knows it; older kernels get a shorter size. */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed)); /* as struct landlock_path_beneath_attr */

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* Rights a rule on a file (not a directory) may carry. */
#define FS_FILE                                                       \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/*
 * 9P2000.L's file operations (p9_fs.c): no exec, no device nodes, FIFOs
 * or sockets (its table has no mknodat), no device ioctls. REFER: a
 * rename or link between two directories of the share.
 */
#define FS_SHARE                                                        \
	(FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |                      \
	 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_REMOVE_DIR |  \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SYM |    \
	 LANDLOCK_ACCESS_FS_REFER)

static const uint64_t grant_access[] = {
	[SANDBOX_GRANT_READ] = FS_READ,
	[SANDBOX_GRANT_CREATE] = LANDLOCK_ACCESS_FS_MAKE_REG |
				 LANDLOCK_ACCESS_FS_WRITE_FILE |
				 LANDLOCK_ACCESS_FS_TRUNCATE,
	[SANDBOX_GRANT_REMOVE] = LANDLOCK_ACCESS_FS_REMOVE_FILE,
	[SANDBOX_GRANT_SHARE] = FS_SHARE,
	[SANDBOX_GRANT_SHARE_RO] = FS_READ,
};

/*
 * What each kind opens after it confined itself, found in its code:
 *  - /proc, read: every kind that injects interrupts may boost the target
 *    vCPU and reads /proc/self/task/TID/stat (sched/boost.c); a vCPU
 *    reads its own schedstat as it exits, the brain its threads', the
 *    host's CPU pressure and its cgroup (sched/observe.c). A magic link
 *    below /proc (/proc/self/root/..., /proc/self/fd/N) is checked at
 *    its target, outside /proc, and other processes' files need ptrace
 *    access, which Landlock refuses across domains.
 *  - /sys/fs/cgroup, read: the brain's cpu.stat and cpuset (observe.c).
 *  - /dev/null, read: the control socket's spare descriptor, reopened
 *    after an accept at the file limit (base/accept.c).
 * Kinds not listed open nothing: their domain refuses every open.
 */
struct builtin_grant {
	const char *path;
	enum sandbox_grant what;
};

#define PROC                                \
	{                                   \
		"/proc", SANDBOX_GRANT_READ \
	}
static const struct builtin_grant builtin[SANDBOX_NR_KINDS][3] = {
	[SANDBOX_MAIN] = { PROC },
	[SANDBOX_VCPU] = { PROC },
	[SANDBOX_EVENT_LOOP] = { PROC },
	[SANDBOX_CONSOLE_IN] = { PROC },
	[SANDBOX_CONTROL] = { PROC, { "/dev/null", SANDBOX_GRANT_READ } },
	[SANDBOX_BRAIN] = { PROC, { "/sys/fs/cgroup", SANDBOX_GRANT_READ } },
	[SANDBOX_9P_WORKER] = { PROC },
};

#define MAX_GRANTS 8
struct grant {
	int fd;
	enum sandbox_grant what;
};
static _Thread_local struct grant grants[MAX_GRANTS];
static _Thread_local unsigned int nr_grants;

/* Written once by landlock_probe() (under sandbox_prepare's lock). */
static int abi;
static unsigned int errata;

int landlock_probe(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);
	long e;

	if (v < 0) {
		/* ENOSYS: not built; EOPNOTSUPP: not in the lsm= list. */
		pr_debug(
			"sandbox: no Landlock on this kernel (%s): paths and sockets are left to seccomp, the user and --jail",
			strerror(errno));
		abi = 0;
		return 0;
	}
	if (v < 2) {
		/*
		 * ABI 1 refuses every rename or link between directories
		 * (REFER cannot be granted), which would break 9P shares.
		 */
		pr_debug(
			"sandbox: Landlock ABI %ld is too old (2 needed for renames): not used",
			v);
		abi = 0;
		return 0;
	}
	e = syscall(SYS_landlock_create_ruleset, NULL, 0,
		    LANDLOCK_CREATE_RULESET_ERRATA);
	errata = e < 0 ? 0 : (unsigned int)e; /* before 6.15: no errata */
	abi = (int)v;
	pr_debug("sandbox: Landlock ABI %d (errata 0x%x): per-thread file%s%s",
		 abi, errata, abi >= 4 ? ", TCP" : "",
		 abi >= 6 ? (landlock_scopes_signals()
				     ? ", abstract socket and signal scopes"
				     : ", abstract socket scope")
			  : "");
	return abi;
}

int landlock_abi(void)
{
	return abi;
}

bool landlock_scopes_signals(void)
{
	return abi >= 6 && (errata & ERRATUM_SIGNAL_SAME_PROCESS);
}

static uint64_t handled_fs(void)
{
	/* ABI 1 and 2: EXECUTE (bit 0) up to REFER (bit 13). */
	uint64_t fs = (LANDLOCK_ACCESS_FS_REFER << 1) - 1;

	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	/*
	 * ABI 9's LANDLOCK_ACCESS_FS_RESOLVE_UNIX (connect to a path
	 * socket) is not handled yet: vsock's hybrid socket connects to
	 * PATH_port on the event loop and would need its rule.
	 */
	return fs;
}

int sandbox_grant_beneath(int fd, enum sandbox_grant what)
{
	int dup;

	if (!sandbox_requested() || !abi)
		return 0;
	if (nr_grants == MAX_GRANTS)
		return hvm_set_error(-ENOSPC, "sandbox: more than %d grants",
				     MAX_GRANTS);
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0)
		return hvm_set_errno_error("sandbox: a grant's descriptor");
	grants[nr_grants++] = (struct grant){ dup, what };
	return 0;
}

int sandbox_grant_path(const char *path, enum sandbox_grant what)
{
	int fd, r;

	if (!sandbox_requested() || !abi)
		return 0;
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return hvm_set_errno_error("sandbox: granting %s", path);
	r = sandbox_grant_beneath(fd, what);
	close(fd);
	return r;
}

int sandbox_grant_parent(const char *path, enum sandbox_grant what)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!slash)
		return sandbox_grant_path(".", what);
	if (slash == path)
		return sandbox_grant_path("/", what);
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return sandbox_grant_path(dir, what);
}

static int add_rule(int ruleset, int fd, enum sandbox_grant what,
		    const char *name, enum sandbox_kind kind)
{
	struct path_beneath pb = { .allowed_access =
					   grant_access[what] & handled_fs(),
				   .parent_fd = fd };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return hvm_set_errno_error("sandbox: %s", name);
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= FS_FILE;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
		    &pb, 0) < 0)
		return hvm_set_errno_error(
			"sandbox: the %s Landlock rule for %s",
			sandbox_kind_name(kind), name);
	return 0;
}

static void drop_grants(void)
{
	for (unsigned int i = 0; i < nr_grants; i++)
		close(grants[i].fd);
	nr_grants = 0;
}

/*
 * A rule the kernel refuses (a grant on a pipe, say: --stats-json
 * /dev/stdout) leaves the thread stricter, never looser: said, not fatal.
 */
static void add_or_warn(int ruleset, int fd, enum sandbox_grant what,
			const char *name, enum sandbox_kind kind)
{
	if (add_rule(ruleset, fd, what, name, kind) < 0)
		pr_warn("%s; the %s threads will be refused it",
			hvm_error_message(), sandbox_kind_name(kind));
}

static int build_and_restrict(int ruleset, enum sandbox_kind kind)
{
	for (unsigned int i = 0; i < 3 && builtin[kind][i].path; i++) {
		const struct builtin_grant *g = &builtin[kind][i];
		int fd = open(g->path, O_PATH | O_CLOEXEC);

		if (fd < 0)
			continue; /* not here (a jail without it): nothing to allow */
		add_or_warn(ruleset, fd, g->what, g->path, kind);
		close(fd);
	}
	for (unsigned int i = 0; i < nr_grants; i++)
		add_or_warn(ruleset, grants[i].fd, grants[i].what,
			    "a granted path", kind);
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return hvm_set_errno_error(
			"sandbox: landlock_restrict_self (%s)",
			sandbox_kind_name(kind));
	return 0;
}

int landlock_thread_enter(enum sandbox_kind kind)
{
	struct ruleset_attr attr = { .handled_access_fs = handled_fs() };
	size_t size = offsetof(struct ruleset_attr, handled_access_net);
	int ruleset, r;

	if (!abi) {
		drop_grants();
		return 0;
	}
	/* No kind makes TCP connections: handled, with no rule. */
	if (abi >= 4) {
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
					  LANDLOCK_ACCESS_NET_CONNECT_TCP;
		size = offsetof(struct ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
		if (landlock_scopes_signals())
			attr.scoped |= LANDLOCK_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset < 0) {
		drop_grants();
		return hvm_set_errno_error("sandbox: the %s Landlock ruleset",
					   sandbox_kind_name(kind));
	}
	r = build_and_restrict(ruleset, kind);
	close(ruleset);
	drop_grants();
	return r;
}

/* ---- the test hook's probe (sandbox-test.sh) ---- */

/* Whether KIND's seccomp table lets NAME through (else it would trap). */
static bool kind_allows(enum sandbox_kind kind, const char *name)
{
	const struct sandbox_kind_rules *k = &sandbox_kinds[kind];

	for (unsigned int i = 0; i < sandbox_nr_common_rules; i++) {
		if (!strcmp(sandbox_common_rules[i].syscall, name))
			return true;
	}
	for (unsigned int i = 0; i < k->nr_rules; i++) {
		if (!strcmp(k->rules[i].syscall, name))
			return true;
	}
	return false;
}

static const char *outcome(long r, int err)
{
	static _Thread_local char other[24];

	if (r >= 0)
		return "ok";
	if (err == EACCES)
		return "EACCES";
	if (err == EPERM)
		return "EPERM";
	snprintf(other, sizeof(other), "errno%d", err);
	return other;
}

/* open(PATH) read-only, as a compromised thread of KIND would try. */
static const char *try_open(enum sandbox_kind kind, const char *path)
{
	long fd;

	if (!path || !*path)
		return "-";
	if (!kind_allows(kind, "openat"))
		return "seccomp";
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close((int)fd);
	return outcome(fd, errno);
}

/* connect() to the abstract Unix socket NAME (without its leading NUL). */
static const char *try_abstract(enum sandbox_kind kind, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = name ? strlen(name) : 0;
	const char *res;
	long fd, r;

	if (!len || len >= sizeof(sa.sun_path) - 1)
		return "-";
	if (!kind_allows(kind, "socket") || !kind_allows(kind, "connect"))
		return "seccomp";
	memcpy(sa.sun_path + 1, name, len);
	fd = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return outcome(fd, errno);
	r = syscall(
		SYS_connect, fd, &sa,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
	res = outcome(r, errno);
	close((int)fd);
	return res;
}

/* Signal 0 (nothing delivered, every check made) to process PID. */
static const char *try_signal(enum sandbox_kind kind, const char *pid)
{
	long p = pid ? strtol(pid, NULL, 10) : 0, r;

	if (p <= 0)
		return "-";
	if (!kind_allows(kind, "tgkill"))
		return "seccomp";
	r = syscall(SYS_tgkill, p, p, 0);
	return outcome(r, errno); /* errno read after the call */
}

void landlock_test_probe(enum sandbox_kind kind)
{
	char line[512];
	int n;

	/* Each outcome() is copied before the next call reuses its buffer. */
	n = snprintf(line, sizeof(line),
		     "hintvm: landlock probe: kind %s abi %d",
		     sandbox_kind_name(kind), abi);
	n += snprintf(line + n, sizeof(line) - (size_t)n, " outside=%s",
		      try_open(kind, getenv("HINTVM_TEST_LANDLOCK_OUTSIDE")));
	n += snprintf(line + n, sizeof(line) - (size_t)n, " inside=%s",
		      try_open(kind, getenv("HINTVM_TEST_LANDLOCK_INSIDE")));
	n += snprintf(
		line + n, sizeof(line) - (size_t)n, " abstract=%s",
		try_abstract(kind, getenv("HINTVM_TEST_LANDLOCK_ABSTRACT")));
	n += snprintf(line + n, sizeof(line) - (size_t)n, " signal=%s\n",
		      try_signal(kind, getenv("HINTVM_TEST_LANDLOCK_PEER")));
	if (write(STDERR_FILENO, line, strlen(line)) < 0) {
		/* the test sees the line missing */
	}
}
