// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Embedding libhintvm: boot the built-in test kernel, capture its serial
 * console in a pipe, and report the guest's RESULT line and exit.
 *
 *   cc boot-test-kernel.c $(pkg-config --cflags --libs hintvm) -o boot
 *   ./boot [PAYLOAD [CPUS]]
 */
#include <hintvm/hintvm.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct capture {
	int fd;
	char buf[16384];
	size_t len;
};

/* Drain the pipe while the guest runs, so a chatty guest never blocks. */
static void *drain(void *arg)
{
	struct capture *c = arg;
	ssize_t n;

	for (;;) {
		size_t room = sizeof(c->buf) - 1 - c->len;
		char discard[512];

		/* Once the buffer is full, keep the pipe flowing anyway. */
		n = room ? read(c->fd, c->buf + c->len, room)
			 : read(c->fd, discard, sizeof(discard));
		if (n <= 0)
			break;
		if (room)
			c->len += (size_t)n;
	}
	c->buf[c->len] = '\0';
	return NULL;
}

int main(int argc, char **argv)
{
	const char *payload = argc > 1 ? argv[1] : "hello";
	const char *cpus = argc > 2 ? argv[2] : "2";
	struct capture cap = { 0 };
	struct hvm_config *cfg;
	struct hvm_exit exit;
	struct hvm_vm *vm;
	char cmdline[64];
	pthread_t reader;
	const char *result;
	int pipefd[2];

	if (pipe(pipefd) < 0)
		return 1;
	snprintf(cmdline, sizeof(cmdline), "test=%s", payload);
	cfg = hvm_config_new();
	if (!cfg || hvm_config_set(cfg, "cpus", cpus) < 0 ||
	    hvm_config_set(cfg, "mem", "64M") < 0 ||
	    hvm_config_set(cfg, "cmdline", cmdline) < 0 ||
	    hvm_config_set_console_fds(cfg, -1, pipefd[1]) < 0) {
		fprintf(stderr, "config: %s\n", hvm_last_error());
		return 2;
	}
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!vm) {
		fprintf(stderr, "create: %s\n", hvm_last_error());
		return 2;
	}
	cap.fd = pipefd[0];
	pthread_create(&reader, NULL, drain, &cap);
	if (hvm_vm_start(vm) < 0 || hvm_vm_wait(vm, &exit) < 0) {
		fprintf(stderr, "run: %s\n", hvm_last_error());
		return 2;
	}
	hvm_vm_destroy(vm);
	close(pipefd[1]);
	pthread_join(reader, NULL);

	result = strstr(cap.buf, "RESULT ");
	printf("libhintvm %s: guest ended with %s (status %d)\n", hvm_version(),
	       hvm_exit_reason_name(exit.reason), hvm_exit_status(&exit));
	printf("%.*s\n", result ? (int)strcspn(result, "\r\n") : 9,
	       result ? result : "no RESULT");
	return hvm_exit_status(&exit);
}
