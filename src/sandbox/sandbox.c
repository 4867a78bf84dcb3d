// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Confining hintvm's threads (sandbox.h, docs/sandbox.md).
 *
 * A forbidden system call traps (SECCOMP_RET_TRAP) rather than killing at
 * once (SECCOMP_RET_KILL_PROCESS): the kernel says nothing when it kills,
 * and whoever meets the death of a VM after adding a device deserves to
 * read which call, on which kind of thread, and which table to edit. The
 * SIGSYS handler writes that line with write(2) alone, then makes the same
 * call again: SIGSYS is blocked inside its own handler, so the kernel
 * resets it to its default action and the process dies by SIGSYS (with a
 * core dump where those are enabled) without the handler calling anything
 * the filter might refuse. A guest that gains control of a thread cannot
 * stop that second trap from killing the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/log.h"
#include "sandbox/identity.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

#define SANDBOX_TEST_ENV "HINTVM_TEST_SANDBOX_VIOLATION"
/* Covers every system call number of x86-64 and arm64 today. */
#define SYSCALL_NAMES 1024

static _Thread_local bool requested;
static _Thread_local int current_kind = -1;
static _Thread_local char current_thread_name[16];
/* Filled once by sandbox_prepare: the handler may not allocate. */
static const char *syscall_names[SYSCALL_NAMES];
static atomic_bool prepared;
static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;

const char *sandbox_kind_name(enum sandbox_kind kind)
{
	return kind < SANDBOX_NR_KINDS ? sandbox_kinds[kind].name : "?";
}

int sandbox_kind_by_name(const char *name)
{
	for (int k = 0; k < SANDBOX_NR_KINDS; k++) {
		if (!strcmp(sandbox_kinds[k].name, name))
			return k;
	}
	return -1;
}

void sandbox_set_requested(bool on)
{
	requested = on;
}

bool sandbox_requested(void)
{
	return requested;
}

/* ---- the SIGSYS reporter: write(2) only ---- */

struct line {
	char buf[400];
	size_t len;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_uint(struct line *l, unsigned long v)
{
	char digits[24];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof(digits));
	while (n && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = digits[--n];
}

static void put_hex(struct line *l, unsigned long v)
{
	char digits[16];
	int n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v && n < (int)sizeof(digits));
	put(l, "0x");
	while (n && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = digits[--n];
}

/*
 * The trapped call's second argument (an ioctl's request) from the
 * thread's saved registers: the one place the sandbox reads them, so the
 * two ABIs' register names stay here rather than in an arch directory.
 */
static unsigned long trapped_arg1(const void *ucontext)
{
	const ucontext_t *uc = ucontext;

#if defined(__x86_64__)
	return (unsigned long)uc->uc_mcontext.gregs[REG_RSI];
#elif defined(__aarch64__)
	return (unsigned long)uc->uc_mcontext.regs[1];
#else
	(void)uc;
	return 0;
#endif
}

static void sigsys_handler(int sig, siginfo_t *info, void *ucontext)
{
	int nr = info->si_syscall;
	const char *name = nr >= 0 && nr < SYSCALL_NAMES && syscall_names[nr]
				   ? syscall_names[nr]
				   : "an unknown system call";
	const char *kind =
		current_kind >= 0 ? sandbox_kind_name(current_kind) : NULL;
	struct line l = { .len = 0 };

	put(&l, "hintvm: sandbox: thread '");
	put(&l, current_thread_name[0] ? current_thread_name : "?");
	put(&l, "' (kind ");
	put(&l, kind ? kind : "main: inherited");
	put(&l, ") made the forbidden system call ");
	put(&l, name);
	put(&l, " (");
	put_uint(&l, (unsigned long)nr);
	if (nr == SYS_ioctl) {
		/* The table to edit is the kind's ioctl table. */
		put(&l, ", request ");
		put_hex(&l, trapped_arg1(ucontext) & 0xffffffffUL);
	}
	put(&l, "); killing hintvm. If the call is legitimate, add it to the ");
	put(&l, kind ? kind : "main");
	put(&l, nr == SYS_ioctl ? " ioctl table" : " table");
	put(&l,
	    " in src/sandbox/sandbox_rules.c (or run with --sandbox off to debug)\n");
	if (write(STDERR_FILENO, l.buf, l.len) < 0) {
		/* nothing left to tell anyone */
	}
	/* Trap again with SIGSYS blocked: the kernel kills us by SIGSYS. */
	syscall(nr, 0, 0, 0, 0, 0, 0);
	_exit(128 + SIGSYS); /* not reached */
}

/* ---- filters ---- */

/* -1: no such name on any architecture hintvm builds for (a typo). */
static int resolve(const char *name, bool *on_this_arch)
{
	int nr = seccomp_syscall_resolve_name(name);

	*on_this_arch = nr >= 0;
	if (nr >= 0)
		return nr;
	if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name) >= 0 ||
	    seccomp_syscall_resolve_name_arch(SCMP_ARCH_AARCH64, name) >= 0)
		return 0;
	return -1;
}

