// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host end of virtio-vsock's connections (see vsock_device.h): one
 * epoll set, which the VM's event loop watches, holds the hybrid socket,
 * every connection's host fd, a timerfd for deadlines and an eventfd the
 * device kicks itself with. Here: accepting clients and reading their
 * CONNECT line, dialing UDS_PATH_P or an in-process listener for a guest
 * connection, the epoll interest of each fd (read only with guest credit,
 * write only with guest data waiting, so level-triggered epoll never
 * spins), moving buffered guest data to the host, hang-ups, deadlines.
 * The guest end (queues, packets, credit) is virtio_vsock.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/log.h"
#include "devices/virtio/vsock_device.h"
#include "devices/virtio/vsock_host.h"

#define EPOLL_BATCH 64
#define ACCEPTS_PER_EVENT 64
#define TIMER_TICK_NS (250 * 1000 * 1000ull)

static void arm_timer(struct virtio_vsock *vs)
{
	struct itimerspec its = {
		.it_interval = { .tv_nsec = TIMER_TICK_NS },
		.it_value = { .tv_nsec = TIMER_TICK_NS },
	};

	if (vs->timer_armed || vs->timer_fd < 0)
		return;
	if (timerfd_settime(vs->timer_fd, 0, &its, NULL) == 0)
		vs->timer_armed = true;
}

/* Bring the fd's epoll interest in line with the connection's state. */
void vsock_update_events(struct virtio_vsock *vs, struct vsock_conn *c)
{
	uint32_t want = 0;
	struct epoll_event ev;

	if (c->fd < 0 || c->host_hup)
		return; /* after a hang-up, the ready list does the reading */
	switch (c->state) {
	case CONN_HANDSHAKE:
		want = EPOLLIN;
		break;
	case CONN_ESTABLISHED:
	case CONN_CLOSING:
		if (!c->want_read && !c->host_eof &&
		    !(c->guest_shut & VIRTIO_VSOCK_SHUTDOWN_RCV) &&
		    c->state == CONN_ESTABLISHED &&
		    vsock_peer_credit(c->peer_buf_alloc, c->tx_cnt,
				      c->peer_fwd_cnt))
			want |= EPOLLIN;
		if (c->buf_len)
			want |= EPOLLOUT;
		break;
	default:
		break; /* CONNECTING: only a hang-up matters (always reported) */
	}
	if (c->registered && want == c->events)
		return;
	ev = (struct epoll_event){ .events = want, .data.ptr = c };
	if (epoll_ctl(vs->epoll_fd,
		      c->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd,
		      &ev) == 0) {
		/*
		 * epoll wakes its own pollers on such a change only when the
		 * fd was not on its ready list yet, and a level-triggered fd
		 * reported earlier still is: kick ourselves so the loop
		 * looks again.
		 */
		if (want & ~(c->registered ? c->events : 0))
			vsock_wake(vs);
		c->registered = true;
		c->events = want;
	} else {
		pr_warn_ratelimited("%s: epoll_ctl on fd %d: %s", vs->vdev.name,
				    c->fd, strerror(errno));
	}
}

ssize_t vsock_send_iov(int fd, struct iovec *iov, unsigned int nr)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = nr };
	ssize_t n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return n;
}

/* EPOLLOUT: move buffered guest data to the host. */
static void flush_to_host(struct virtio_vsock *vs, struct vsock_conn *c)
{
	while (c->buf_len && c->fd >= 0) {
		uint32_t first = VSOCK_BUF_ALLOC - c->buf_start;
		struct iovec iov[2] = {
			{ c->buf + c->buf_start,
			  first < c->buf_len ? first : c->buf_len },
			{ c->buf, first < c->buf_len ? c->buf_len - first : 0 },
		};
		ssize_t n = vsock_send_iov(c->fd, iov, iov[1].iov_len ? 2 : 1);

		if (n < 0) {
			vsock_conn_reset(vs, c); /* the host end is gone */
			return;
		}
		if (n == 0)
			break;
		c->buf_start = (c->buf_start + (uint32_t)n) % VSOCK_BUF_ALLOC;
		c->buf_len -= (uint32_t)n;
		vsock_forwarded(vs, c, (uint32_t)n);
	}
	vsock_after_flush(vs, c);
}

