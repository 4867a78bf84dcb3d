// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --jail DIR and --cgroup PATH (hvm_jail() in hintvm.h, docs/sandbox.md);
 * Firecracker's jailer is the anchor, done in-process: the caller, still
 * single-threaded, moves a child into new user, mount, PID, IPC and
 * network namespaces rooted at DIR with rlimits and waits for it, relaying
 * the signals that stop a VM; the child creates and runs the VM as if
 * nothing had happened.
 *
 * First, in the host's network namespace, every --net tap is attached
 * (the devices take those descriptors); then the mount and IPC namespaces.
 * Inside DIR, before pivot_root: the KVM device is bind-mounted in at its
 * own path, a fresh proc is mounted on DIR/proc (the scheduling brain
 * reads /proc/self/task) and DIR/run/hintvm is created, the VM's uid's,
 * for the control socket. Every other file the VM opens (kernel, initrd,
 * images, share directories) must already be in DIR, and is named by its
 * path inside it.
 *
 * Last, still one thread and still host root: /dev/kvm is opened and the
 * VM created (vm_open_kvm_early), the groups dropped, and the child
 * unshares a user namespace with the network namespace, whose root the
 * parent maps to the VM's uid and gid alone (one line each, setgroups
 * denied). From then on the child's root is that uid on the host: a
 * capability it holds or regains acts on nothing the host owns.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "core/config.h"
#include "core/vm.h"
#include "devices/virtio/virtio_net.h"
#include "sandbox/identity.h"
#include "vmm/vm_user.h"

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

/*
 * DIR is prepared by whoever runs the VM, maybe with help: nothing in
 * it is trusted. Every path the jail makes inside it is walked one
 * component at a time with openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH),
 * so a symlink planted in DIR (dev -> /etc) is refused instead of
 * followed out to the host, where this root process would create files
 * and directories; the mounts then go onto the opened descriptor
 * (/proc/self/fd/N), never onto a path that could change under us.
 */
static int open_beneath(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH |
			   RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

/*
 * The directory DIR + PATH's parent, made where missing, as an O_PATH
 * descriptor; *LEAF points at PATH's last component. -errno with the
 * reason set (a symlink on the way: ELOOP, named).
 */
static int dir_beneath(int root, const char *dir, const char *name,
		       mode_t mode);

static int open_parent(int root, const char *dir, const char *path,
		       const char **leaf)
{
	char comp[256], shown[4096];
	const char *p = path;
	int fd = dup(root);

	if (fd < 0)
		return hvm_set_errno_error("--jail: dup");
	while (*p == '/')
		p++;
	for (const char *slash; (slash = strchr(p, '/'));) {
		size_t n = (size_t)(slash - p);
		int next;

		if (n >= sizeof(comp)) {
			close(fd);
			return hvm_set_error(-ENAMETOOLONG,
					     "--jail: a name in %s is too long",
					     path);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		/* Errors name DIR and the path so far, this name included. */
		snprintf(shown, sizeof(shown), "%s%.*s", dir, (int)(p - path),
			 path);
		if (shown[strlen(shown) - 1] == '/')
			shown[strlen(shown) - 1] = '\0';
		next = dir_beneath(fd, shown, comp, 0755);
		close(fd);
		if (next < 0)
			return next;
		fd = next;
		p = slash + 1;
		while (*p == '/')
			p++;
	}
	*leaf = p;
	return fd;
}

/* Mount SRC (FSTYPE, FLAGS, DATA) onto what FD refers to. */
static int mount_onto(const char *src, int fd, const char *fstype,
		      unsigned long flags, const char *data)
{
	char target[64];

	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	return mount(src, target, fstype, flags, data);
}

/* Bind-mount the host's SRC onto DIR + SRC (a file made for it). */
static int bind_into(int root, const char *dir, const char *src)
{
	const char *leaf = NULL;
	int parent = open_parent(root, dir, src, &leaf), fd, r = 0;

	if (parent < 0)
		return parent;
	fd = open_beneath(parent, leaf, O_PATH, 0);
	if (fd < 0 && errno == ENOENT) {
		/* The mount point: an empty file, never through a link. */
		fd = open_beneath(parent, leaf, O_WRONLY | O_CREAT | O_EXCL,
				  0600);
		if (fd >= 0) {
			close(fd);
			fd = open_beneath(parent, leaf, O_PATH, 0);
		}
	}
	close(parent);
	/* O_PATH | O_NOFOLLOW opens a symlink itself: refuse it too. */
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
			close(fd);
			fd = -1;
			errno = ELOOP;
		}
	}
	if (fd < 0)
		return hvm_set_errno_error(
			"--jail: cannot make the mount point %s%s (a symlink is not followed out of the jail)",
			dir, src);
	if (mount_onto(src, fd, NULL, MS_BIND, NULL) < 0)
		r = hvm_set_errno_error("--jail: cannot bind %s into %s", src,
					dir);
	close(fd);
	return r;
}