/* One rule per request of KIND's ioctl table (SANDBOX_IOCTLS). */
static int add_ioctl_rules(scmp_filter_ctx ctx,
			   const struct sandbox_kind_rules *kind, int nr)
{
	if (!kind->nr_ioctls)
		return hvm_set_error(
			-EINVAL,
			"sandbox: the %s table allows ioctl by request but has no ioctl table",
			kind->name);
	for (unsigned int i = 0; i < kind->nr_ioctls; i++) {
		const struct sandbox_ioctl *io = &kind->ioctls[i];
		/* The kernel reads cmd as an unsigned int: so does the filter. */
		int r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, nr, 1,
			SCMP_A1(SCMP_CMP_MASKED_EQ, io->mask & 0xffffffffUL,
				io->value & io->mask & 0xffffffffUL));

		if (r < 0 && r != -EEXIST)
			return hvm_set_error(
				r, "sandbox: %s table, ioctl %s: %s",
				kind->name, io->name, strerror(-r));
	}
	return 0;
}

static int add_rule(scmp_filter_ctx ctx, const struct sandbox_kind_rules *kind,
		    const struct sandbox_rule *rule)
{
	bool here;
	int nr = resolve(rule->syscall, &here), r;

	if (nr < 0)
		return hvm_set_error(
			-EINVAL,
			"sandbox: the %s table names '%s', which is no system call",
			kind->name, rule->syscall);
	if (!here)
		return 0;
	switch (rule->check) {
	case SANDBOX_IOCTLS:
		return add_ioctl_rules(ctx, kind, nr);
	case SANDBOX_NO_EXEC:
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
		break;
	case SANDBOX_READ_ONLY_OPEN:
		/* The flags: open(path, flags), openat(dirfd, path, flags). */
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, nr, 1,
			SCMP_CMP(strcmp(rule->syscall, "open") ? 2 : 1,
				 SCMP_CMP_MASKED_EQ,
				 O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND, 0));
		break;
	case SANDBOX_THREAD_CLONE:
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD,
					     CLONE_THREAD));
		break;
	case SANDBOX_UNIX_SOCKET:
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				     SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0));
		break;
	case SANDBOX_LSAN_TRACER:
		/* StopTheWorld's thread: shares memory, no CLONE_THREAD. */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				     SCMP_A0(SCMP_CMP_EQ,
					     CLONE_VM | CLONE_FS | CLONE_FILES |
						     CLONE_UNTRACED,
					     0));
		break;
	case SANDBOX_ENOSYS:
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
		break;
	default:
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		break;
	}
	/* -EEXIST: also listed unconditionally (main's openat): fine. */
	if (r < 0 && r != -EEXIST)
		return hvm_set_error(r, "sandbox: %s table, rule for %s: %s",
				     kind->name, rule->syscall, strerror(-r));
	return 0;
}