/* A guest connection to host port P: an in-process listener or UDS_PATH_P. */
int vsock_open_host_end(struct virtio_vsock *vs, uint32_t port)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	for (unsigned int i = 0; i < vs->nr_listeners; i++) {
		struct host_listener *l = &vs->listeners[i];
		struct deferred_connect *d;
		int sv[2];

		if (l->port != port)
			continue;
		d = malloc(sizeof(*d));
		if (!d || socketpair(AF_UNIX,
				     SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				     0, sv) < 0) {
			free(d);
			return -1;
		}
		*d = (struct deferred_connect){ .next = vs->deferred,
						.on_connect = l->on_connect,
						.opaque = l->opaque,
						.fd = sv[1] };
		vs->deferred = d; /* runs after the lock is dropped */
		return sv[0];
	}
	if (!vs->uds_path ||
	    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s_%u", vs->uds_path,
		     port) >= (int)sizeof(sa.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Unix connect never blocks: it succeeds, or fails (EAGAIN: full). */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		/*
		 * Nobody listening is the guest's business; anything else
		 * (EACCES: the listener does not let the VM's --user in) is
		 * the host's, said once: the guest may retry in a loop.
		 */
		if (err != ENOENT && err != ECONNREFUSED &&
		    !vs->told_connect_error) {
			vs->told_connect_error = true;
			pr_warn("vsock: a guest connection to %s: %s",
				sa.sun_path, strerror(err));
		}
		close(fd);
		return -1;
	}
	return fd;
}

void vsock_host_connected(struct virtio_vsock *vs, struct vsock_conn *c)
{
	char ok[24];
	int len = snprintf(ok, sizeof(ok), "OK %u\n", c->host_port);

	/* A fresh socket's send buffer always takes these few bytes. */
	if (send(c->fd, ok, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) != len) {
		vsock_conn_reset(vs, c);
		return;
	}
	c->state = CONN_ESTABLISHED;
	c->deadline_ns = 0;
	vsock_update_events(vs, c);
}

