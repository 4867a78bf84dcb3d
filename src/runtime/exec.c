// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec: run another process in a running container, through the guest
 * agent that oci-init started in the container's root (libhintvm's
 * hvm_process_* API over the VM's vsock socket, docs/agent.md).
 *
 * The exec process on the host stands for the guest process, as runc's
 * does: its pid goes to --pid-file, its stdio (or, with a terminal, the
 * pty whose master went to --console-socket) is pumped to and from the
 * process's streams, signals it receives are forwarded, and it exits with
 * the process's status (128+N for a signal). --detach forks that process
 * off once the guest process runs; the engine's subreaper reaps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console.h"
#include "hintvm/hintvm.h"
#include "seccomp.h"
#include "spec.h"
#include "state.h"

#define MAX_CLI_ENV 256
/* How long exec waits for a booting guest's agent (TCG boots are slow). */
#define EXEC_AGENT_WAIT_S 180
/* ... and for a pod container's PID namespace to be made (below). */
#define EXEC_PIDNS_WAIT_S 30

struct exec_opts {
	const char *process_file;
	const char *pid_file;
	const char *console_socket;
	bool tty, detach, no_new_privs;
	uint64_t add_caps; /* --cap, as capability bits */
	const char *cwd;
	const char *guest_root; /* a pod's container (the shim): its root */
	const char *guest_cgroup; /* ... its cgroup in the guest, by name */
	unsigned long long guest_memory_max; /* ... its memory.max; 0: none */
	unsigned int guest_pidns; /* ... its PID namespace: HVM_PIDNS_* */
	const char *user;
	const char *env[MAX_CLI_ENV + 1];
	size_t nenv;
	const char *id;
	char **args; /* after the id */
};

static int parse_exec_opts(int argc, char **argv, struct exec_opts *o)
{
	static const struct option longopts[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "pid-file", required_argument, NULL, 'P' },
		{ "console-socket", required_argument, NULL, 'c' },
		{ "tty", no_argument, NULL, 't' },
		{ "detach", no_argument, NULL, 'd' },
		{ "cwd", required_argument, NULL, 'w' },
		{ "env", required_argument, NULL, 'e' },
		{ "user", required_argument, NULL, 'u' },
		{ "preserve-fds", required_argument, NULL, 'f' },
		{ "process-label", required_argument, NULL, 'l' },
		{ "apparmor", required_argument, NULL, 'a' },
		{ "no-new-privs", no_argument, NULL, 'n' },
		{ "cap", required_argument, NULL, 'C' },
		{ "cgroup", required_argument, NULL, 'g' },
		/* hintvm's own: run the process chrooted in PATH of the
		 * guest (containerd-shim-hintvm-v2's pod containers). */
		{ "guest-root", required_argument, NULL, 'R' },
		/* ... in the guest cgroup NAME, made with memory.max BYTES
		 * (the pod container's limit) when given. */
		{ "guest-cgroup", required_argument, NULL, 'G' },
		{ "guest-memory-max", required_argument, NULL, 'M' },
		/* ... "new": in a PID namespace of its own, named by the
		 * cgroup; "join": in that one (an exec into the container). */
		{ "guest-pidns", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+p:tdw:e:u:", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'p':
			o->process_file = optarg;
			break;
		case 'P':
			o->pid_file = optarg;
			break;
		case 'c':
			o->console_socket = optarg;
			break;
		case 't':
			o->tty = true;
			break;
		case 'd':
			o->detach = true;
			break;
		case 'w':
			o->cwd = optarg;
			break;
		case 'R':
			if (optarg[0] != '/' || strstr(optarg, "..")) {
				rt_error(
					"exec --guest-root %s: expected an absolute path without \"..\"",
					optarg);
				return -EINVAL;
			}
			o->guest_root = optarg;
			break;
		case 'G':
			o->guest_cgroup = optarg;
			break;
		case 'N':
			if (!strcmp(optarg, "new")) {
				o->guest_pidns = HVM_PIDNS_NEW;
			} else if (!strcmp(optarg, "join")) {
				o->guest_pidns = HVM_PIDNS_JOIN;
			} else {
				rt_error(
					"exec --guest-pidns %s: expected \"new\" or \"join\"",
					optarg);
				return -EINVAL;
			}
			break;
		case 'M': {
			char *end;

			errno = 0;
			o->guest_memory_max = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end ||
			    optarg[0] == '-' || !o->guest_memory_max) {
				rt_error(
					"exec --guest-memory-max %s: expected a number of bytes above 0",
					optarg);
				return -EINVAL;
			}
			break;
		}
		case 'e':
			if (o->nenv == MAX_CLI_ENV)
				return -E2BIG;
			o->env[o->nenv++] = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'n':
			o->no_new_privs = true;
			break;
		case 'C': {
			unsigned int cap = 0;

			while (oci_cap_name(cap) &&
			       strcmp(optarg, oci_cap_name(cap)))
				cap++;
			if (!oci_cap_name(cap)) {
				rt_error(
					"exec --cap %s: not a capability name (expected e.g. CAP_NET_ADMIN)",
					optarg);
				return -EINVAL;
			}
			o->add_caps |= 1ull << cap;
			break;
		}
		case '?':
			return -EINVAL;
		default: /* meaningless in a VM: the guest kernel decides */
			break;
		}
	}
	if (optind >= argc) {
		rt_error("exec: expected a container id");
		return -EINVAL;
	}
	o->id = argv[optind];
	o->args = argv + optind + 1;
	return 0;
}

