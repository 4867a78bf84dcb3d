// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * agent-container SOCKET CGROUP_ROOT: a pod container's process as the
 * shim starts it (docs/shim.md, Pods), against hintvm-agent --hybrid on
 * the host, run as root with HINTVM_TASK_CGROUP_FD naming CGROUP_ROOT/task
 * (a directory laid out as cgroup2's; agent-test.sh makes it):
 *
 * - its own process (cgroup "c1", memory max, PID namespace "new") is
 *   PID 1 of its namespace, and its cgroup.procs and memory.max are
 *   written;
 * - an exec joining it ("join") sees that PID 1 and only its namespace's
 *   processes in its /proc, and a /dev of its own (a tmpfs with the
 *   default device nodes, devpts, shm);
 * - CGROUP_SET (UpdateContainerResources) writes its memory.max and
 *   cpu.max, and refuses a container that does not exist;
 * - once the container's process is gone its namespace is too: a join is
 *   refused, and a new container of that name gets a new one.
 *
 * Prints one "ok"/"not ok" line per check (TAP without the plan).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hintvm/hintvm.h"

static int failed;

static void check(int ok, const char *what, const char *detail)
{
	printf("%s - container: %s%s%s\n", ok ? "ok" : "not ok", what,
	       detail && !ok ? " # " : "", detail && !ok ? detail : "");
	failed |= !ok;
}

/* The process's stdout up to its first newline (N bytes at most). */
static void read_line(struct hvm_process *p, char *buf, size_t n)
{
	int fd = hvm_process_fd(p, HVM_STREAM_STDOUT);
	size_t got = 0;

	while (got + 1 < n) {
		ssize_t r = read(fd, buf + got, 1);

		if (r <= 0 || buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
}

static struct hvm_process *start(const char *sock, unsigned int pidns,
				 unsigned long long mem, const char *script)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct hvm_process_spec spec = {
		.argv = argv,
		.uid = -1,
		.gid = -1,
		.flags = HVM_PROCESS_STDOUT,
		/* The host's root, but through the pod path: its own mount
		 * namespace and a /proc of its PID namespace. */
		.root = "/",
		.cgroup = "c1",
		.memory_max = mem,
		.pidns = pidns,
	};

	return hvm_process_start(sock, &spec);
}

static void file_is(const char *dir, const char *name, const char *want,
		    const char *what)
{
	char path[4096], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/ctr-c1/%s", dir, name);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s %s", name, what);
	check(!strcmp(buf, want), path, buf);
}

int main(int argc, char **argv)
{
	struct hvm_process *init, *ex;
	struct hvm_process_exit st;
	char line[256];

	if (argc != 3)
		return 2;
	init = start(argv[1], HVM_PIDNS_NEW, 33554432,
		     "echo pid=$$; exec sleep 60");
	if (!init) {
		check(0, "its own process starts", hvm_last_error());
		return 1;
	}
	read_line(init, line, sizeof(line));
	check(!strcmp(line, "pid=1"), "its process is PID 1 of its own", line);
	file_is(argv[2], "memory.max", "33554432", "at its start");
	file_is(argv[2], "cgroup.procs", "0", "joined by its process");
	/* UpdateContainerResources: CGROUP_SET. */
	check(hvm_guest_cgroup_set(argv[1], "c1", 50331648, 50000, 100000) == 0,
	      "CGROUP_SET", hvm_last_error());
	file_is(argv[2], "memory.max", "50331648", "after CGROUP_SET");
	file_is(argv[2], "cpu.max", "50000 100000", "after CGROUP_SET");
	check(hvm_guest_cgroup_set(argv[1], "c9", 1 << 20, 0, 0) == -ENOENT,
	      "CGROUP_SET of no such container: ENOENT", hvm_last_error());

	ex = start(argv[1], HVM_PIDNS_JOIN, 0,
		   "echo $(cat /proc/1/comm) $(ls /proc | grep -c '^[0-9]')");
	if (!ex) {
		check(0, "an exec joins it", hvm_last_error());
		return 1;
	}
	read_line(ex, line, sizeof(line));
	/* sleep (PID 1), the exec's sh, and its ls and grep at most. */
	check(!strncmp(line, "sleep ", 6) && atoi(line + 6) >= 2 &&
		      atoi(line + 6) <= 5,
	      "an exec sees its PID 1 and only its processes", line);
	hvm_process_wait(ex, &st, 30000);
	hvm_process_free(ex);
	/* Its /dev: a tmpfs of its own with the default nodes, devpts. */
	ex = start(argv[1], HVM_PIDNS_JOIN, 0,
		   "[ -c /dev/zero ] && [ -c /dev/null ] && [ -L /dev/fd ] &&"
		   " echo $(stat -f -c %T /dev /dev/pts /dev/shm)"
		   " $(head -c 3 /dev/zero | od -An -tx1)");
	if (ex)
		read_line(ex, line, sizeof(line));
	check(ex && !strcmp(line, "tmpfs devpts tmpfs 00 00 00"),
	      "its /dev is a tmpfs with the default devices, devpts, shm",
	      ex ? line : hvm_last_error());
	if (ex) {
		hvm_process_wait(ex, &st, 30000);
		hvm_process_free(ex);
	}

	hvm_process_signal(init, SIGKILL);
	check(hvm_process_wait(init, &st, 30000) == 0 && st.status == 137,
	      "its process ends by SIGKILL", NULL);
	hvm_process_free(init);
	/* The agent reaps it before it takes the next request. */
	ex = start(argv[1], HVM_PIDNS_JOIN, 0, "true");
	check(!ex && hvm_process_errno() == ESRCH,
	      "no exec joins an ended container", hvm_last_error());
	hvm_process_free(ex);
	init = start(argv[1], HVM_PIDNS_NEW, 0, "echo pid=$$");
	if (init)
		read_line(init, line, sizeof(line));
	check(init && !strcmp(line, "pid=1"),
	      "a new container of the name gets a new namespace",
	      init ? line : hvm_last_error());
	if (init) {
		hvm_process_wait(init, &st, 30000);
		hvm_process_free(init);
	}
	return failed;
}
