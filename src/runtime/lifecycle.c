// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The lifecycle commands after create: start, state, kill, delete, pause,
 * resume, ps, list, update. Each loads the state directory, derives the
 * status from it and from the VMM process, and acts on the VMM process or
 * the VM's control socket.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hintvm/hintvm.h"
#include "network.h"
#include "state.h"

/* The one positional argument of a command, after its options. */
static const char *one_id(int argc, char **argv, int first, const char *cmd)
{
	if (first != argc - 1) {
		rt_error("%s: expected one container id", cmd);
		return NULL;
	}
	return argv[first];
}

int cmd_start(int argc, char **argv)
{
	struct rt_container c;
	char path[PATH_MAX + 16], byte;
	const char *id = one_id(argc, argv, 1, "start");
	struct pollfd pfd;
	int fd;

	if (!id || rt_container_load(&c, id))
		return 1;
	switch (rt_container_status(&c)) {
	case RT_CREATED:
		break;
	case RT_STOPPED:
		rt_error("cannot start a container that has stopped");
		return 1;
	default:
		rt_error("cannot start an already running container");
		return 1;
	}
	rt_container_path(&c, "exec.fifo", path, sizeof(path));
	/*
	 * Non-blocking: the VMM process's open for writing completes as
	 * soon as we have it open, then it writes one byte.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rt_error("cannot start container %s: %s", id, strerror(errno));
		return 1;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (int waited = 0; waited < 10000; waited += 100) {
		if (poll(&pfd, 1, 100) > 0 && read(fd, &byte, 1) == 1)
			break;
		if (!rt_process_alive(c.pid, c.pid_start))
			break;
	}
	close(fd);
	unlink(path);
	if (!rt_process_alive(c.pid, c.pid_start)) {
		/* It may have run and ended already: that is a start too. */
		rt_debug("container %s ended right after start", id);
	}
	return 0;
}

int cmd_state(int argc, char **argv)
{
	struct rt_container c;
	const char *id = one_id(argc, argv, 1, "state");
	char *json;

	if (!id || rt_container_load(&c, id))
		return 1;
	json = rt_container_state_json(&c);
	if (!json)
		return 1;
	printf("%s\n", json);
	free(json);
	return 0;
}

int rt_parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {
		{ "HUP", SIGHUP },	 { "INT", SIGINT },
		{ "QUIT", SIGQUIT },	 { "ILL", SIGILL },
		{ "TRAP", SIGTRAP },	 { "ABRT", SIGABRT },
		{ "BUS", SIGBUS },	 { "FPE", SIGFPE },
		{ "KILL", SIGKILL },	 { "USR1", SIGUSR1 },
		{ "SEGV", SIGSEGV },	 { "USR2", SIGUSR2 },
		{ "PIPE", SIGPIPE },	 { "ALRM", SIGALRM },
		{ "TERM", SIGTERM },	 { "CHLD", SIGCHLD },
		{ "CONT", SIGCONT },	 { "STOP", SIGSTOP },
		{ "TSTP", SIGTSTP },	 { "TTIN", SIGTTIN },
		{ "TTOU", SIGTTOU },	 { "URG", SIGURG },
		{ "XCPU", SIGXCPU },	 { "XFSZ", SIGXFSZ },
		{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
		{ "WINCH", SIGWINCH },	 { "IO", SIGIO },
		{ "PWR", SIGPWR },	 { "SYS", SIGSYS },
	};
	char *end;
	long n;

	if (!s || !*s)
		return -1;
	n = strtol(s, &end, 10);
	if (!*end)
		return n > 0 && n < NSIG ? (int)n : -1;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].sig;
	return -1;
}

int cmd_kill(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct rt_container c;
	enum rt_status status;
	int opt, sig = SIGTERM;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+a", longopts, NULL)) != -1)
		if (opt != 'a') /* --all: the VM holds every process anyway */
			return 1;
	if (optind != argc - 1 && optind != argc - 2) {
		rt_error("kill: expected a container id and a signal");
		return 1;
	}
	if (optind == argc - 2) {
		sig = rt_parse_signal(argv[argc - 1]);
		if (sig < 0) {
			rt_error("kill: unknown signal \"%s\"", argv[argc - 1]);
			return 1;
		}
	}
	if (rt_container_load(&c, argv[optind]))
		return 1;
	status = rt_container_status(&c);
	if (status == RT_STOPPED || status == RT_CREATING) {
		rt_error("container not running");
		return 1;
	}
	/*
	 * SIGKILL ends the VMM process and so the VM at once; the VMM
	 * process hands any other signal to the container's main process
	 * in the guest (create.c), or ends the VM with 128+N when the guest
	 * cannot take it. A paused VM's guest cannot act on one until
	 * resumed, as a frozen runc container.
	 */
	if (kill(c.pid, sig)) {
		rt_error("kill %d: %s", (int)c.pid, strerror(errno));
		return 1;
	}
	return 0;
}

/* Wait up to TIMEOUT_MS for the VMM process to be gone. */
static bool wait_gone(const struct rt_container *c, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		if (!rt_process_alive(c->pid, c->pid_start))
			return true;
		usleep(10000);
	}
	return !rt_process_alive(c->pid, c->pid_start);
}