/* DIR/NAME: a directory of DIR's own (made with MODE when missing). */
static int dir_beneath(int root, const char *dir, const char *name, mode_t mode)
{
	int fd;

	if (mkdirat(root, name, mode) < 0 && errno != EEXIST)
		return hvm_set_errno_error("--jail: cannot create %s/%s", dir,
					   name);
	fd = open_beneath(root, name, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return hvm_set_errno_error(
			"--jail: %s/%s is not a directory of DIR's own (a symlink is not followed out of the jail)",
			dir, name);
	return fd;
}

/* DIR/NAME made (with MODE) or found: a directory of DIR's own. */
static int make_dir(int root, const char *dir, const char *name, mode_t mode)
{
	int fd = dir_beneath(root, dir, name, mode);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * A fresh proc of the jail's PID namespace on DIR/proc: only its own
 * processes, other users' hidden (hidepid), and /proc/sys read-only, so
 * that even a thread that regained root could not retune the host's
 * kernel from inside.
 */
static int mount_proc(int root, const char *dir)
{
	int fd = dir_beneath(root, dir, "proc", 0555), sys, r = 0;

	if (fd < 0)
		return fd;
	if (mount_onto("proc", fd, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		       "hidepid=invisible") < 0 &&
	    mount_onto("proc", fd, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		       "hidepid=2") < 0)
		r = hvm_set_errno_error("--jail: mounting proc on %s/proc",
					dir);
	close(fd);
	if (r < 0)
		return r;
	/*
	 * The new proc: reopen it (the lookup now lands on the mount), bind
	 * its sys onto itself, then reopen sys (now the bind mount's root)
	 * and make that read-only.
	 */
	fd = dir_beneath(root, dir, "proc", 0555);
	if (fd < 0)
		return fd;
	sys = openat(fd, "sys", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sys >= 0) {
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", sys);
		if (mount(self, self, NULL, MS_BIND | MS_REC, NULL) < 0)
			r = -1;
		close(sys);
		sys = r ? -1
			: openat(fd, "sys",
				 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	close(fd);
	if (sys < 0 || mount_onto(NULL, sys, NULL,
				  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
					  MS_NODEV | MS_NOEXEC,
				  NULL) < 0)
		r = hvm_set_errno_error("--jail: making %s/proc/sys read-only",
					dir);
	if (sys >= 0)
		close(sys);
	return r;
}

/* RLIMIT_NICE 40 (nice down to -20); a failure costs only the boosts. */
static void raise_nice_limit(void)
{
	struct rlimit nice;

	if (getrlimit(RLIMIT_NICE, &nice) < 0 || nice.rlim_cur >= 40)
		return;
	nice.rlim_cur = 40;
	if (nice.rlim_max < 40)
		nice.rlim_max = 40;
	if (setrlimit(RLIMIT_NICE, &nice) < 0)
		pr_debug("--jail: RLIMIT_NICE stays (%s): vCPU boosts need it",
			 strerror(errno));
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

/*
 * DIR/run (root's) and DIR/run/hintvm, the control socket's runtime
 * directory inside: the VM's uid's, mode 0700, for a VMM that is that uid
 * in its user namespace (one from an earlier VM of another uid too). Its
 * descriptor goes to *RUNTIME, to give it back to root if the namespace
 * cannot be had.
 */
static int make_runtime_dir(int root, const char *dir,
			    const struct vm_identity *id, int *runtime)
{
	char self[64], shown[4096];
	int run = dir_beneath(root, dir, "run", 0755), fd;

	*runtime = -1;
	if (run < 0)
		return run;
	if (!id->set) {
		close(run);
		return 0;
	}
	snprintf(shown, sizeof(shown), "%s/run", dir);
	fd = dir_beneath(run, shown, "hintvm", 0700);
	close(run);
	if (fd < 0)
		return fd;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (fchownat(fd, "", id->uid, id->gid, AT_EMPTY_PATH) < 0 ||
	    chmod(self, 0700) < 0) {
		close(fd);
		return hvm_set_errno_error(
			"--jail: giving %s/run/hintvm to uid %u", dir, id->uid);
	}
	*runtime = fd;
	return 0;
}

/* A one-byte message on the parent's socket; 0, or -1 when it is gone. */
static int tell(int sock, char what)
{
	return write(sock, &what, 1) == 1 ? 0 : -1;
}

static char hear(int sock)
{
	char what = 0;

	return read(sock, &what, 1) == 1 ? what : 0;
}

enum { USERNS_NONE = 1, USERNS_MADE = 2, USERNS_MAPPED = 3 };

/*
 * The user namespace, with the network namespace: the process becomes its
 * root, which the parent maps to ID's uid and gid on SOCK. A kernel
 * without user namespaces for us (CONFIG_USER_NS off, a zero
 * user.max_user_namespaces) keeps the jail of before, a network namespace
 * and the per-thread uid switch, and says so. *MADE: whether it was made.
 */
static int enter_userns(const struct vm_identity *id, int sock, bool *made)
{
	struct vm_identity inside = *id;

	*made = false;
	/* The host's groups (root's) would stay: the namespace denies
	 * setgroups. */
	if (setgroups(0, NULL) < 0)
		return hvm_set_errno_error("--jail: dropping the groups");
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
		int err = errno;

		if (err != EINVAL && err != ENOSPC && err != EPERM &&
		    err != EUSERS)
			return hvm_set_errno_error(
				"--jail: new user and network namespaces");
		pr_warn("--jail: no user namespace (%s; see /proc/sys/user/max_user_namespaces): the jailed VMM is host root until its threads become uid %u",
			strerror(err), id->uid);
		if (tell(sock, USERNS_NONE) < 0)
			return hvm_set_errno_error(
				"--jail: telling the parent");
		if (unshare(CLONE_NEWNET) < 0)
			return hvm_set_errno_error(
				"--jail: new network namespace");
		return 0;
	}
	if (tell(sock, USERNS_MADE) < 0 || hear(sock) != USERNS_MAPPED)
		return hvm_set_error(-EPERM,
				     "--jail: the parent could not map uid %u",
				     id->uid);
	if (identity_userns_enter() < 0)
		return -EPERM;
	/* Its threads are that root already: no switch, no groups. */
	inside.uid = 0;
	inside.gid = 0;
	inside.userns = true;
	vm_user_preset(&inside);
	*made = true;
	return 0;
}

/*
 * DIR becomes the root of a VMM that is ID's uid: unless that uid may
 * search it, nothing in the jail can be reached by path (/proc for the
 * scheduling brain, /run/hintvm for the control socket, the shares).
 */
static int check_enterable(int root, const char *dir,
			   const struct vm_identity *id)
{
	struct stat st;

	if (!id->set)
		return 0;
	if (fstat(root, &st) < 0)
		return hvm_set_errno_error("--jail: %s", dir);
	if ((st.st_mode & S_IXOTH) ||
	    (st.st_uid == id->uid && (st.st_mode & S_IXUSR)) ||
	    (st.st_gid == id->gid && (st.st_mode & S_IXGRP)))
		return 0;
	return hvm_set_error(
		-EACCES,
		"--jail %s: mode %04o, owner %u: the VM's uid %u cannot enter it, and it is the jail's root (give others search permission: chmod o+x, e.g. 0711)",
		dir, (unsigned int)(st.st_mode & 07777),
		(unsigned int)st.st_uid, (unsigned int)id->uid);
}

/*
 * The VM's images, kernel and initrd, opened by host root as the VM will
 * ask for them (virtio_blk.c, base/file.c): a root-owned image in DIR
 * stays usable from the user namespace. One that cannot be opened is left
 * to the VM, whose own open says why.
 */
static void open_vm_files(const struct hvm_config *cfg)
{
	for (unsigned int i = 0; i < cfg->nr_disks; i++) {
		const struct hvm_disk_config *d = &cfg->disks[i];

		open_host_input_early(
			d->path, (d->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC |
					 (d->direct ? O_DIRECT : 0));
	}
	if (cfg->kernel)
		open_host_input_early(cfg->kernel, O_RDONLY | O_CLOEXEC);
	if (cfg->initrd)
		open_host_input_early(cfg->initrd, O_RDONLY | O_CLOEXEC);
}

/*
 * In the child: the namespaces, DIR as /, the rlimits, the VM's KVM
 * descriptors, then the user namespace (with ID set) on SOCK.
 */
static int enter(const struct hvm_config *cfg, const struct vm_identity *id,
		 int sock)
{
	const char *dir = cfg->jail_dir;
	const char *kvm = cfg->kvm_path ? cfg->kvm_path : "/dev/kvm";
	int root, runtime = -1, r;
	bool made = false;

	/*
	 * Every tap is attached here, in the host's network namespace, and
	 * kept for its device: the jail's own namespace has no interface
	 * but a loopback that is down, and no host abstract socket.
	 */
	for (unsigned int i = 0; i < cfg->nr_nets; i++) {
		int fd = virtio_net_attach_tap(cfg->nets[i].tap);

		if (fd < 0 || virtio_net_adopt_tap(cfg->nets[i].tap, fd) < 0)
			return fd < 0 ? fd : -ENOSPC;
	}
	/*
	 * The mount namespace is made by host root, so it belongs to the
	 * host's user namespace: the jail's root can neither mount nor
	 * unmount in it (/proc/sys stays read-only, the old root gone).
	 */
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC | (id->set ? 0 : CLONE_NEWNET)) <
	    0)
		return hvm_set_errno_error(
			"--jail: new mount, IPC and network namespaces");
	/* Nothing mounted here may reach the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return hvm_set_errno_error("--jail: making mounts private");
	/* pivot_root wants the new root to be a mount point. */
	if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0)
		return hvm_set_errno_error("--jail: %s", dir);
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return hvm_set_errno_error("--jail: %s", dir);
	r = check_enterable(root, dir, id);
	if (!r)
		r = bind_into(root, dir, kvm);
	if (!r)
		r = mount_proc(root, dir);
	if (!r)
		r = make_runtime_dir(root, dir, id, &runtime);
	if (!r)
		r = make_dir(root, dir, OLD_ROOT, 0700);
	close(root);
	if (r < 0)
		goto out;
	if (chdir(dir) < 0 || syscall(SYS_pivot_root, ".", OLD_ROOT) < 0) {
		r = hvm_set_errno_error("--jail: pivot_root into %s", dir);
		goto out;
	}
	if (chdir("/") < 0 || umount2("/" OLD_ROOT, MNT_DETACH) < 0) {
		r = hvm_set_errno_error("--jail: detaching the old root");
		goto out;
	}
	rmdir("/" OLD_ROOT);
	r = set_limit(RLIMIT_NOFILE, cfg->jail_nofile, "open-file");
	if (!r)
		r = set_limit(RLIMIT_MEMLOCK, cfg->jail_memlock,
			      "locked-memory");
	/*
	 * Boost headroom (as sandbox_prepare() gives it: RLIMIT_NICE 40, so
	 * that the brain lowers a vCPU's nice value without CAP_SYS_NICE,
	 * which the jail's root has for nothing of the host's): raising a
	 * hard limit takes CAP_SYS_RESOURCE in the host's user namespace.
	 */
	if (!r)
		raise_nice_limit();
	/* What only host root may open, before the namespace. */
	if (!r)
		r = vm_open_kvm_early(kvm);
	if (!r && id->set)
		open_vm_files(cfg);
	if (!r && id->set)
		r = enter_userns(id, sock, &made);
	/* Without the namespace the VMM registers as host root. */
	if (!r && runtime >= 0 && !made &&
	    fchownat(runtime, "", 0, 0, AT_EMPTY_PATH) < 0)
		r = hvm_set_errno_error("--jail: %s/run/hintvm", dir);
out:
	if (runtime >= 0)
		close(runtime);
	return r;
}

/*
 * In the parent, still root: the child's user namespace gets one line
 * each, its root = ID's uid and gid, and no setgroups.
 */
static int map_user(pid_t child, const struct vm_identity *id)
{
	static const char *const files[] = { "setgroups", "uid_map",
					     "gid_map" };
	char path[64], line[64];

	for (unsigned int i = 0; i < 3; i++) {
		int fd, n;

		if (i == 0)
			n = snprintf(line, sizeof(line), "deny\n");
		else
			n = snprintf(line, sizeof(line), "0 %u 1\n",
				     i == 1 ? (unsigned int)id->uid
					    : (unsigned int)id->gid);
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)child,
			 files[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, line, (size_t)n) != n) {
			int r = hvm_set_errno_error(
				"--jail: writing '%.*s' to %s", n - 1, line,
				path);

			if (fd >= 0)
				close(fd);
			return r;
		}
		close(fd);
	}
	return 0;
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
	struct vm_identity id;
	pid_t child;
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
	/*
	 * --user: chosen here, where the host's uid locks are, so that the
	 * supervisor can become the same uid: no process stays root.
	 */
	r = vm_user_choose(cfg, &id);
	if (r < 0) {
		close(own_pid_ns);
		return r;
	}
	/* Both ways: the start, then the user namespace's map. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0) {
		close(own_pid_ns);
		identity_release(&id);
		return hvm_set_errno_error("--jail: socketpair");
	}
	/* The next child is PID 1 of a namespace of its own. */
	if (unshare(CLONE_NEWPID) < 0) {
		close(own_pid_ns);
		close(sync[0]);
		close(sync[1]);
		identity_release(&id);
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
		identity_release(&id);
		return hvm_set_errno_error("--jail: fork");
	}
	if (child == 0) {
		close(sync[1]);
		vm_user_preset(&id);
		/*
		 * Still root for the setup, but with the VM's uid as the saved
		 * one: the supervisor, that uid from now on, may signal us.
		 */
		if (id.set && setresuid((uid_t)-1, (uid_t)-1, id.uid) < 0)
			_exit(HVM_STATUS_USAGE);
		/* In the cgroup before anything is allocated. */
		if (hear(sync[0]) != 1)
			_exit(HVM_STATUS_USAGE); /* the parent said why */
		r = enter(cfg, &id, sync[0]);
		close(sync[0]);
		if (r < 0)
			return r;
		*status = 0;
		return 0;
	}
	close(sync[0]);
	r = cfg->cgroup_path ? join_cgroup(cfg->cgroup_path, child) : 0;
	if (tell(sync[1], r < 0 ? 0 : 1) < 0 && r == 0)
		r = hvm_set_errno_error("--jail: starting the jailed process");
	/*
	 * Its user namespace, once it made one (it may also fail before,
	 * saying why, or have none: nothing to map then).
	 */
	if (r == 0 && id.set && hear(sync[1]) == USERNS_MADE) {
		r = map_user(child, &id);
		if (tell(sync[1], r < 0 ? 0 : USERNS_MAPPED) < 0 && r == 0)
			r = hvm_set_errno_error(
				"--jail: starting the jailed process");
	}
	close(sync[1]);
	/* It waits and relays signals: nothing that needs root. */
	if (id.set && identity_process_enter(&id) < 0) {
		pr_err("%s; stopping the jailed VM", hvm_error_message());
		kill(child, SIGKILL);
	}
	identity_release(&id);
	*status = supervise(child);
	if (r < 0)
		return r;
	return 1;
}