static int read_process_file(const char *path, struct oci_spec *spec)
{
	char err[256], *text;
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0 || fstat(fd, &st) || st.st_size > OCI_MAX_CONFIG) {
		rt_error("exec --process %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	text = malloc((size_t)st.st_size + 1);
	n = text ? read(fd, text, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(text);
		return -EIO;
	}
	ret = oci_process_parse(text, (size_t)n, spec, err, sizeof(err));
	free(text);
	if (ret)
		rt_error("exec --process %s: %s", path, err);
	else if (!spec->process.nargs)
		rt_error("exec --process %s: no args", path), ret = -EINVAL;
	return ret;
}

/* A file of at most MAX bytes, whole; NULL with errno set otherwise. */
static char *read_small_file(const char *path, size_t max, size_t *len)
{
	struct stat st;
	char *text = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (size_t)st.st_size > max) {
		errno = EFBIG;
	} else if ((text = malloc((size_t)st.st_size + 1))) {
		if (read(fd, text, (size_t)st.st_size) != st.st_size) {
			free(text);
			text = NULL;
			errno = EIO;
		} else {
			*len = (size_t)st.st_size;
		}
	}
	close(fd);
	return text;
}

/*
 * The limits of the exec process, as runc gives them: PROCESS's rlimits,
 * capabilities and noNewPrivileges (process.json's; without one, the
 * container's own process's, read from the state's config.json), and the
 * container's seccomp program (create compiled it into seccomp.bpf).
 */
static int exec_limits(const struct rt_container *c,
		       const struct oci_process *process, bool no_new_privs,
		       struct hvm_process_rlimit *rl,
		       struct hvm_process_limits *l, void **bpf)
{
	struct oci_spec base = { 0 };
	char path[PATH_MAX + 32], err[256];
	char *text = NULL;
	size_t len = 0;

	*bpf = NULL;
	if (!process) {
		rt_container_path(c, "config.json", path, sizeof(path));
		text = read_small_file(path, OCI_MAX_CONFIG, &len);
		if (!text ||
		    oci_spec_parse(text, len, &base, err, sizeof(err))) {
			rt_error("exec: the container's %s: %s", path,
				 text ? err : strerror(errno));
			free(text);
			oci_spec_free(&base);
			return -EINVAL;
		}
		free(text);
		process = &base.process;
	}
	*l = (struct hvm_process_limits){ .rlimits = rl };
	for (size_t i = 0; i < process->nrlimits; i++)
		rl[l->nrlimits++] = (struct hvm_process_rlimit){
			.resource = process->rlimits[i].resource,
			.soft = process->rlimits[i].soft,
			.hard = process->rlimits[i].hard,
		};
	l->set_caps = process->has_capabilities;
	for (int i = 0; i < OCI_CAP_SETS; i++)
		l->caps[i] = process->caps[i];
	l->no_new_privs = process->no_new_privileges || no_new_privs;
	oci_spec_free(&base);
	rt_container_path(c, "seccomp.bpf", path, sizeof(path));
	*bpf = read_small_file(path, RT_SECCOMP_MAX_BYTES, &len);
	if (!*bpf && errno != ENOENT) {
		rt_error("exec: %s: %s", path, strerror(errno));
		return -EIO;
	}
	l->seccomp = *bpf;
	l->seccomp_len = *bpf ? len : 0;
	return 0;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* The signals the exec process forwards to the guest process. */
static int forwarded_signals(sigset_t *set)
{
	static const int sigs[] = { SIGTERM, SIGINT,  SIGHUP,	SIGQUIT,
				    SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, set, NULL))
		return -1;
	return signalfd(-1, set, SFD_CLOEXEC);
}

