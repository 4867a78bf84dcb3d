// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the control socket's request handling, through a
 * real socket: the real control thread (src/core/control.c) serves a
 * socket in a private directory, and each input is sent on a new
 * connection in up to four writes (the input's first byte picks where it
 * is cut), then the write side is shut. Every reply must be one line of
 * JSON with "ok", and the socket must keep serving. The VM behind it is a
 * stub: pause, resume and stop only change its state.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz.h"
#include "core/config.h"
#include "core/control.h"
#include "core/log.h"
#include "core/vm.h"

static struct vm vm;
static struct hvm_config cfg;
static struct sockaddr_un addr = { .sun_family = AF_UNIX };

/* The VM, as far as the control socket can see it. */
int vm_pause(struct vm *v)
{
	if (atomic_load(&v->stopping))
		return hvm_set_error(-EINVAL, "the VM is not running");
	atomic_store(&v->paused, true);
	return 0;
}

int vm_resume(struct vm *v)
{
	atomic_store(&v->paused, false);
	return 0;
}

void vm_request_stop(struct vm *v, enum hvm_exit_reason reason, uint32_t code,
		     int vcpu, const char *fmt, ...)
{
	/* Stay running: the next input talks to a live VM again. */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char dir[] = "/tmp/hintvm-fuzz-control-XXXXXX";
	struct control *ctl;

	log_set_level(LOG_ERROR);
	if (!mkdtemp(dir))
		return -1;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/ctl.sock", dir);
	cfg.mem = 256ull << 20;
	vm.cfg = &cfg;
	vm.nr_vcpus = 2;
	/* Stays up for the whole run (the socket file goes with the dir). */
	return control_start(&vm, addr.sun_path, &ctl) < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char reply[1024];
	size_t used = 0, cut;

	check(fd >= 0);
	check(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
	cut = size ? data[0] % 4 + 1 : 1;
	for (size_t sent = 0, part = size / cut + 1; sent < size;
	     sent += part) {
		size_t n = size - sent < part ? size - sent : part;

		/* The server may answer (and close) before all is sent. */
		if (send(fd, data + sent, n, MSG_NOSIGNAL) < 0)
			break;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		/* Far above the server's 1 s limit: a hang is a finding. */
		check(poll(&p, 1, 5000) == 1);
		n = recv(fd, reply + used, sizeof(reply) - 1 - used, 0);
		if (n <= 0)
			break;
		used += (size_t)n;
		check(used < sizeof(reply) - 1);
	}
	close(fd);
	reply[used] = '\0';
	/* No reply (the line never ended) or exactly one JSON line. */
	if (used) {
		check(reply[used - 1] == '\n');
		check(strchr(reply, '\n') == reply + used - 1);
		check(!strncmp(reply, "{\"ok\":", 6));
	}
	return 0;
}