static int build_filter(enum sandbox_kind kind, scmp_filter_ctx *out)
{
	const struct sandbox_kind_rules *k = &sandbox_kinds[kind];
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int r = 0;

	if (!ctx)
		return hvm_set_error(-ENOMEM, "sandbox: seccomp_init failed");
	/* Another ABI (x32, 32-bit compat) is no call hintvm makes. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			     SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		r = hvm_set_error(r,
				  "sandbox: the %s filter's bad-ABI action: %s",
				  k->name, strerror(-r));
	for (unsigned int i = 0; !r && i < sandbox_nr_common_rules; i++)
		r = add_rule(ctx, k, &sandbox_common_rules[i]);
	for (unsigned int i = 0; !r && i < sandbox_nr_sanitizer_rules; i++)
		r = add_rule(ctx, k, &sandbox_sanitizer_rules[i]);
	for (unsigned int i = 0; !r && i < k->nr_rules; i++)
		r = add_rule(ctx, k, &k->rules[i]);
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	*out = ctx;
	return 0;
}

bool sandbox_supported(void)
{
	static const uint32_t actions[] = { SECCOMP_RET_TRAP,
					    SECCOMP_RET_KILL_PROCESS };

	for (unsigned int i = 0; i < sizeof(actions) / sizeof(actions[0]);
	     i++) {
		if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0,
			    &actions[i]) < 0) {
			hvm_set_errno_error(
				"sandbox: this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER) with the actions hintvm needs");
			return false;
		}
	}
	return true;
}

int sandbox_prepare(void)
{
	struct sigaction sa = { .sa_sigaction = sigsys_handler,
				.sa_flags = SA_SIGINFO };
	struct rlimit nice;
	int r = 0;

	pthread_mutex_lock(&prepare_lock);
	if (atomic_load(&prepared))
		goto out;
	if (!sandbox_supported()) {
		r = -EOPNOTSUPP;
		goto out;
	}
	for (int k = 0; !r && k < SANDBOX_NR_KINDS; k++) {
		scmp_filter_ctx ctx;

		r = build_filter((enum sandbox_kind)k, &ctx);
		if (!r)
			seccomp_release(ctx);
	}
	if (r < 0)
		goto out;
	for (int nr = 0; nr < SYSCALL_NAMES; nr++)
		syscall_names[nr] =
			seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	landlock_probe(); /* none, or too old: seccomp alone (logged) */
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		r = hvm_set_errno_error("sandbox: SIGSYS handler");
		goto out;
	}
	/*
	 * Boosting a vCPU lowers its nice value, which after the drop of
	 * CAP_SYS_NICE only RLIMIT_NICE allows: 40 lets a thread go down to
	 * nice -20 and grants nothing else. Unprivileged: stays as it is.
	 */
	if (!getrlimit(RLIMIT_NICE, &nice) && nice.rlim_cur < 40) {
		nice.rlim_cur = 40;
		if (nice.rlim_max < 40)
			nice.rlim_max = 40;
		if (setrlimit(RLIMIT_NICE, &nice) < 0)
			pr_debug(
				"sandbox: RLIMIT_NICE stays (%s): vCPU boosts need it",
				strerror(errno));
	}
	atomic_store(&prepared, true);
out:
	pthread_mutex_unlock(&prepare_lock);
	return r;
}

/*
 * The bounding set first, on its own: it takes CAP_SETPCAP, which a
 * thread that became another user (identity.h) no longer has. KEEP (bit
 * N: capability N) stays.
 */