int cmd_delete(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct rt_container c;
	enum rt_status status;
	bool force = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+f", longopts, NULL)) != -1) {
		if (opt != 'f')
			return 1;
		force = true;
	}
	if (optind != argc - 1) {
		rt_error("delete: expected one container id");
		return 1;
	}
	if (rt_container_load(&c, argv[optind])) {
		/* --force of what is not there is not an error (runc). */
		return force ? 0 : 1;
	}
	status = rt_container_status(&c);
	if ((status == RT_RUNNING || status == RT_PAUSED) && !force) {
		rt_error("cannot delete container %s that is not stopped: %s",
			 c.id, rt_status_name(status));
		return 1;
	}
	if (status != RT_STOPPED && c.pid > 0) {
		kill(c.pid, SIGKILL);
		if (!wait_gone(&c, 10000)) {
			rt_error("the VMM process %d of %s does not end",
				 (int)c.pid, c.id);
			return 1;
		}
	}
	/* The tap lives in the engine's namespace until removed. */
	if (c.netns[0])
		rt_net_teardown(c.netns);
	return rt_container_remove(&c) ? 1 : 0;
}

/* One control-socket request ("pause", "resume"); 0 when it says ok. */
static int control_request(const struct rt_container *c, const char *cmd)
{
	char path[PATH_MAX + 16], reply[1024];
	struct pollfd pfd;
	size_t used = 0;
	int fd;

	rt_container_path(c, "control.sock", path, sizeof(path));
	fd = hvm_control_connect(path);
	if (fd < 0) {
		rt_error("%s: %s", cmd, hvm_last_error());
		return -1;
	}
	if (dprintf(fd, "%s\n", cmd) < 0) {
		close(fd);
		return -1;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (used < sizeof(reply) - 1 && !memchr(reply, '\n', used)) {
		ssize_t n;

		if (poll(&pfd, 1, 10000) <= 0)
			break;
		n = read(fd, reply + used, sizeof(reply) - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	reply[used] = '\0';
	if (!strstr(reply, "\"ok\":true")) {
		rt_error("%s: the VM answered: %s", cmd,
			 used ? reply : "nothing");
		return -1;
	}
	return 0;
}

int cmd_pause(int argc, char **argv)
{
	struct rt_container c;
	char path[PATH_MAX + 16];
	const char *id = one_id(argc, argv, 1, "pause");
	int fd;

	if (!id || rt_container_load(&c, id))
		return 1;
	if (rt_container_status(&c) != RT_RUNNING) {
		rt_error("container not running");
		return 1;
	}
	if (control_request(&c, "pause"))
		return 1;
	rt_container_path(&c, "paused", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	return 0;
}

int cmd_resume(int argc, char **argv)
{
	struct rt_container c;
	char path[PATH_MAX + 16];
	const char *id = one_id(argc, argv, 1, "resume");

	if (!id || rt_container_load(&c, id))
		return 1;
	if (rt_container_status(&c) != RT_PAUSED) {
		rt_error("container not paused");
		return 1;
	}
	if (control_request(&c, "resume"))
		return 1;
	rt_container_path(&c, "paused", path, sizeof(path));
	unlink(path);
	return 0;
}

/* ps: the host processes of the container: the VMM process. */
int cmd_ps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct rt_container c;
	const char *format = "table";
	bool alive;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+f:", longopts, NULL)) != -1) {
		if (opt != 'f')
			return 1;
		format = optarg;
	}
	if (optind >= argc) {
		rt_error("ps: expected a container id");
		return 1;
	}
	if (rt_container_load(&c, argv[optind]))
		return 1;
	alive = rt_process_alive(c.pid, c.pid_start);
	if (!strcmp(format, "json")) {
		if (alive)
			printf("[%d]\n", (int)c.pid);
		else
			printf("[]\n");
	} else {
		printf("PID CMD\n");
		if (alive)
			printf("%d hintvm-vmm\n", (int)c.pid);
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	bool json = argc > 1 && (!strcmp(argv[argc - 1], "json") ||
				 !strcmp(argv[argc - 1], "--format=json"));
	DIR *d = opendir(rt.root);
	struct dirent *e;
	bool first = true;

	if (json)
		printf("[");
	else
		printf("ID PID STATUS BUNDLE CREATED\n");
	while (d && (e = readdir(d))) {
		struct rt_container c;
		char path[PATH_MAX + 300];

		if (e->d_name[0] == '.' || !rt_valid_id(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/state.json", rt.root,
			 e->d_name);
		if (access(path, F_OK) || rt_container_load(&c, e->d_name))
			continue;
		if (json) {
			char *s = rt_container_state_json(&c);

			printf("%s%s", first ? "" : ",", s ? s : "{}");
			free(s);
		} else {
			printf("%s %d %s %s %s\n", c.id, (int)c.pid,
			       rt_status_name(rt_container_status(&c)),
			       c.bundle, c.created);
		}
		first = false;
	}
	if (json)
		printf("]\n");
	if (d)
		closedir(d);
	return 0;
}

int cmd_update(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	rt_error(
		"update: changing a running container's resources is not supported (the VM's vCPUs and RAM are fixed at create)");
	return 1;
}
