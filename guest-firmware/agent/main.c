// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm-agent (docs/agent.md). Three ways to run it:
 *
 *   as PID 1 of an initramfs (`hintvm initramfs`, `hintvm run --agent`):
 *     boot duties (pid1.c), then serve on vsock; init's arguments after
 *     "--" on the kernel command line are the main process, whose exit is
 *     reported to the host and powers the VM off;
 *   started by an existing init: `hintvm-agent [--port N]` serves on vsock;
 *   on a host, for tests: `hintvm-agent --hybrid PATH [-- CMD ARGS]`
 *     serves the host side of the hybrid vsock protocol on the Unix socket
 *     PATH and reports CMD's exit to PATH_1025, as in a VM.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "host_stdio.h"
#include "abi/agent_proto.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: hintvm-agent [--port N] [--hybrid PATH] [--debug] [-- CMD [ARG...]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct agent_listen where = { .port = AGENT_VSOCK_PORT };
	struct agent_main main_proc = { 0 };
	bool pid1 = getpid() == 1;
	int i, status;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!pid1 && !strcmp(argv[i], "--port") &&
			   i + 1 < argc) {
			where.port = (unsigned int)strtoul(argv[++i], NULL, 10);
		} else if (!pid1 && !strcmp(argv[i], "--hybrid") &&
			   i + 1 < argc) {
			where.hybrid_path = argv[++i];
		} else if (!strcmp(argv[i], "--debug")) {
			agent_debug = true;
		} else if (pid1) {
			/* The kernel hands init stray words: not ours. */
			continue;
		} else {
			usage();
		}
	}
	if (!pid1 && i < argc)
		main_proc.argv = argv + i;
	if (pid1) {
		struct agent_boot boot = { 0 };
		int n;

		setsid();
		if (agent_pid1_setup(&boot) < 0)
			agent_log("boot incomplete; serving anyway");
		/*
		 * The kernel hands init the stray words of its command line
		 * too, before what followed "--": count the latter there.
		 */
		n = agent_cmdline_init_argc();
		if (n > 0 && n < argc)
			main_proc.argv = argv + argc - n;
	}
	status = agent_serve(&where, &main_proc);
	if (main_proc.argv) {
		int r;

		/* What it wrote is out before the exit is told. */
		agent_stdio_finish(main_proc.stdio);
		r = agent_report_exit(&where, main_proc.pid, status);

		if (r < 0 && agent_debug)
			agent_log("exit report: %s", strerror(-r));
	}
	if (pid1)
		agent_pid1_poweroff();
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
