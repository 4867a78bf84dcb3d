// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/control.h"
#include "core/log.h"
#include "core/vm.h"

#define MAX_REQUEST 256
#define MAX_CLIENTS 8
/* A request line comes at once or not at all: a human types `hintvm ctl`. */
#define CLIENT_TIMEOUT_MS 1000

struct control {
	struct vm *vm;
	char *path;
	int listen_fd;
	int wake_fd;
	pthread_t thread;
};

static const char *vm_state(struct vm *vm)
{
	if (atomic_load(&vm->stopping))
		return "stopping";
	return atomic_load(&vm->paused) ? "paused" : "running";
}

int control_handle(struct vm *vm, const char *request, char *reply, size_t len)
{
	if (!strcmp(request, "status")) {
		snprintf(
			reply, len,
			"{\"ok\":true,\"state\":\"%s\",\"vcpus\":%u,\"mem_mib\":%llu}",
			vm_state(vm), vm->nr_vcpus,
			(unsigned long long)(vm->cfg->mem >> 20));
		return 0;
	}
	if (!strcmp(request, "pause") || !strcmp(request, "resume")) {
		int r = request[0] == 'p' ? vm_pause(vm) : vm_resume(vm);

		if (r < 0) {
			snprintf(
				reply, len,
				"{\"ok\":false,\"error\":\"cannot %s: the VM is %s\"}",
				request, vm_state(vm));
			return -1;
		}
		snprintf(reply, len, "{\"ok\":true,\"state\":\"%s\"}",
			 vm_state(vm));
		return 0;
	}
	if (!strcmp(request, "stop")) {
		vm_request_stop(vm, HVM_EXIT_STOPPED, 0, -1,
				"stopped through the control socket");
		snprintf(reply, len, "{\"ok\":true,\"state\":\"stopping\"}");
		return 0;
	}
	/* Echo only a short, printable prefix of what we did not understand. */
	char shown[33];
	size_t n = 0;

	for (; request[n] && n < sizeof(shown) - 1; n++)
		shown[n] = (request[n] >= 0x20 && request[n] < 0x7f &&
			    request[n] != '"' && request[n] != '\\')
				   ? request[n]
				   : '?';
	shown[n] = '\0';
	snprintf(
		reply, len,
		"{\"ok\":false,\"error\":\"unknown request '%s'; expected status, pause, resume or stop\"}",
		shown);
	return -1;
}

/* A connected client: what it sent so far and until when it may send. */
struct client {
	int fd; /* -1: free slot */
	size_t used;
	uint64_t deadline_ms;
	char buf[MAX_REQUEST];
};

static uint64_t now_ms(void)
{
	return hvm_monotonic_ns() / 1000000;
}

static void client_close(struct client *c)
{
	close(c->fd);
	c->fd = -1;
}

/* Answer C (with ERROR when its request was refused unread) and close it. */
static void client_reply(struct control *ctl, struct client *c,
			 const char *error)
{
	char reply[512];

	if (error)
		snprintf(reply, sizeof(reply),
			 "{\"ok\":false,\"error\":\"%s\"}", error);
	else
		control_handle(ctl->vm, c->buf, reply, sizeof(reply));
	strcat(reply, "\n");
	if (send(c->fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		pr_debug("control: client went away before the reply");
	client_close(c);
}

/* Take what C sent; answer and close once its line is complete. */
static void client_read(struct control *ctl, struct client *c)
{
	ssize_t n = recv(c->fd, c->buf + c->used, sizeof(c->buf) - 1 - c->used,
			 MSG_DONTWAIT);
	size_t line;
	char *nl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(c); /* gone before its line: nobody to answer */
		return;
	}
	c->used += (size_t)n;
	c->buf[c->used] = '\0';
	nl = memchr(c->buf, '\n', c->used);
	line = nl ? (size_t)(nl - c->buf) : c->used;
	if (nl) {
		*nl = '\0';
		if (line && c->buf[line - 1] == '\r')
			c->buf[--line] = '\0';
	}
	/* Requests are printable ASCII: NUL or binary gets an error now. */
	for (size_t i = 0; i < line; i++) {
		unsigned char ch = (unsigned char)c->buf[i];

		if (ch == '\r' && !nl && i + 1 == line)
			break; /* its newline may still come */
		if (ch < 0x20 || ch > 0x7e) {
			client_reply(ctl, c,
				     "request is not a line of printable text");
			return;
		}
	}
	if (nl)
		client_reply(ctl, c, NULL);
	else if (c->used == sizeof(c->buf) - 1)
		client_reply(ctl, c, "request longer than 254 bytes");
}

/* Only the VM's own user and root may steer it (SO_PEERCRED). */
static bool client_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred.uid == 0 || cred.uid == geteuid();
}

/*
 * Take a new connection into a free slot, or into the slot of the client
 * that has waited longest without a complete request: idle connections
 * cannot hold the socket, however many there are. Its line usually came
 * with the connection, so try to answer it right away.
 */
