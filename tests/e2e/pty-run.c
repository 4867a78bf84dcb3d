// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pty-run [-r ROWS] [-c COLS] -- CMD [ARG...]: run CMD on a new
 * pseudo-terminal of the given window size, copy our stdin to it and its
 * output to our stdout, and exit with CMD's status (128+N for a signal).
 * The e2e tiers' stand-in for script(1), which the L1's busybox lacks:
 * a test types into `hintvm exec -t` through it. Our stdin's EOF is not
 * passed on (a terminal has none); CMD's exit ends the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int copy(int from, int to)
{
	char buf[4096];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return -1;
	for (ssize_t done = 0; done < n;) {
		ssize_t w = write(to, buf + done, (size_t)(n - done));

		if (w < 0 && errno != EINTR)
			return -1;
		if (w > 0)
			done += w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	int opt, master, slave, status;
	int stdin_open = 1;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+r:c:")) != -1) {
		if (opt == 'r')
			ws.ws_row = (unsigned short)atoi(optarg);
		else if (opt == 'c')
			ws.ws_col = (unsigned short)atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr,
			"usage: pty-run [-r ROWS] [-c COLS] -- CMD [ARG...]\n");
		return 2;
	}
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
		perror("pty-run: posix_openpt");
		return 2;
	}
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (slave < 0) {
		perror("pty-run: open slave");
		return 2;
	}
	ioctl(slave, TIOCSWINSZ, &ws);
	pid = fork();
	if (pid == 0) {
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		for (int i = 0; i < 3; i++)
			dup2(slave, i);
		if (slave > 2)
			close(slave);
		execvp(argv[optind], argv + optind);
		perror("pty-run: exec");
		_exit(127);
	}
	close(slave);
	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = master, .events = POLLIN },
			{ .fd = stdin_open ? 0 : -1, .events = POLLIN },
		};

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents && copy(master, 1) < 0)
			break; /* EIO: every slave closed, CMD is gone */
		if (fds[1].revents && copy(0, master) < 0)
			stdin_open = 0;
	}
	if (waitpid(pid, &status, 0) < 0)
		return 2;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status)
				   : WEXITSTATUS(status);
}