/*
 * Pump: host input -> the process, the process's output -> host, signals
 * forwarded, until the agent reports the exit. Returns the status.
 */
static int pump(struct hvm_process *p, int in_fd, int out_fd, int err_fd,
		bool tty, int sig_fd)
{
	int in_stream = tty ? HVM_STREAM_TTY : HVM_STREAM_STDIN;
	int out_stream = tty ? HVM_STREAM_TTY : HVM_STREAM_STDOUT;
	int pin = hvm_process_fd(p, in_stream);
	int pout = hvm_process_fd(p, out_stream);
	int perr = tty ? -1 : hvm_process_fd(p, HVM_STREAM_STDERR);
	int ev = hvm_process_event_fd(p);
	bool in_open = in_fd >= 0 && pin >= 0;
	struct hvm_process_exit ex;
	char buf[65536];

	for (;;) {
		struct pollfd fds[5] = {
			{ .fd = in_open ? in_fd : -1, .events = POLLIN },
			{ .fd = pout, .events = POLLIN },
			{ .fd = perr, .events = POLLIN },
			{ .fd = ev, .events = POLLIN },
			{ .fd = sig_fd, .events = POLLIN },
		};
		ssize_t n;

		if (poll(fds, 5, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 255;
		}
		if (fds[0].revents) {
			n = read(in_fd, buf, sizeof(buf));
			if (n > 0) {
				write_all(pin, buf, (size_t)n);
			} else {
				in_open = false;
				if (!tty)
					hvm_process_close_fd(p, in_stream);
			}
		}
		if (fds[1].revents) {
			n = read(pout, buf, sizeof(buf));
			if (n > 0)
				write_all(out_fd, buf, (size_t)n);
			else
				pout = -1;
		}
		if (fds[2].revents) {
			n = read(perr, buf, sizeof(buf));
			if (n > 0)
				write_all(err_fd, buf, (size_t)n);
			else
				perr = -1;
		}
		if (fds[4].revents) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
				struct winsize ws;

				if (si.ssi_signo == SIGWINCH) {
					if (tty &&
					    !ioctl(in_fd, TIOCGWINSZ, &ws))
						hvm_process_resize(p, ws.ws_row,
								   ws.ws_col);
				} else {
					hvm_process_signal(p,
							   (int)si.ssi_signo);
				}
			}
		}
		/* The exit comes once the output streams are closed. */
		if (pout < 0 && perr < 0) {
			int ret = hvm_process_wait(p, &ex, -1);

			return ret ? 255 : ex.status;
		}
		if (fds[3].revents && !hvm_process_wait(p, &ex, 0) &&
		    pout < 0 && perr < 0)
			return ex.status;
	}
}