static void client_accept(struct control *ctl, struct client *clients)
{
	int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	struct client *slot = NULL;

	if (fd < 0)
		return;
	if (!client_allowed(fd)) {
		static const char denied[] =
			"{\"ok\":false,\"error\":\"permission denied: not the VM's user or root\"}\n";

		if (send(fd, denied, sizeof(denied) - 1,
			 MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			pr_debug("control: refused client went away");
		close(fd);
		return;
	}
	for (unsigned int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &clients[i];

		if (c->fd < 0) {
			slot = c;
			break;
		}
		if (!slot || c->deadline_ms < slot->deadline_ms)
			slot = c;
	}
	if (slot->fd >= 0)
		client_close(slot); /* the oldest idle one makes room */
	slot->fd = fd;
	slot->used = 0;
	slot->deadline_ms = now_ms() + CLIENT_TIMEOUT_MS;
	client_read(ctl, slot);
}

/*
 * Serves up to MAX_CLIENTS clients at once; each gets CLIENT_TIMEOUT_MS for
 * its line. A new connection always gets a slot (the oldest idle client is
 * dropped for it), so connections that say nothing delay nobody.
 */
static void *control_thread(void *arg)
{
	struct control *ctl = arg;
	struct client clients[MAX_CLIENTS];

	for (unsigned int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	for (;;) {
		struct pollfd fds[2 + MAX_CLIENTS];
		struct client *polled[MAX_CLIENTS];
		unsigned int nfds = 2;
		uint64_t now = now_ms(), next = UINT64_MAX;
		int timeout;

		fds[0] =
			(struct pollfd){ .fd = ctl->wake_fd, .events = POLLIN };
		for (unsigned int i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = &clients[i];

			if (c->fd >= 0 && c->deadline_ms <= now)
				client_close(c); /* too slow: no answer */
			if (c->fd < 0)
				continue;
			if (c->deadline_ms < next)
				next = c->deadline_ms;
			polled[nfds - 2] = c;
			fds[nfds++] = (struct pollfd){ .fd = c->fd,
						       .events = POLLIN };
		}
		fds[1] = (struct pollfd){ .fd = ctl->listen_fd,
					  .events = POLLIN };
		timeout = next == UINT64_MAX ? -1 : (int)(next - now);
		if (poll(fds, nfds, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents)
			break;
		for (unsigned int i = 2; i < nfds; i++)
			if (fds[i].revents)
				client_read(ctl, polled[i - 2]);
		if (fds[1].revents)
			client_accept(ctl, clients);
	}
	for (unsigned int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
	return NULL;
}

/* A socket file nobody listens on is left over from a dead VM. */
static int remove_stale_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return hvm_set_error(
			-EEXIST,
			"--control: %s exists and is not a socket; refusing to replace it",
			path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	r = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	close(fd);
	if (r == 0)
		return hvm_set_error(-EADDRINUSE,
				     "--control: another VM is serving %s",
				     path);
	return unlink(path) < 0 ? -errno : 0;
}

int control_start(struct vm *vm, const char *path, struct control **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct control *ctl;
	int r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return hvm_set_error(
			-ENAMETOOLONG,
			"--control: path '%s' is longer than the %zu bytes a Unix socket allows",
			path, sizeof(addr.sun_path) - 1);
	r = remove_stale_socket(path);
	if (r < 0)
		return r;
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return hvm_set_error(-ENOMEM, "out of memory");
	ctl->vm = vm;
	ctl->wake_fd = eventfd(0, EFD_CLOEXEC);
	ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ctl->path = strdup(path);
	strcpy(addr.sun_path, path);
	/*
	 * 0600 whatever the umask: bind() gives the file the socket inode's
	 * mode less the umask, so set that first (Linux), and again on the
	 * file in case this kernel does not. SO_PEERCRED is checked anyway.
	 */
	if (ctl->wake_fd < 0 || ctl->listen_fd < 0 || !ctl->path ||
	    fchmod(ctl->listen_fd, S_IRUSR | S_IWUSR) < 0 ||
	    bind(ctl->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(path, S_IRUSR | S_IWUSR) < 0 ||
	    listen(ctl->listen_fd, 64) < 0) {
		r = hvm_set_errno_error("--control: cannot listen on %s", path);
		if (ctl->listen_fd >= 0)
			close(ctl->listen_fd);
		if (ctl->wake_fd >= 0)
			close(ctl->wake_fd);
		free(ctl->path);
		free(ctl);
		return r;
	}
	if (log_thread_create(&ctl->thread, control_thread, ctl)) {
		ctl->thread = 0;
		control_stop(ctl);
		return hvm_set_error(-EAGAIN,
				     "cannot start the control thread");
	}
	*out = ctl;
	return 0;
}

void control_stop(struct control *ctl)
{
	uint64_t one = 1;

	if (!ctl)
		return;
	if (ctl->thread) {
		if (write(ctl->wake_fd, &one, sizeof(one)) < 0)
			pr_warn("cannot wake the control thread");
		pthread_join(ctl->thread, NULL);
	}
	close(ctl->listen_fd);
	close(ctl->wake_fd);
	unlink(ctl->path);
	free(ctl->path);
	free(ctl);
}
