// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * e2e-run: run one command inside the L1 test VM with a deadline and time
 * it. The command's output (stdout and stderr) goes to LOG; the time at
 * which MARKER first appears in it is measured from just before the
 * fork, so for a VMM it is "process start to guest init". Prints one line:
 *
 *   status=<exit code>|timeout|unkillable|signal-<n> marker_ms=<ms or -1>
 *   wall_ms=<ms>
 *
 * Past the deadline, the state and kernel stack of each of the command's
 * threads go to LOG before it is killed (and again if SIGKILL does not end
 * it within 30 s: "unkillable").
 *
 * usage: e2e-run -t SECONDS -m MARKER -o LOG [-i INPUT] -- COMMAND [ARG...]
 * The command's stdin is INPUT (a file or fifo), else /dev/null.
 * Static and dependency-free: the L1 initramfs has only busybox besides.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Copy a small /proc file into the log, prefixed, one line at a time. */
static void log_proc_file(int log_fd, const char *prefix, const char *path)
{
	char buf[4096], line[4200];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		int len = snprintf(line, sizeof(line), "%s%s\n", prefix, l);

		if (len > 0 && write(log_fd, line, (size_t)len) < 0)
			return;
	}
}

/*
 * A command past its deadline: what each of its threads is doing (state,
 * wait channel, kernel stack), so that a hang names where it hangs (in a
 * KVM ioctl, in io_uring, in user space) rather than only that it did.
 */
static void log_threads(int log_fd, pid_t pid)
{
	char dir[64], path[128], prefix[96];
	struct dirent *d;
	DIR *tasks;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	tasks = opendir(dir);
	if (!tasks)
		return;
	while ((d = readdir(tasks))) {
		static const char *const files[] = { "comm", "stat", "wchan",
						     "stack" };

		if (d->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(prefix, sizeof(prefix),
				 "e2e-run: thread %.16s %s: ", d->d_name,
				 files[i]);
			snprintf(path, sizeof(path), "%s/%.16s/%s", dir,
				 d->d_name, files[i]);
			log_proc_file(log_fd, prefix, path);
		}
	}
	closedir(tasks);
	log_proc_file(log_fd, "e2e-run: loadavg: ", "/proc/loadavg");
}

/* waitpid with a bound: 0 when PID was reaped, -1 when it is still there. */
static int wait_bounded(pid_t pid, int *status, int seconds)
{
	for (int i = 0; i < seconds * 10; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 0;
		usleep(100000);
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: e2e-run -t SECONDS -m MARKER -o LOG [-i INPUT] -- COMMAND...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *marker = NULL, *log_path = NULL, *input = "/dev/null";
	long long start, deadline, marker_ms = -1;
	/* Keep the tail of the previous read so a split marker is found. */
	char window[8192];
	size_t window_len = 0, marker_len;
	int timeout_s = 60, opt, pipefd[2], log_fd, status = 0;
	int timed_out = 0, eof = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "t:m:o:i:")) != -1) {
		switch (opt) {
		case 't':
			timeout_s = atoi(optarg);
			break;
		case 'm':
			marker = optarg;
			break;
		case 'o':
			log_path = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		default:
			usage();
		}
	}
	if (!marker || !log_path || optind >= argc || timeout_s <= 0)
		usage();
	marker_len = strlen(marker);
	if (marker_len == 0 || marker_len >= sizeof(window) / 2)
		usage();
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0 || pipe2(pipefd, O_CLOEXEC)) {
		perror("e2e-run");
		return 2;
	}

	start = now_ms();
	deadline = start + timeout_s * 1000LL;
	pid = fork();
	if (pid < 0) {
		perror("e2e-run: fork");
		return 2;
	}
	if (pid == 0) {
		int in_fd = open(input, O_RDONLY);

		if (in_fd < 0) {
			fprintf(stderr, "e2e-run: %s: %s\n", input,
				strerror(errno));
			_exit(127);
		}
		dup2(in_fd, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "e2e-run: exec %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);

	while (!eof) {
		long long left = deadline - now_ms();
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		char buf[4096];
		ssize_t n;

		if (left <= 0) {
			timed_out = 1;
			log_threads(log_fd, pid);
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) <= 0)
			continue;
		n = read(pipefd[0], buf, sizeof(buf));
		if (n <= 0) {
			eof = 1;
			break;
		}
		if (write(log_fd, buf, (size_t)n) != n)
			perror("e2e-run: log");
		if (marker_ms >= 0)
			continue;
		for (ssize_t off = 0; off < n;) {
			size_t room = sizeof(window) - window_len;
			size_t chunk = (size_t)(n - off) < room
					       ? (size_t)(n - off)
					       : room;

			memcpy(window + window_len, buf + off, chunk);
			window_len += chunk;
			off += (ssize_t)chunk;
			if (memmem(window, window_len, marker, marker_len)) {
				marker_ms = now_ms() - start;
				break;
			}
			/* Keep the last marker_len - 1 bytes. */
			if (window_len >= marker_len) {
				memmove(window,
					window + window_len - (marker_len - 1),
					marker_len - 1);
				window_len = marker_len - 1;
			}
		}
	}
	/* A process that SIGKILL cannot end is stuck in the kernel: say so
	 * and let the other tests run rather than wait for it forever. */
	if (wait_bounded(pid, &status, timed_out ? 30 : 600) < 0) {
		log_threads(log_fd, pid);
		printf("status=unkillable");
	} else if (timed_out)
		printf("status=timeout");
	else if (WIFEXITED(status))
		printf("status=%d", WEXITSTATUS(status));
	else
		printf("status=signal-%d", WTERMSIG(status));
	printf(" marker_ms=%lld wall_ms=%lld\n", marker_ms, now_ms() - start);
	close(log_fd);
	return 0;
}