int cmd_exec(int argc, char **argv)
{
	struct exec_opts o;
	struct oci_spec spec = { 0 };
	struct hvm_process_spec ps = { .uid = -1, .gid = -1 };
	struct hvm_process_rlimit rlimits[OCI_MAX_RLIMITS];
	struct hvm_process_limits limits;
	void *seccomp = NULL;
	struct rt_console console = { .slave = -1 };
	struct rt_container c;
	struct hvm_process *p;
	char vsock[PATH_MAX + 32], err[256], path[PATH_MAX + 32];
	char *guest_root = NULL;
	size_t root_len = 0;
	const char **envp = NULL;
	int status = 255, sig_fd, ready[2] = { -1, -1 };
	pid_t child = 0;

	if (parse_exec_opts(argc, argv, &o) || rt_container_load(&c, o.id))
		return 1;
	if (rt_container_status(&c) != RT_RUNNING) {
		rt_error("cannot exec in a container that is not running");
		return 1;
	}
	rt_container_path(&c, RT_VSOCK_FILE, vsock, sizeof(vsock));
	if (access(vsock, F_OK)) {
		rt_error("exec: container %s has no guest agent socket", c.id);
		return 1;
	}
	if (o.process_file) {
		if (read_process_file(o.process_file, &spec))
			return 1;
	} else if (!o.args[0]) {
		rt_error("exec: no command given (--process FILE or ARGS)");
		return 1;
	}
	ps.argv = (const char *const *)(o.process_file ? spec.process.args
						       : o.args);
	/* process.json's environment, then -e entries. */
	envp = calloc(spec.process.nenv + o.nenv + 1, sizeof(*envp));
	if (!envp)
		return 1;
	for (size_t i = 0; i < spec.process.nenv; i++)
		envp[i] = spec.process.env[i];
	for (size_t i = 0; i < o.nenv; i++)
		envp[spec.process.nenv + i] = o.env[i];
	ps.envp = envp;
	ps.cwd = o.cwd ? o.cwd : spec.process.cwd;
	ps.root = o.guest_root;
	/* A container in a template's clone: its root, not the VM's. */
	if (!ps.root) {
		rt_container_path(&c, RT_GUEST_ROOT_FILE, path, sizeof(path));
		guest_root = read_small_file(path, PATH_MAX, &root_len);
		if (guest_root) {
			guest_root[root_len] = '\0';
			ps.root = guest_root;
		}
	}
	ps.cgroup = o.guest_cgroup;
	ps.memory_max = o.guest_memory_max;
	ps.pidns = o.guest_pidns;
	if (o.process_file) {
		ps.uid = spec.process.uid;
		ps.gid = spec.process.gid;
	}
	if (o.user) {
		unsigned long long u = 0, gr = 0;

		if (sscanf(o.user, "%llu:%llu", &u, &gr) < 1) {
			rt_error("exec --user %s: expected UID[:GID]", o.user);
			goto out;
		}
		ps.uid = (long long)u;
		ps.gid = strchr(o.user, ':') ? (long long)gr : ps.gid;
	}
	if (exec_limits(&c, o.process_file ? &spec.process : NULL,
			o.no_new_privs, rlimits, &limits, &seccomp))
		goto out;
	/*
	 * --cap adds to the bounding, effective and permitted sets, and to
	 * the ambient one only where inheritable has bits, as runc does
	 * (ambient needs inheritable). A process without a capabilities
	 * section keeps root's full set anyway.
	 */
	if (limits.set_caps) {
		limits.caps[OCI_CAP_BOUNDING] |= o.add_caps;
		limits.caps[OCI_CAP_EFFECTIVE] |= o.add_caps;
		limits.caps[OCI_CAP_PERMITTED] |= o.add_caps;
		if (limits.caps[OCI_CAP_INHERITABLE])
			limits.caps[OCI_CAP_AMBIENT] |= o.add_caps;
	}
	ps.limits = &limits;
	o.tty = o.tty || spec.process.terminal;
	if (o.tty) {
		if (!o.console_socket) {
			rt_error("exec: a terminal needs --console-socket");
			goto out;
		}
		if (rt_console_open(&console, o.console_socket, &spec.process,
				    err, sizeof(err))) {
			rt_error("exec: %s", err);
			goto out;
		}
		ps.flags = HVM_PROCESS_TTY;
		ps.rows = spec.process.console_rows;
		ps.cols = spec.process.console_cols;
	} else {
		ps.flags = HVM_PROCESS_STDIN | HVM_PROCESS_STDOUT |
			   HVM_PROCESS_STDERR;
	}

	/* --detach: the pumping process lives on; create's pattern. */
	if (o.detach) {
		if (pipe2(ready, O_CLOEXEC))
			goto out;
		child = fork();
		if (child < 0)
			goto out;
		if (child > 0) {
			char ok = 0;

			close(ready[1]);
			if (read(ready[0], &ok, 1) != 1 || ok != 1) {
				status = 255;
				goto out;
			}
			if (o.pid_file) {
				FILE *f = fopen(o.pid_file, "we");

				if (f) {
					fprintf(f, "%d", (int)child);
					fclose(f);
				}
			}
			status = 0;
			goto out;
		}
		close(ready[0]);
		setsid();
	}
	sig_fd = forwarded_signals(&(sigset_t){ 0 });
	/*
	 * The agent comes up with the guest: right after start the VM may
	 * still be booting. Retry while nothing but the connection failed
	 * and the VM lives, for up to EXEC_AGENT_WAIT_S.
	 */
	/*
	 * An exec into a pod container just started (a probe, the CRI's
	 * ExecSync) may reach the agent before the container's own process
	 * has made the PID namespace it joins: the shim's Start answers once
	 * the container's runtime exec is forked, not once its process runs
	 * in the guest. ESRCH then means "not yet" (or "ended", and then the
	 * shim reports the container's exit), for up to EXEC_PIDNS_WAIT_S.
	 */
	for (int waited = 0;; waited++) {
		bool pidns_not_yet;

		p = hvm_process_start(vsock, &ps);
		pidns_not_yet = !p && ps.pidns == HVM_PIDNS_JOIN &&
				hvm_process_errno() == ESRCH &&
				waited < EXEC_PIDNS_WAIT_S * 5;
		if (p || (hvm_process_errno() && !pidns_not_yet) ||
		    !rt_process_alive(c.pid, c.pid_start) ||
		    waited >= EXEC_AGENT_WAIT_S * 5)
			break;
		usleep(200000);
	}
	if (!p) {
		rt_error("exec in %s: %s", c.id, hvm_last_error());
		status = hvm_process_errno() == ENOENT ? 127 : 126;
		if (o.detach) {
			char no = 0;

			if (write(ready[1], &no, 1) < 0)
				_exit(status);
			_exit(status);
		}
		goto out;
	}
	if (o.detach) {
		char yes = 1;

		if (write(ready[1], &yes, 1) < 0)
			_exit(255);
		close(ready[1]);
	} else if (o.pid_file) {
		FILE *f = fopen(o.pid_file, "we");

		if (f) {
			fprintf(f, "%d", (int)getpid());
			fclose(f);
		}
	}
	if (o.tty)
		status =
			pump(p, console.slave, console.slave, -1, true, sig_fd);
	else
		status = pump(p, 0, 1, 2, false, sig_fd);
	hvm_process_free(p);
	if (o.detach)
		_exit(status);
out:
	rt_console_close(&console);
	free(seccomp);
	free(guest_root);
	free(envp);
	oci_spec_free(&spec);
	return status;
}