void vsock_wake(struct virtio_vsock *vs)
{
	uint64_t one = 1;

	if (write(vs->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_warn_ratelimited("%s: wake: %s", vs->vdev.name,
				    strerror(errno));
}

/* A host client's fd, accepted or handed in: its handshake starts. */
static void adopt_client(struct virtio_vsock *vs, int fd)
{
	struct vsock_conn *c = vsock_conn_new(vs, fd, CONN_HANDSHAKE);

	if (!c) {
		close(fd); /* too many: the client sees EOF */
		return;
	}
	c->deadline_ns =
		hvm_monotonic_ns() + VSOCK_HANDSHAKE_TIMEOUT_MS * 1000000ull;
	arm_timer(vs);
	vsock_update_events(vs, c);
}

static void accept_clients(struct virtio_vsock *vs)
{
	for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
		int fd = accept_guarded(&vs->accept, vs->uds_fd,
					SOCK_NONBLOCK | SOCK_CLOEXEC,
					hvm_monotonic_ns() / 1000000);

		if (fd < 0 && errno == EMFILE) {
			/*
			 * Level-triggered: the waiting client would wake us
			 * at once, forever. Watch again from the timer.
			 */
			pr_warn_ratelimited(
				"%s: hintvm is at its file limit (RLIMIT_NOFILE); connections to %s wait %d ms",
				vs->vdev.name, vs->uds_path, ACCEPT_BACKOFF_MS);
			if (epoll_ctl(vs->epoll_fd, EPOLL_CTL_DEL, vs->uds_fd,
				      NULL) == 0)
				vs->uds_unwatched = true;
			arm_timer(vs);
			return;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				pr_warn_ratelimited("%s: accept on %s: %s",
						    vs->vdev.name, vs->uds_path,
						    strerror(errno));
			return;
		}
		adopt_client(vs, fd);
	}
	/* More may be waiting: come back after the others had their turn. */
	vsock_wake(vs);
}

static bool allocate_host_port(struct virtio_vsock *vs, uint32_t guest_port,
			       uint32_t *port)
{
	for (unsigned int tries = 0; tries < 2 * VSOCK_MAX_CONNS; tries++) {
		uint32_t p = vs->next_host_port;

		vs->next_host_port =
			p == EPHEMERAL_PORT_LAST ? EPHEMERAL_PORT_FIRST : p + 1;
		if (!vsock_conn_lookup(vs, p, guest_port)) {
			*port = p;
			return true;
		}
	}
	return false;
}

/* The host client's "CONNECT <port>\n", read without reading past it. */
static void read_handshake(struct virtio_vsock *vs, struct vsock_conn *c)
{
	char peek[VSOCK_CONNECT_LINE_MAX];
	size_t room = sizeof(c->line) - c->line_len;
	ssize_t n = recv(c->fd, peek, room, MSG_PEEK | MSG_DONTWAIT);
	char *nl;
	uint32_t port;
	int r;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		vsock_conn_release(vs, c); /* gone before it asked */
		return;
	}
	nl = memchr(peek, '\n', (size_t)n);
	if (nl)
		n = nl - peek + 1; /* data after the line stays for the guest */
	if (recv(c->fd, c->line + c->line_len, (size_t)n, MSG_DONTWAIT) != n) {
		vsock_conn_release(vs, c);
		return;
	}
	c->line_len += (uint32_t)n;
	r = vsock_parse_connect(c->line, c->line_len, &port);
	if (r == 0)
		return;
	if (r < 0 || !allocate_host_port(vs, port, &c->host_port)) {
		pr_debug("%s: host client sent no valid CONNECT line",
			 vs->vdev.name);
		vsock_conn_release(vs, c);
		return;
	}
	c->guest_port = port;
	c->state = CONN_CONNECTING;
	c->deadline_ns =
		hvm_monotonic_ns() + VSOCK_CONNECT_TIMEOUT_MS * 1000000ull;
	vsock_conn_hash(vs, c);
	c->send = SEND_REQUEST;
	vsock_ready_add(vs, c);
	vsock_update_events(vs, c);
}

static int watch_fd(struct virtio_vsock *vs, int fd, void *tag);

