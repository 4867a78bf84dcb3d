// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * agent-keep SOCKET: a process started with HVM_PROCESS_KEEP outlives its
 * handle, and a second handle from hvm_process_attach() signals it and
 * collects its exit (as an OCI runtime's create, kill and wait would,
 * from separate invocations). Prints "keep: ok status 143" on success.
 */
#include <signal.h>
#include <stdio.h>

#include "hintvm/hintvm.h"

int main(int argc, char **argv)
{
	static const char *const cmd[] = { "sleep", "60", NULL };
	struct hvm_process_spec spec = {
		.argv = cmd, .uid = -1, .gid = -1, .flags = HVM_PROCESS_KEEP
	};
	struct hvm_process_exit ex;
	struct hvm_process *p, *q;
	unsigned int session;

	if (argc != 2)
		return 2;
	p = hvm_process_start(argv[1], &spec);
	if (!p) {
		fprintf(stderr, "start: %s\n", hvm_last_error());
		return 1;
	}
	session = hvm_process_session(p);
	hvm_process_free(p); /* KEEP: the process runs on */
	q = hvm_process_attach(argv[1], session);
	if (!q) {
		fprintf(stderr, "attach: %s\n", hvm_last_error());
		return 1;
	}
	if (hvm_process_signal(q, SIGTERM) < 0 ||
	    hvm_process_wait(q, &ex, 30000) < 0) {
		fprintf(stderr, "signal/wait: %s\n", hvm_last_error());
		return 1;
	}
	hvm_process_free(q);
	printf("keep: %s status %d\n", ex.status == 143 ? "ok" : "wrong",
	       ex.status);
	q = hvm_process_attach(argv[1], session);
	if (q) {
		fprintf(stderr, "attach after the wait collected it worked\n");
		return 1;
	}
	return ex.status == 143 ? 0 : 1;
}