static void drop_bounding_set(uint64_t keep)
{
	/* Without CAP_SETPCAP (already unprivileged) EPERM: nothing to drop. */
	for (unsigned long cap = 0; cap < 64; cap++) {
		if (keep & (1ull << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	}
}

/*
 * This thread's capabilities, bounding and ambient sets: all gone but
 * KEEP (bit N: capability N), which stays permitted and effective.
 */
static int drop_capabilities(uint64_t keep)
{
	struct __user_cap_header_struct header = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	drop_bounding_set(keep);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return hvm_set_errno_error(
			"sandbox: clearing ambient capabilities");
	memset(data, 0, sizeof(data));
	for (unsigned int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		data[i].permitted = (uint32_t)(keep >> (32 * i));
		data[i].effective = data[i].permitted;
	}
	if (syscall(SYS_capset, &header, data) < 0)
		return hvm_set_errno_error("sandbox: capset");
	return 0;
}

int sandbox_become_vm_user(void)
{
	if (requested)
		drop_bounding_set(0);
	return identity_thread_enter();
}

static int confine(enum sandbox_kind kind)
{
	scmp_filter_ctx ctx;
	sigset_t sys;
	int r;

	if (!atomic_load(&prepared))
		return hvm_set_error(
			-EINVAL, "sandbox: sandbox_prepare() was not called");
	r = build_filter(kind, &ctx);
	if (r < 0)
		return r;
	r = drop_capabilities(sandbox_kinds[kind].keep_caps);
	if (!r && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = hvm_set_errno_error("sandbox: no_new_privs");
	/* After no_new_privs (its condition), before seccomp (no landlock_*
	 * in any table). */
	if (!r)
		r = landlock_thread_enter(kind);
	if (!r) {
		/* Name and kind first: the reporter reads them. */
		if (prctl(PR_GET_NAME, current_thread_name, 0, 0, 0) < 0)
			current_thread_name[0] = '\0';
		current_kind = (int)kind;
		/* A blocked SIGSYS would kill without the report. */
		sigemptyset(&sys);
		sigaddset(&sys, SIGSYS);
		pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
		r = seccomp_load(ctx);
		if (r < 0)
			r = hvm_set_error(
				r, "sandbox: loading the %s filter: %s",
				sandbox_kind_name(kind), strerror(-r));
	}
	seccomp_release(ctx);
	return r;
}

/*
 * Test hook KIND:OP=TARGET (tests/cli/sandbox-test.sh): what an attacker
 * who owns a thread of KIND would try, once confined: read, write or
 * unlink a file, connect to a Unix socket, signal a process. The outcome
 * goes to stderr; a call the filter forbids kills by SIGSYS instead.
 */
static void test_attack(enum sandbox_kind kind, const char *op)
{
	const char *target = strchr(op, '=');
	size_t len = target ? (size_t)(target - op) : 0;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t alen = sizeof(sun);
	char line[512];
	long r = -1;
	int fd, n;

	if (!target++)
		return;
	errno = EINVAL;
	if (len == 4 && !strncmp(op, "read", 4)) {
		r = syscall(SYS_openat, AT_FDCWD, target, O_RDONLY | O_CLOEXEC);
	} else if (len == 5 && !strncmp(op, "write", 5)) {
		r = syscall(SYS_openat, AT_FDCWD, target, O_WRONLY | O_CLOEXEC);
	} else if (len == 6 && !strncmp(op, "unlink", 6)) {
		r = syscall(SYS_unlinkat, AT_FDCWD, target, 0);
	} else if (len == 7 && !strncmp(op, "connect", 7)) {
		fd = (int)syscall(SYS_socket, AF_UNIX,
				  SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", target);
		/* @NAME: the abstract socket NAME (its address has no NUL). */
		if (target[0] == '@') {
			sun.sun_path[0] = '\0';
			alen = offsetof(struct sockaddr_un, sun_path) +
			       strnlen(target, sizeof(sun.sun_path) - 1);
		}
		r = fd < 0 ? -1 : syscall(SYS_connect, fd, &sun, alen);
	} else if (len == 4 && !strncmp(op, "kill", 4)) {
		r = syscall(SYS_kill, atoi(target), 0);
	}
	/* Not dprintf(): its stream seeks, which no filter allows. */
	n = snprintf(line, sizeof(line), "sandbox-probe %s %.*s %s: %s\n",
		     sandbox_kind_name(kind), (int)len, op, target,
		     r >= 0 ? "succeeded" : strerror(errno));
	if (n > 0 &&
	    write(STDERR_FILENO, line,
		  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1))
		return;
}

/*
 * Test hooks (tests/cli/sandbox-test.sh), KIND[:what], run once a thread
 * or process of KIND is confined: a call no kind allows; an attacker's
 * TIOCSTI on stderr (the user's terminal, where the typed bytes would
 * reach the user's shell), as is and with bits above the 32 the kernel
 * reads set in the request; Landlock probes; test_attack's attacks.
 */
static void test_hooks(enum sandbox_kind kind)
{
	const char *test = getenv(SANDBOX_TEST_ENV);
	size_t name_len = strlen(sandbox_kind_name(kind));

	if (!test || strncmp(test, sandbox_kind_name(kind), name_len))
		return;
	if (!test[name_len])
		syscall(SYS_personality, 0xffffffffUL);
	else if (!strcmp(test + name_len, ":tiocsti"))
		syscall(SYS_ioctl, STDERR_FILENO, (unsigned long)TIOCSTI, "#");
	else if (!strcmp(test + name_len, ":tiocsti-high"))
		syscall(SYS_ioctl, STDERR_FILENO,
			(unsigned long)TIOCSTI | (1UL << 32), "#");
	else if (!strcmp(test + name_len, ":landlock"))
		landlock_test_probe(kind);
	else if (test[name_len] == ':')
		test_attack(kind, test + name_len + 1);
}

void sandbox_thread_enter(enum sandbox_kind kind)
{
	if (sandbox_become_vm_user() < 0) {
		pr_err("%s; a %s thread that stays root must not run",
		       hvm_error_message(), sandbox_kind_name(kind));
		abort();
	}
	if (!requested)
		return;
	if (confine(kind) < 0) {
		/* The filters were built once by sandbox_prepare: a bug. */
		pr_err("%s; a %s thread that cannot confine itself must not run",
		       hvm_error_message(), sandbox_kind_name(kind));
		abort();
	}
	test_hooks(kind);
}

int sandbox_process_enter(enum sandbox_kind kind)
{
	int r;

	if (requested) {
		r = confine(kind);
		if (!r)
			test_hooks(kind);
		return r;
	}
	r = drop_capabilities(sandbox_kinds[kind].keep_caps);
	if (!r && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = hvm_set_errno_error("sandbox: no_new_privs");
	return r;
}
