// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Embedding libhintvm's guest agent API: run a command in a VM booted
 * with the agent (`hintvm run --agent`), feed it a line of input, collect
 * its stdout and stderr as they come, and report how it ended.
 *
 *   cc exec-in-guest.c $(pkg-config --cflags --libs hintvm) -o exec-in-guest
 *   ./exec-in-guest VM CMD [ARG...]       (VM: a name or a vsock socket path)
 */
#include <errno.h>
#include <hintvm/hintvm.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const char *const env[] = { "GREETING=hello from the host",
					   NULL };
	struct hvm_process_spec spec = {
		.argv = (const char *const *)argv + 2,
		.envp = env,
		.cwd = "/",
		.uid = -1,
		.gid = -1,
		.flags = HVM_PROCESS_STDIN | HVM_PROCESS_STDOUT |
			 HVM_PROCESS_STDERR,
	};
	const char line[] = "a line from the host\n";
	struct hvm_process_exit ex;
	struct hvm_process *p;
	int out, err;

	if (argc < 3) {
		fprintf(stderr, "usage: %s VM CMD [ARG...]\n", argv[0]);
		return 2;
	}
	p = hvm_process_start(argv[1], &spec);
	if (!p) {
		fprintf(stderr, "start: %s\n", hvm_last_error());
		return hvm_process_errno() == ENOENT ? 127 : 125;
	}
	printf("started: pid %d in the guest\n", hvm_process_pid(p));
	/* Input, then EOF: the stream is a socket, closing it is the EOF. */
	if (write(hvm_process_fd(p, HVM_STREAM_STDIN), line, sizeof(line) - 1) <
	    0)
		perror("stdin");
	hvm_process_close_fd(p, HVM_STREAM_STDIN);

	/* Read both outputs to EOF while they come, then the exit. */
	out = hvm_process_fd(p, HVM_STREAM_STDOUT);
	err = hvm_process_fd(p, HVM_STREAM_STDERR);
	while (out >= 0 || err >= 0) {
		struct pollfd fds[2] = { { .fd = out, .events = POLLIN },
					 { .fd = err, .events = POLLIN } };
		char buf[4096];

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!fds[i].revents)
				continue;
			n = read(fds[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				*(i ? &err : &out) = -1;
				continue;
			}
			printf("%s: %.*s", i ? "stderr" : "stdout", (int)n,
			       buf);
		}
	}
	if (hvm_process_wait(p, &ex, -1) < 0) {
		fprintf(stderr, "wait: %s\n", hvm_last_error());
		hvm_process_free(p);
		return 125;
	}
	if (ex.signaled)
		printf("ended: signal %d (status %d)\n", ex.signal, ex.status);
	else
		printf("ended: exit code %d (status %d)\n", ex.code, ex.status);
	hvm_process_free(p);
	return ex.status;
}