static void timer_tick(struct virtio_vsock *vs)
{
	uint64_t now = hvm_monotonic_ns(), ticks;
	bool any = false;

	if (read(vs->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	if (vs->uds_unwatched) {
		if (accept_guard_paused(&vs->accept, now / 1000000))
			any = true;
		else if (watch_fd(vs, vs->uds_fd, &vs->uds_fd) == 0)
			vs->uds_unwatched = false;
	}
	for (struct link *l = vs->all.next, *next; l != &vs->all; l = next) {
		struct vsock_conn *c = container_of(l, struct vsock_conn, all);

		next = l->next;
		if (!c->deadline_ns)
			continue;
		if (now < c->deadline_ns) {
			any = true;
			continue;
		}
		/* No CONNECT line, or the guest never answered: give up. */
		if (c->state == CONN_HANDSHAKE)
			vsock_conn_release(vs, c);
		else
			vsock_conn_reset(vs, c);
	}
	if (!any) {
		struct itimerspec off = { 0 };

		timerfd_settime(vs->timer_fd, 0, &off, NULL);
		vs->timer_armed = false;
	}
}

/*
 * The host closed its end: what it wrote before still goes to the guest
 * (read from the ready list, epoll has nothing more to say), then a
 * SHUTDOWN of both directions; guest data it will never read is dropped.
 */
static void host_hung_up(struct virtio_vsock *vs, struct vsock_conn *c)
{
	c->host_hup = true;
	epoll_ctl(vs->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	c->registered = false;
	if (c->buf_len) {
		vsock_forwarded(vs, c, c->buf_len);
		c->buf_len = 0;
	}
	vsock_after_flush(vs, c);
	if (c->state == CONN_DEAD || c->state == CONN_RESETTING)
		return;
	if (c->host_eof || (c->guest_shut & VIRTIO_VSOCK_SHUTDOWN_RCV)) {
		c->host_eof = true;
		c->want_read = false;
		c->shutdown_to_send |= VSOCK_SHUTDOWN_BOTH;
		c->send |= SEND_SHUTDOWN;
	} else {
		c->want_read = true; /* emit_data reads the rest, then EOF */
	}
	vsock_ready_add(vs, c);
}

static void conn_event(struct virtio_vsock *vs, struct vsock_conn *c,
		       uint32_t events)
{
	if (c->state == CONN_DEAD || c->fd < 0)
		return; /* released earlier in this batch */
	if (c->state == CONN_HANDSHAKE) {
		read_handshake(vs, c);
		return;
	}
	if (events & EPOLLERR) {
		vsock_conn_reset(vs, c);
		return;
	}
	if (events & EPOLLHUP) {
		if (c->state == CONN_CONNECTING) {
			vsock_conn_reset(vs,
					 c); /* the client gave up waiting */
			return;
		}
		host_hung_up(vs, c);
		return;
	}
	if (events & EPOLLOUT)
		flush_to_host(vs, c);
	if (c->state == CONN_DEAD || c->state == CONN_RESETTING)
		return;
	if ((events & EPOLLIN) && !c->host_eof) {
		c->want_read = true;
		if (vsock_can_send_data(c))
			vsock_ready_add(vs, c);
	}
	vsock_update_events(vs, c);
}

/*
 * One batch of the epoll set's events (locked): accepted clients,
 * deadlines, host fds ready. Returns how many were handled; the guest end
 * pumps what they made ready and asks again while there are more.
 */
int vsock_host_poll(struct virtio_vsock *vs)
{
	struct epoll_event evs[EPOLL_BATCH];
	int n = epoll_wait(vs->epoll_fd, evs, EPOLL_BATCH, 0);

	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;

		if (p == &vs->uds_fd) {
			accept_clients(vs);
		} else if (p == &vs->timer_fd) {
			timer_tick(vs);
		} else if (p == &vs->wake_fd) {
			uint64_t v;

			if (read(vs->wake_fd, &v, sizeof(v)) < 0 &&
			    errno != EAGAIN)
				pr_warn_ratelimited("%s: wake read: %s",
						    vs->vdev.name,
						    strerror(errno));
			/* virtio_vsock_connect()'s clients. */
			for (unsigned int j = 0; j < vs->nr_adopt; j++)
				adopt_client(vs, vs->adopt[j]);
			vs->nr_adopt = 0;
		} else {
			conn_event(vs, p, evs[i].events);
		}
	}
	return n > 0 ? n : 0;
}

/* In-process listeners get their connections outside the device lock. */
void vsock_host_run_deferred(struct virtio_vsock *vs)
{
	struct deferred_connect *d;

	pthread_mutex_lock(&vs->vdev.lock);
	d = vs->deferred;
	vs->deferred = NULL;
	pthread_mutex_unlock(&vs->vdev.lock);
	while (d) {
		struct deferred_connect *next = d->next;

		d->on_connect(d->fd, d->opaque);
		free(d);
		d = next;
	}
}

/* An existing socket file nobody listens on is left from a killed run. */
static bool stale_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return r < 0 && errno == ECONNREFUSED;
}

static int listen_uds(struct virtio_vsock *vs, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st = { 0 };
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return hvm_set_error(-ENAMETOOLONG,
				     "--vsock uds=%s: path too long", path);
	strcpy(sa.sun_path, path);
	if (stale_socket(path))
		unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hvm_set_errno_error("--vsock uds=%s: socket", path);
	/* The file's mode comes from the socket inode: owner only, always. */
	fchmod(fd, 0600);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		return hvm_set_error(
			-err, "--vsock uds=%s: cannot listen there: %s%s", path,
			strerror(err),
			err == EADDRINUSE
				? " (the file exists and is not a stale socket: another VM's, or not a socket)"
				: "");
	}
	/* Checked, never chmod()ed by path (that follows a planted link). */
	r = check_bound_socket("--vsock uds", sa.sun_path, &st);
	if (r == 0 && listen(fd, 128) < 0)
		/* sa.sun_path, not path: gcc -O2 with UBSan sees a null path. */
		r = hvm_set_errno_error("--vsock uds=%s", sa.sun_path);
	if (r < 0) {
		close(fd);
		if (S_ISSOCK(st.st_mode))
			unlink(path); /* ours; not what replaced it */
		return r;
	}
	vs->uds_fd = fd;
	vs->uds_dev = st.st_dev;
	vs->uds_ino = st.st_ino;
	return 0;
}

