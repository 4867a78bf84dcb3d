// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --jail DIR and --cgroup PATH (hvm_jail() in hintvm.h, docs/sandbox.md);
 * Firecracker's jailer is the anchor, done in-process: the caller, still
 * single-threaded, moves a child into new mount, PID and IPC namespaces
 * rooted at DIR with rlimits and waits for it, relaying the signals that
 * stop a VM; the child creates and runs the VM as if nothing had happened.
 *
 * Inside DIR, before pivot_root: the KVM device and (with --net)
 * /dev/net/tun are bind-mounted in at their own paths, a fresh proc is
 * mounted on DIR/proc (the scheduling brain reads /proc/self/task) and
 * DIR/run is created for the control socket's runtime directory. Every
 * other file the VM opens (kernel, initrd, images, share directories)
 * must already be in DIR, and is named by its path inside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "core/config.h"

#define OLD_ROOT ".hintvm-old-root"

/* Write our (or PID's) number into the cgroup at PATH. */
static int join_cgroup(const char *path, pid_t pid)
{
	char file[4096], num[24];
	int fd, n;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return hvm_set_errno_error("--cgroup %s: cannot open %s", path,
					   file);
	n = snprintf(num, sizeof(num), "%d\n", (int)pid);
	if (write(fd, num, (size_t)n) != n) {
		int r = hvm_set_errno_error("--cgroup %s: cannot join it",
					    path);

		close(fd);
		return r;
	}
	close(fd);
	return 0;
}

/* mkdir -p for the directories of DIR + PATH (PATH absolute). */
static int make_parents(const char *dir, const char *path)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s%s", dir, path);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return hvm_set_error(-ENAMETOOLONG, "--jail: %s%s is too long",
				     dir, path);
	for (char *p = buf + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return hvm_set_errno_error("--jail: cannot create %s",
						   buf);
		*p = '/';
	}
	return 0;
}

/* Bind-mount the host's SRC onto DIR + SRC (a file made for it). */
static int bind_into(const char *dir, const char *src)
{
	char dst[4096];
	int fd, r;

	r = make_parents(dir, src);
	if (r < 0)
		return r;
	snprintf(dst, sizeof(dst), "%s%s", dir, src);
	fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	else if (errno != EEXIST && errno != EISDIR && errno != ENXIO &&
		 errno != EACCES && errno != ENODEV)
		return hvm_set_errno_error("--jail: cannot create %s", dst);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return hvm_set_errno_error("--jail: cannot bind %s into %s",
					   src, dir);
	return 0;
}

/* A ceiling: lowers both limits to VALUE, never raises a stricter one. */
static int set_limit(int resource, uint64_t value, const char *what)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0)
		return hvm_set_errno_error("--jail: %s limit", what);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < value)
		value = rl.rlim_max;
	rl.rlim_cur = rl.rlim_max = value;
	if (setrlimit(resource, &rl) < 0)
		return hvm_set_errno_error("--jail: %s limit %llu", what,
					   (unsigned long long)value);
	return 0;
}

