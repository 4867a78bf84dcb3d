// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PID 1 of a container VM in hintvm-runtime's console mode (used until the
 * guest agent of docs/agent.md takes over): it runs the container's
 * process as the runtime described it in the initramfs, and ends the VM
 * with its exit status.
 *
 * The initramfs the runtime builds per container (src/runtime/initramfs.c),
 * after the guest agent's (/init, its modules in /lib/modules/hintvm-agent):
 *   /hintvm/oci-init          this program (static; rdinit=)
 *   /hintvm/container         the CONTAINER frame (src/abi/agent_proto.h):
 *                             the bundle's config.json as the runtime
 *                             parsed it, in the agent protocol's encoding,
 *                             linux.seccomp compiled to BPF included
 *   /hintvm/root/...          the container's root file system, or
 *   /hintvm/root-share        the root is the 9p share "rootfs" instead
 *   /hintvm/shares/I          mounts[I] is a host directory, share "mI"
 *   /hintvm/files/I           mounts[I] is a host file, copied here
 *   /hintvm/cfg-share         the share "hvmcfg" holds "net": eth0's
 *                             "ADDRESS PREFIX GATEWAY|- MTU" (written at
 *                             start, when the engine's veth is there)
 *   /modules/order, *.ko      kernel modules to load first (optional)
 *
 * The agent, when /init is it, is started inside the container's root:
 * `hintvm-runtime exec` reaches it over vsock. Signals for the main
 * process arrive on vsock port 1026 (one byte each), from the VMM process.
 *
 * Steps: mount what the process's mounts list asks for (proc, sysfs, tmpfs,
 * devpts, mqueue; devtmpfs at /dev) inside /hintvm/root, set the hostname,
 * write linux.sysctl, mask maskedPaths and remount readonlyPaths (before
 * the agent starts, so exec sees them too); join the task's cgroup
 * (task_cgroup.c: what the shim's Stats reads); without process.terminal,
 * connect the process's stdio to the host over vsock
 * (agent_stdio_connect), or failing that put the console in raw mode (so
 * the container's bytes reach the engine unchanged); then fork: the child
 * enters the root (enter_root: a mount namespace and the root moved onto
 * "/"), changes to process.cwd, and
 * around taking process.user's gid and uid applies the process limits
 * (rlimits, capabilities, noNewPrivileges, the seccomp program the
 * runtime compiled: guest-firmware/agent/limits.c), then execs
 * process.args with process.env. PID 1 reaps every orphan; when the
 * container's process ends it lets the host write out the process's
 * stdout and stderr (agent_stdio_finish), reports the exit as the agent
 * does (report_exit; on x86, failing that, the debug-exit port 0xf4:
 * 128+N for a signal), which hintvm-runtime's VMM process turns into its
 * own exit status, and powers off.
 *
 * No JSON is parsed here: the host parsed config.json
 * (src/runtime/spec.c) and wrote the frame (src/runtime/container_frame.c);
 * agent_container_decode() checks it again with the agent protocol's
 * rules, the same the host applied before it wrote it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/vm_sockets.h>
#include <poll.h>
#include <sched.h>
#if defined(__x86_64__)
#include <sys/io.h> /* the debug-exit port: x86 only */
#endif
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/host_stdio.h"
#include "agent/limits.h"
#include "abi/agent_proto.h"

#define ROOT "/hintvm/root"
#define NULL_DEV "/hintvm/null" /* what masked files are bound to */
#define DEBUG_EXIT_PORT 0xf4

static void vsay(const char *fmt, va_list ap)
{
	fprintf(stderr, "hintvm-oci-init: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* What the agent's code linked here (net.c) logs through. */
bool agent_debug;

void agent_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* The task's cgroup (task_cgroup.c), once made; -1 before or without. */
static int task_cgroup = -1;

/*
 * The main process's exit as the guest agent reports it (docs/agent.md):
 * EXIT_REPORT to the host's port 1025, which hintvm (option agent)
 * acknowledges before we power off. 0 once acknowledged. With it go the
 * task cgroup's OOM kills: the VM ends right after, so this is the last
 * moment anyone can read them, and the kernel counts a kill before it
 * sends the SIGKILL, so the count is complete by the time wait returns.
 */
static int report_exit(int wait_status)
{
	uint8_t frame[128], ack[AGENT_HDR_SIZE];
	struct agent_builder b;
	struct agent_stats st;
	struct pollfd pfd;
	size_t got = 0;
	int fd, len;

	fd = agent_connect_host(NULL, AGENT_STATUS_PORT);
	if (fd < 0)
		return -1;
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_EXIT_REPORT, 1);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	if (WIFSIGNALED(wait_status))
		agent_put_u32(&b, AGENT_ATTR_TERM_SIGNAL,
			      (uint32_t)WTERMSIG(wait_status));
	else
		agent_put_u32(&b, AGENT_ATTR_EXIT_CODE,
			      (uint32_t)WEXITSTATUS(wait_status));
	if (task_cgroup >= 0) {
		agent_task_cgroup_read(task_cgroup, &st);
		if (st.value[AGENT_STAT(AGENT_ATTR_OOM_KILLS)] !=
		    AGENT_STATS_UNKNOWN)
			agent_put_u64(
				&b, AGENT_ATTR_OOM_KILLS,
				st.value[AGENT_STAT(AGENT_ATTR_OOM_KILLS)]);
	}
	len = agent_build_end(&b);
	if (len < 0 || send(fd, frame, (size_t)len, MSG_NOSIGNAL) != len) {
		close(fd);
		return -1;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (got < sizeof(ack) && poll(&pfd, 1, 2000) > 0) {
		ssize_t n = read(fd, ack + got, sizeof(ack) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return got == sizeof(ack) ? 0 : -1;
}

/*
 * End the VM: the main process's wait status WS reported through the
 * agent protocol (every architecture); failing that (or WS < 0: it never
 * ran), on x86, STATUS written to the debug-exit port.
 */
static __attribute__((noreturn)) void finish_wait(int ws, int status)
{
	sync();
	if (ws < 0 || report_exit(ws)) {
#if defined(__x86_64__)
		if (!ioperm(DEBUG_EXIT_PORT, 4, 1))
			outb((unsigned char)status, DEBUG_EXIT_PORT);
#endif
	}
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

/* The container's process never ran: STATUS (126/127). */
static __attribute__((noreturn)) void finish(int status)
{
	finish_wait(-1, status);
}

/*
 * The modules the initramfs before ours brought: the agent's
 * (`hvm_initramfs_cached`, /lib/modules/hintvm-agent) or a plain list
 * (/modules).
 */
static void load_modules(void)
{
	static const char *const dirs[] = { "/lib/modules/hintvm-agent",
					    "/modules" };
	char name[256], path[600], order_path[64];
	const char *dir = NULL;
	FILE *order = NULL;

	for (size_t i = 0; i < 2 && !order; i++) {
		snprintf(order_path, sizeof(order_path), "%s/order", dirs[i]);
		order = fopen(order_path, "re");
		dir = dirs[i];
	}
	if (!order)
		return;
	while (fgets(name, sizeof(name), order)) {
		int fd;

		name[strcspn(name, "\n")] = '\0';
		if (!name[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		/*
		 * Quietly: the console is the container's output, and the
		 * agent's list names modules a kernel may have built in
		 * (or not at all); what matters fails later, by name.
		 */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			syscall(SYS_finit_module, fd, "", 0);
		if (fd >= 0)
			close(fd);
	}
	fclose(order);
}

static int mkdir_p(const char *path)
{
	char buf[4096];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

/*
 * runc's default devices and links: engines mount a tmpfs on /dev
 * (containerd's and podman's default specs do) and expect a runtime to
 * fill it, or a process's "> /dev/null" writes a file and "< /dev/zero"
 * fails.
 */
static void make_default_devices(void)
{
	static const struct {
		const char *name;
		unsigned int major, minor;
	} nodes[] = {
		{ "null", 1, 3 },   { "zero", 1, 5 },	 { "full", 1, 7 },
		{ "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 }
	};
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
		{ "pts/ptmx", "ptmx" },
	};
	char path[4096];

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(path, sizeof(path), "%s/dev/%s", ROOT, nodes[i].name);
		if (mknod(path, S_IFCHR | 0666,
			  makedev(nodes[i].major, nodes[i].minor)) &&
		    errno != EEXIST)
			say("mknod /dev/%s: %s", nodes[i].name,
			    strerror(errno));
		else
			chmod(path, 0666); /* whatever the umask took */
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/dev/%s", ROOT, links[i][1]);
		if (symlink(links[i][0], path) && errno != EEXIST)
			say("symlink /dev/%s: %s", links[i][1],
			    strerror(errno));
	}
}

/* The mounts of config.json that a VM can make itself. */
static void mount_container_fs(const struct agent_container *s)
{
	bool dev_tmpfs = false;

	static const char *const kinds[] = { "proc",   "sysfs",	 "tmpfs",
					     "devpts", "mqueue", NULL };
	char target[4096];

	snprintf(target, sizeof(target), "%s/dev", ROOT);
	mkdir_p(target);
	if (mount("devtmpfs", target, "devtmpfs", MS_NOSUID, "mode=0755"))
		say("devtmpfs: %s", strerror(errno));
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct agent_mount *m = &s->mounts[i];
		bool known = false;

		for (const char *const *k = kinds; *k && m->type; k++)
			known |= !strcmp(*k, m->type);
		if (!known || strstr(m->destination, ".."))
			continue;
		snprintf(target, sizeof(target), "%s%s", ROOT, m->destination);
		mkdir_p(target);
		if (mount(m->source ? m->source : m->type, target, m->type,
			  (m->flags & AGENT_MOUNT_RO ? MS_RDONLY : 0) |
				  MS_NOSUID,
			  !strcmp(m->type, "devpts")
				  ? "newinstance,ptmxmode=0666,mode=0620"
				  : NULL))
			say("mount %s on %s: %s", m->type, m->destination,
			    strerror(errno));
		else if (!strcmp(m->destination, "/dev") &&
			 !strcmp(m->type, "tmpfs"))
			dev_tmpfs = true;
	}
	if (dev_tmpfs)
		make_default_devices();
}

/*
 * The root as the runtime shared it: tag "rootfs", read-only, under an
 * overlay whose upper layer is a tmpfs, so the container can write and
 * nothing it writes reaches the host (root.readonly: the overlay is
 * mounted read-only). Without /hintvm/root-share the root is already in
 * the initramfs at ROOT.
 */
static int mount_root(const struct agent_container *s)
{
	char opts[512];

	if (access("/hintvm/root-share", F_OK))
		return 0;
	mkdir("/hintvm/lower", 0755);
	mkdir("/hintvm/rw", 0755);
	if (mount("rootfs", "/hintvm/lower", "9p", MS_RDONLY,
		  "trans=virtio,version=9p2000.L,msize=262144,cache=loose")) {
		say("mount the root share: %s", strerror(errno));
		return -1;
	}
	if (mount("tmpfs", "/hintvm/rw", "tmpfs", 0, "mode=0755")) {
		say("tmpfs for the overlay: %s", strerror(errno));
		return -1;
	}
	mkdir("/hintvm/rw/upper", 0755);
	mkdir("/hintvm/rw/work", 0755);
	snprintf(
		opts, sizeof(opts),
		"lowerdir=/hintvm/lower,upperdir=/hintvm/rw/upper,workdir=/hintvm/rw/work");
	if (mount("overlay", ROOT, "overlay", s->root_readonly ? MS_RDONLY : 0,
		  opts)) {
		say("overlay root: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Bind mounts: host directories as 9p shares m<i>, host files copied. */
static void mount_binds(const struct agent_container *s)
{
	char target[4096], path[64], tag[32];

	for (size_t i = 0; i < s->nmounts; i++) {
		const struct agent_mount *m = &s->mounts[i];
		unsigned long ro = m->flags & AGENT_MOUNT_RO ? MS_RDONLY : 0;
		int fd;

		if (!(m->flags & AGENT_MOUNT_BIND) ||
		    strstr(m->destination, ".."))
			continue;
		snprintf(target, sizeof(target), "%s%s", ROOT, m->destination);
		snprintf(path, sizeof(path), "/hintvm/shares/%zu", i);
		if (!access(path, F_OK)) {
			snprintf(tag, sizeof(tag), "m%zu", i);
			mkdir_p(target);
			if (mount(tag, target, "9p", ro,
				  "trans=virtio,version=9p2000.L,msize=262144"))
				say("mount %s on %s: %s", tag, m->destination,
				    strerror(errno));
			continue;
		}
		snprintf(path, sizeof(path), "/hintvm/files/%zu", i);
		if (access(path, F_OK))
			continue;
		/* A file: its directory must exist, the file be a target. */
		{
			char dir[4096];
			char *slash;

			snprintf(dir, sizeof(dir), "%s", target);
			slash = strrchr(dir, '/');
			if (slash && slash != dir) {
				*slash = '\0';
				mkdir_p(dir);
			}
		}
		fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		if (mount(path, target, NULL, MS_BIND, NULL) ||
		    (ro && mount(NULL, target, NULL,
				 MS_BIND | MS_REMOUNT | MS_RDONLY, NULL)))
			say("bind %s: %s", m->destination, strerror(errno));
	}
}

/*
 * lo always; eth0 from hvmcfg's net file, the veth's settings the runtime
 * read in the container's network namespace (src/runtime/network.h): a
 * first line "ADDRESS PREFIX GATEWAY MTU" (IPv4, "-" when absent), then
 * "inet6 ADDRESS PREFIX GATEWAY" lines. Set over rtnetlink by the agent's
 * code (guest-firmware/agent/net.c).
 */
static void configure_network(void)
{
	char addr[64], gw[64], spec[200];
	unsigned int prefix, mtu;
	FILE *f;

	if (agent_net_up("lo"))
		say("lo up: %s", strerror(errno));
	if (!access("/hintvm/cfg-share", F_OK) &&
	    mount("hvmcfg", "/hintvm/cfg", "9p", MS_RDONLY,
		  "trans=virtio,version=9p2000.L"))
		say("mount the runtime's share: %s", strerror(errno));
	f = fopen("/hintvm/cfg/net", "re");
	if (!f)
		return;
	if (fscanf(f, "%63s %u %63s %u", addr, &prefix, gw, &mtu) != 4) {
		fclose(f);
		return;
	}
	for (;;) {
		/* agent_net_configure checks the address and says why. */
		if (strcmp(addr, "-") &&
		    (size_t)snprintf(
			    spec, sizeof(spec), "eth0,%s/%u%s%s,mtu=%u", addr,
			    prefix, strcmp(gw, "-") ? ",gw=" : "",
			    strcmp(gw, "-") ? gw : "", mtu) < sizeof(spec))
			agent_net_configure(spec);
		if (fscanf(f, " inet6 %63s %u %63s", addr, &prefix, gw) != 3)
			break;
	}
	fclose(f);
}

/*
 * linux.sysctl: the VM's kernel is the container's own, so every key is
 * the container's to set (runc limits them to namespaced ones).
 */
static void apply_sysctls(const struct agent_container *s)
{
	char path[512];

	for (size_t i = 0; i < s->nsysctls; i++) {
		size_t len = strlen(s->sysctls[i].value);
		int fd;

		snprintf(path, sizeof(path), "/proc/sys/%s", s->sysctls[i].key);
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 ||
		    write(fd, s->sysctls[i].value, len) != (ssize_t)len)
			say("sysctl %s = %s: %s", s->sysctls[i].key,
			    s->sysctls[i].value, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

/*
 * linux.maskedPaths as runc masks them: a directory gets an empty
 * read-only tmpfs over it, anything else /dev/null bound over it; a path
 * that does not exist needs no mask.
 */
static void mask_paths(const struct agent_container *s)
{
	char target[4096];
	struct stat st;

	/*
	 * Our own null device outside the container's root: its /dev may
	 * be the engine's tmpfs, without one.
	 */
	if (s->nmasked_paths &&
	    mknod(NULL_DEV, S_IFCHR | 0666, makedev(1, 3)) && errno != EEXIST)
		say("%s: %s", NULL_DEV, strerror(errno));

	for (size_t i = 0; i < s->nmasked_paths; i++) {
		int ret;

		snprintf(target, sizeof(target), "%s%s", ROOT,
			 s->masked_paths[i]);
		if (lstat(target, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			ret = mount("tmpfs", target, "tmpfs", MS_RDONLY,
				    "mode=0755");
		else
			ret = mount(NULL_DEV, target, NULL, MS_BIND, NULL);
		if (ret)
			say("mask %s: %s", s->masked_paths[i], strerror(errno));
	}
}

/* linux.readonlyPaths: bound onto themselves, remounted read-only. */
static void make_readonly(const struct agent_container *s)
{
	char target[4096];
	struct statvfs vfs;

	for (size_t i = 0; i < s->nreadonly_paths; i++) {
		unsigned long keep = 0;

		snprintf(target, sizeof(target), "%s%s", ROOT,
			 s->readonly_paths[i]);
		if (access(target, F_OK))
			continue;
		if (mount(target, target, NULL, MS_BIND | MS_REC, NULL) ||
		    statvfs(target, &vfs)) {
			say("read-only %s: %s", s->readonly_paths[i],
			    strerror(errno));
			continue;
		}
		keep |= vfs.f_flag & ST_NOSUID ? MS_NOSUID : 0;
		keep |= vfs.f_flag & ST_NODEV ? MS_NODEV : 0;
		keep |= vfs.f_flag & ST_NOEXEC ? MS_NOEXEC : 0;
		if (mount(NULL, target, NULL,
			  MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL))
			say("read-only %s: %s", s->readonly_paths[i],
			    strerror(errno));
	}
}

/*
 * Make the container's root this process's "/" as switch_root does, in a
 * mount namespace of its own: ROOT moved onto "/", then chroot("."). A
 * plain chroot(ROOT) leaves the process chrooted in the kernel's eyes, and
 * a chrooted process may not create a user namespace (`unshare -U` works
 * under runc, whose pivot_root leaves no such mark); the initramfs's
 * rootfs cannot be pivot_root'ed, hence the move.
 */
static int enter_root(void)
{
	struct stat root, parent;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    stat(ROOT, &root) || stat("/hintvm", &parent))
		return -1;
	/* The copied root is a plain directory: make it a mount to move. */
	if (root.st_dev == parent.st_dev &&
	    mount(ROOT, ROOT, NULL, MS_BIND | MS_REC, NULL))
		return -1;
	if (chdir(ROOT) || mount(ROOT, "/", NULL, MS_MOVE, NULL) ||
	    chroot(".") || chdir("/"))
		return -1;
	return 0;
}

/*
 * The guest agent (docs/agent.md), when the initramfs has it as /init:
 * started inside the container's root, so that `hintvm-runtime exec`
 * (hvm_process_start over vsock) runs processes in the container.
 */
static void start_agent(int cgroup_dir)
{
	static char *const argv[] = { "hintvm-agent", NULL };
	static char cgroup_env[48];
	static char *envp[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		NULL, NULL
	};
	int fd = open("/init", O_RDONLY | O_CLOEXEC);
	pid_t pid;

	if (fd < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* Not on the console: that is the container's stdio. */
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		if (enter_root())
			_exit(127);
		/* Its stats (STATS): dup() leaves the copy open across exec. */
		if (cgroup_dir >= 0) {
			snprintf(cgroup_env, sizeof(cgroup_env), "%s=%d",
				 AGENT_TASK_CGROUP_ENV, dup(cgroup_dir));
			envp[1] = cgroup_env;
		}
		fexecve(fd, argv, envp);
		_exit(127);
	}
	close(fd);
}

/* process.terminal: the frame's TTY flag. */
static bool terminal(const struct agent_container *s)
{
	return s->process.flags & AGENT_EXEC_TTY;
}

static void console_mode(const struct agent_container *s)
{
	struct termios t;

	if (tcgetattr(0, &t))
		return;
	if (!terminal(s)) {
		/* Bytes as the process wrote them: no CR before LF. */
		cfmakeraw(&t);
		tcsetattr(0, TCSANOW, &t);
	} else if (s->process.rows && s->process.cols) {
		struct winsize ws = { .ws_row = s->process.rows,
				      .ws_col = s->process.cols };

		ioctl(0, TIOCSWINSZ, &ws);
	}
}

static __attribute__((noreturn)) void
exec_process(const struct agent_container *s)
{
	const struct agent_exec_req *p = &s->process;
	const struct agent_limits *l = &p->limits;
	static char *const empty_env[] = { NULL };
	const char *what = "";

	if (terminal(s)) {
		setsid();
		ioctl(0, TIOCSCTTY, 1);
	}
	if (enter_root() || chdir(p->cwd ? p->cwd : "/")) {
		say("cannot enter the container root: %s", strerror(errno));
		_exit(127);
	}
	if (limits_before_user(l, &what))
		goto limits_failed;
	if (setgid(p->gid) || setgroups(0, NULL) || setuid(p->uid)) {
		say("cannot take uid %u gid %u: %s", p->uid, p->gid,
		    strerror(errno));
		_exit(127);
	}
	if (limits_after_user(l, &what))
		goto limits_failed;
	/* execvpe searches the container's PATH, as runc does. */
	for (char **e = p->envp; e && *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			setenv("PATH", *e + 5, 1);
	/* The seccomp program last: nothing but the exec runs under it. */
	if (limits_last(l, &what))
		goto limits_failed;
	execvpe(p->argv[0], p->argv, p->envp ? p->envp : empty_env);
	say("exec %s: %s", p->argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
limits_failed:
	say("cannot apply the process's limits: %s: %s", what, strerror(errno));
	_exit(127);
}

/*
 * Signals for the container's process from the host: hintvm-runtime's VMM
 * process connects to this vsock port (through the VM's hybrid socket)
 * and sends one byte, the signal number, per connection.
 */
#define SIGNAL_VSOCK_PORT 1026

static int listen_for_signals(void)
{
	struct sockaddr_vm addr = { .svm_family = AF_VSOCK,
				    .svm_cid = VMADDR_CID_ANY,
				    .svm_port = SIGNAL_VSOCK_PORT };
	int s = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	if (bind(s, (struct sockaddr *)&addr, sizeof(addr)) || listen(s, 4)) {
		close(s);
		return -1;
	}
	return s;
}

static void forward_signal(int listener, pid_t child)
{
	unsigned char sig = 0;
	int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	/* A bounded wait: a host that connects and says nothing is dropped. */
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (poll(&p, 1, 1000) == 1 && read(c, &sig, 1) == 1 && sig > 0 &&
	    sig < 65)
		kill(child, sig);
	close(c);
}

/*
 * PID 1: reap orphans and forward signals until the process ends; its
 * wait status, or -1 when it cannot be known.
 */
static int supervise(pid_t child)
{
	sigset_t set;
	int sfd, listener = listen_for_signals();

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		struct pollfd fds[2] = { { .fd = sfd, .events = POLLIN },
					 { .fd = listener, .events = POLLIN } };
		struct signalfd_siginfo si;
		int st_code;
		pid_t pid;

		if (sfd >= 0 && poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			forward_signal(listener, child);
		if (sfd >= 0 && !fds[0].revents)
			continue;
		if (sfd >= 0 && read(sfd, &si, sizeof(si)) < 0)
			continue;
		while ((pid = waitpid(-1, &st_code, sfd >= 0 ? WNOHANG : 0)) >
		       0) {
			if (pid == child)
				return st_code;
		}
		if (pid < 0 && errno == ECHILD)
			break;
	}
	return -1;
}

/*
 * The CONTAINER frame the runtime wrote, decoded into C; exits the VM
 * (127) when it is missing or refused.
 */
static void read_container(struct agent_container *c)
{
	static uint8_t frame[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
	char msg[160];
	struct stat st;
	int fd = open(AGENT_CONTAINER_FILE, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || st.st_size > (off_t)sizeof(frame) ||
	    read(fd, frame, (size_t)st.st_size) != st.st_size) {
		say("cannot read %s", AGENT_CONTAINER_FILE);
		finish(127);
	}
	close(fd);
	if (agent_container_decode(frame, (size_t)st.st_size, c, msg,
				   sizeof(msg))) {
		say("%s: %s", AGENT_CONTAINER_FILE, msg);
		finish(127);
	}
}

int main(void)
{
	struct agent_container spec;
	int stdio[3] = { -1, -1, -1 };
	int ws;
	pid_t child;

	mount("proc", "/proc", "proc", 0, NULL);
	load_modules();
	read_container(&spec);
	if (spec.hostname)
		sethostname(spec.hostname, strlen(spec.hostname));
	if (mount_root(&spec))
		finish(127);
	mount_container_fs(&spec);
	mount_binds(&spec);
	apply_sysctls(&spec);
	mask_paths(&spec);
	make_readonly(&spec);
	configure_network();
	/*
	 * The task's cgroup, which this process joins before the agent and
	 * the container's process are forked (they and every exec inherit
	 * it): what the shim's Stats reports. Without it (no cgroup2 in
	 * the guest kernel) the agent answers STATS with ENOENT; nothing is
	 * said here, where stderr is the container's.
	 */
	task_cgroup = agent_task_cgroup_setup("/hintvm/cgroup");
	start_agent(task_cgroup);
	if (task_cgroup < 0)
		task_cgroup = -1;
	if (!terminal(&spec))
		agent_stdio_connect(NULL, stdio);
	if (stdio[0] < 0)
		console_mode(&spec);

	child = fork();
	if (child < 0)
		finish(127);
	if (child == 0) {
		for (int i = 0; i < 3 && stdio[0] >= 0; i++)
			dup2(stdio[i], i);
		exec_process(&spec);
	}
	ws = supervise(child);
	agent_stdio_finish(stdio);
	finish_wait(ws, ws < 0		? 127
			: WIFEXITED(ws) ? WEXITSTATUS(ws)
					: 128 + WTERMSIG(ws));
}