int rt_exec_main_process(const struct rt_container *c,
			 const struct oci_spec *spec, const char *root,
			 int sig_fd)
{
	struct hvm_process_spec ps = {
		.argv = (const char *const *)spec->process.args,
		.envp = (const char *const *)spec->process.env,
		.cwd = spec->process.cwd,
		.root = root,
		.uid = spec->process.uid,
		.gid = spec->process.gid,
		.flags = HVM_PROCESS_STDIN | HVM_PROCESS_STDOUT |
			 HVM_PROCESS_STDERR,
	};
	struct hvm_process_rlimit rlimits[OCI_MAX_RLIMITS];
	struct hvm_process_limits limits;
	char vsock[PATH_MAX + 32];
	struct hvm_process *p = NULL;
	void *seccomp = NULL;
	int status;

	if (exec_limits(c, &spec->process, false, rlimits, &limits, &seccomp))
		return 255;
	ps.limits = &limits;
	rt_container_path(c, RT_VSOCK_FILE, vsock, sizeof(vsock));
	/* The clone's agent answers at once; its VM starts as we try. */
	for (int waited = 0; waited < 30 * 50; waited++) {
		p = hvm_process_start(vsock, &ps);
		if (p || hvm_process_errno())
			break;
		usleep(20000);
	}
	free(seccomp);
	if (!p) {
		rt_error("container %s: %s", c->id, hvm_last_error());
		return hvm_process_errno() == ENOENT ? 127 : 126;
	}
	status = pump(p, 0, 1, 2, false, sig_fd);
	hvm_process_free(p);
	return status;
}