static int watch_fd(struct virtio_vsock *vs, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(vs->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0
		       ? hvm_set_errno_error("%s: epoll_ctl", vs->vdev.name)
		       : 0;
}

/* Room for VSOCK_MAX_CONNS host fds next to everything else hintvm has. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	rlim_t want = VSOCK_MAX_CONNS + 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		pr_debug("vsock: cannot raise RLIMIT_NOFILE: %s",
			 strerror(errno));
}

/* Closes what vsock_host_init() opened; the socket file goes too. */
void vsock_host_fini(struct virtio_vsock *vs)
{
	struct stat st;

	for (unsigned int j = 0; j < vs->nr_adopt; j++)
		close(vs->adopt[j]);
	vs->nr_adopt = 0;

	if (vs->uds_fd >= 0) {
		close(vs->uds_fd);
		/* Only our own socket: someone may have replaced it. */
		if (stat(vs->uds_path, &st) == 0 && st.st_dev == vs->uds_dev &&
		    st.st_ino == vs->uds_ino && unlink(vs->uds_path) < 0)
			/* As the VM's --user, its directory must let it. */
			pr_warn("vsock: cannot remove %s: %s", vs->uds_path,
				strerror(errno));
	}
	if (vs->epoll_fd >= 0)
		close(vs->epoll_fd);
	if (vs->timer_fd >= 0)
		close(vs->timer_fd);
	if (vs->wake_fd >= 0)
		close(vs->wake_fd);
	vs->uds_fd = vs->epoll_fd = vs->timer_fd = vs->wake_fd = -1;
}

int vsock_host_init(struct virtio_vsock *vs, struct event_loop *loop,
		    const char *uds_path, void (*ready)(struct event_watch *))
{
	vs->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	vs->timer_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	vs->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (vs->epoll_fd < 0 || vs->timer_fd < 0 || vs->wake_fd < 0)
		return hvm_set_errno_error(
			"virtio-vsock: epoll/timerfd/eventfd");
	if (watch_fd(vs, vs->timer_fd, &vs->timer_fd) < 0 ||
	    watch_fd(vs, vs->wake_fd, &vs->wake_fd) < 0)
		return -EIO;
	accept_guard_init(&vs->accept, false);
	if (uds_path && (listen_uds(vs, uds_path) < 0 ||
			 watch_fd(vs, vs->uds_fd, &vs->uds_fd) < 0))
		return -EIO;
	raise_fd_limit();
	if (event_loop_watch(loop, &vs->epoll_watch, vs->epoll_fd, false,
			     ready) < 0)
		return hvm_set_error(
			-EIO, "virtio-vsock: cannot watch its epoll set");
	return 0;
}