/* In the child: the namespaces, DIR as /, the rlimits. */
static int enter(const struct hvm_config *cfg)
{
	const char *dir = cfg->jail_dir;
	char path[4096];
	int r;

	if (unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
		return hvm_set_errno_error(
			"--jail: new mount and IPC namespaces");
	/* Nothing mounted here may reach the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return hvm_set_errno_error("--jail: making mounts private");
	/* pivot_root wants the new root to be a mount point. */
	if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hvm_set_errno_error("--jail: %s", dir);
	r = bind_into(dir, cfg->kvm_path ? cfg->kvm_path : "/dev/kvm");
	if (!r && cfg->nr_nets)
		r = bind_into(dir, "/dev/net/tun");
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/proc", dir);
	if (mkdir(path, 0555) < 0 && errno != EEXIST)
		return hvm_set_errno_error("--jail: cannot create %s", path);
	if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return hvm_set_errno_error("--jail: mounting proc on %s", path);
	snprintf(path, sizeof(path), "%s/run", dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return hvm_set_errno_error("--jail: cannot create %s", path);
	snprintf(path, sizeof(path), "%s/" OLD_ROOT, dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return hvm_set_errno_error("--jail: cannot create %s", path);
	if (chdir(dir) < 0 || syscall(SYS_pivot_root, ".", OLD_ROOT) < 0)
		return hvm_set_errno_error("--jail: pivot_root into %s", dir);
	if (chdir("/") < 0 || umount2("/" OLD_ROOT, MNT_DETACH) < 0)
		return hvm_set_errno_error("--jail: detaching the old root");
	rmdir("/" OLD_ROOT);
	r = set_limit(RLIMIT_NOFILE, cfg->jail_nofile, "open-file");
	if (!r)
		r = set_limit(RLIMIT_MEMLOCK, cfg->jail_memlock,
			      "locked-memory");
	return r;
}

/*
 * In the parent: wait for the child, passing on SIGINT, SIGTERM and SIGHUP
 * (the ones that stop a VM); its exit status, as a shell reports it.
 */
static int supervise(pid_t child)
{
	sigset_t set;
	int sfd, pfd, status = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	pfd = (int)syscall(SYS_pidfd_open, child, 0);
	for (;;) {
		struct pollfd fds[2] = { { .fd = pfd, .events = POLLIN },
					 { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (pfd < 0 || sfd < 0) {
			waitpid(child, &status,
				0); /* no relay, at least wait */
			break;
		}
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si))
			kill(child, (int)si.ssi_signo);
		if (fds[0].revents) {
			waitpid(child, &status, 0);
			break;
		}
	}
	if (sfd >= 0)
		close(sfd);
	if (pfd >= 0)
		close(pfd);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int hvm_jail(const struct hvm_config *cfg, int *status)
{
	int sync[2], own_pid_ns;
	pid_t child;
	char go = 0;
	int r;

	if (!cfg || !status)
		return hvm_set_error(-EINVAL, "hvm_jail: no config");
	if (!cfg->jail_dir)
		return cfg->cgroup_path
			       ? join_cgroup(cfg->cgroup_path, getpid())
			       : 0;
	own_pid_ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (own_pid_ns < 0)
		return hvm_set_errno_error("--jail: /proc/self/ns/pid");
	if (pipe2(sync, O_CLOEXEC) < 0) {
		close(own_pid_ns);
		return hvm_set_errno_error("--jail: pipe");
	}
	/* The next child is PID 1 of a namespace of its own. */
	if (unshare(CLONE_NEWPID) < 0) {
		close(own_pid_ns);
		close(sync[0]);
		close(sync[1]);
		return hvm_set_errno_error("--jail: new PID namespace");
	}
	child = fork();
	/*
	 * Only that one: once it exits, the namespace is gone and every later
	 * fork of ours would fail with ENOMEM (LeakSanitizer's at our exit).
	 */
	if (child != 0 && setns(own_pid_ns, CLONE_NEWPID) < 0)
		log_msg(LOG_WARN, "--jail: back to our PID namespace: %s",
			strerror(errno));
	close(own_pid_ns);
	if (child < 0) {
		close(sync[0]);
		close(sync[1]);
		return hvm_set_errno_error("--jail: fork");
	}
	if (child == 0) {
		close(sync[1]);
		/* In the cgroup before anything is allocated. */
		if (read(sync[0], &go, 1) != 1 || go != 1)
			_exit(HVM_STATUS_USAGE); /* the parent said why */
		close(sync[0]);
		r = enter(cfg);
		if (r < 0)
			return r;
		*status = 0;
		return 0;
	}
	close(sync[0]);
	r = cfg->cgroup_path ? join_cgroup(cfg->cgroup_path, child) : 0;
	go = r < 0 ? 0 : 1;
	if (write(sync[1], &go, 1) != 1 && r == 0)
		r = hvm_set_errno_error("--jail: starting the jailed process");
	close(sync[1]);
	*status = supervise(child);
	if (r < 0)
		return r;
	return 1;
}
