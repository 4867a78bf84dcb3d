// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The agent's server: connections, sessions (one per started process) and
 * the relays that copy bytes between a stream connection and a process's
 * pipe or terminal. One thread and poll(): a terminal's master appears in
 * two relays (in and out), which epoll could not register twice.
 *
 * Nothing the host sends is trusted beyond the protocol: frames are
 * bounded by the codec (src/abi/agent_proto.c), connections and sessions
 * by the limits below, every buffer by its size; a stream can only be
 * attached with its session's random token; a client that stops reading
 * its control connection is dropped once a bounded queue fills. A stalled
 * stream reader stalls only its own process (back-pressure through the
 * pipe), never the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* After <sys/socket.h>: it uses struct sockaddr and sa_family_t. */
#include <linux/random.h>
#include <linux/vm_sockets.h>

#include "agent.h"
#include "host_stdio.h"
#include "limits.h"
#include "abi/agent_proto.h"

#define MAX_CONNS 2048
#define MAX_SESSIONS 1024
#define RELAY_BUF (64 * 1024)
/* Queued replies a control client may leave unread before it is dropped. */
#define OUT_LIMIT (2 * (AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD))
#define MAX_WAITERS 8
/* Pod containers with a PID namespace of their own, at once. */
#define MAX_PIDNS 64
#define DEFAULT_PATH \
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum conn_state { CONN_PREAMBLE, CONN_HELLO, CONN_CONTROL };

struct conn {
	int fd;
	enum conn_state state;
	char preamble[32];
	size_t preamble_len;
	uint8_t hdr_buf[AGENT_HDR_SIZE];
	size_t hdr_got;
	struct agent_hdr hdr;
	uint8_t *payload;
	size_t payload_got;
	uint8_t *out;
	size_t out_len;
	bool dead;
};

/* Relays of a session, by index. */
enum relay_kind {
	RELAY_STDIN, /* stream -> pipe */
	RELAY_STDOUT, /* pipe -> stream */
	RELAY_STDERR,
	RELAY_TTY_IN, /* stream -> terminal master */
	RELAY_TTY_OUT, /* terminal master -> stream */
	RELAY_COUNT
};

struct relay {
	int src, dst;
	uint8_t *buf;
	size_t head, tail;
	bool active;
	bool src_eof;
};

struct waiter {
	struct conn *conn;
	uint32_t id;
};

struct session {
	uint32_t id;
	uint64_t token;
	uint32_t req_id;
	struct conn *owner;
	struct agent_exec_req req;
	unsigned int want, attached; /* stream bit masks */
	int stream_fd[AGENT_STREAM_COUNT];
	int local_fd[AGENT_STREAM_COUNT]; /* agent's pipe ends / master */
	struct relay relay[RELAY_COUNT];
	pid_t pid;
	enum agent_proc_state state;
	int wait_status;
	bool reported; /* EXITED sent to the owner */
	struct waiter waiters[MAX_WAITERS];
	unsigned int nr_waiters;
};

/*
 * A pod container's PID namespace (EXEC's PIDNS), by its cgroup's name:
 * an open /proc/PID/ns/pid of its PID 1, the process that made it, for
 * the execs into it to join. It ends with that process (the kernel kills
 * the rest of the namespace then).
 */
struct pidns {
	char name[AGENT_MAX_CGROUP_NAME + 1];
	int fd;
	pid_t init;
};

struct server {
	int listen_fd;
	/* The agent's own PID namespace, to return to after forking into
	 * a container's (setns on pid_for_children). */
	int own_pidns;
	struct pidns pidns[MAX_PIDNS];
	int signal_fd;
	const struct agent_listen *where;
	struct agent_main *main;
	struct conn *conns[MAX_CONNS];
	unsigned int nr_conns;
	struct session *sessions[MAX_SESSIONS];
	unsigned int nr_sessions;
	uint32_t next_session;
	unsigned int next_fake_port;
	int task_cgroup; /* the task cgroup's directory, or -1 */
};

static uint8_t frame_buf[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];

bool agent_debug;

void agent_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "hintvm-agent: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- connections and replies ----------------------------------------- */

static void conn_queue(struct conn *c, const uint8_t *frame, int len)
{
	uint8_t *out;

	if (c->dead || len < 0)
		return;
	if (c->out_len + (size_t)len > OUT_LIMIT) {
		/* The client stopped reading: it loses the connection. */
		c->dead = true;
		return;
	}
	out = realloc(c->out, c->out_len + (size_t)len);
	if (!out) {
		c->dead = true;
		return;
	}
	memcpy(out + c->out_len, frame, (size_t)len);
	c->out = out;
	c->out_len += (size_t)len;
}

static void conn_flush(struct conn *c)
{
	while (c->out_len && !c->dead) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				c->dead = true;
			return;
		}
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
	}
}

static void reply_error(struct conn *c, uint32_t id, int err, const char *fmt,
			...)
{
	struct agent_builder b;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	agent_build_begin(&b, frame_buf, sizeof(frame_buf), AGENT_MSG_ERROR,
			  id);
	agent_put_u32(&b, AGENT_ATTR_ERRNO, (uint32_t)err);
	agent_put_str(&b, AGENT_ATTR_MESSAGE, msg);
	conn_queue(c, frame_buf, agent_build_end(&b));
}

static void reply_simple(struct conn *c, uint16_t type, uint32_t id)
{
	struct agent_builder b;

	agent_build_begin(&b, frame_buf, sizeof(frame_buf), type, id);
	conn_queue(c, frame_buf, agent_build_end(&b));
}

static void put_exit(struct agent_builder *b, int wait_status)
{
	if (WIFSIGNALED(wait_status))
		agent_put_u32(b, AGENT_ATTR_TERM_SIGNAL,
			      (uint32_t)WTERMSIG(wait_status));
	else
		agent_put_u32(b, AGENT_ATTR_EXIT_CODE,
			      (uint32_t)WEXITSTATUS(wait_status));
}

static void send_exited(struct conn *c, uint32_t id, struct session *s)
{
	struct agent_builder b;

	agent_build_begin(&b, frame_buf, sizeof(frame_buf), AGENT_MSG_EXITED,
			  id);
	agent_put_u32(&b, AGENT_ATTR_SESSION, s->id);
	agent_put_u32(&b, AGENT_ATTR_PID, (uint32_t)s->pid);
	put_exit(&b, s->wait_status);
	conn_queue(c, frame_buf, agent_build_end(&b));
}

/* ---- sessions ---------------------------------------------------------- */

static struct session *session_find(struct server *srv, uint32_t id)
{
	for (unsigned int i = 0; i < srv->nr_sessions; i++)
		if (srv->sessions[i]->id == id)
			return srv->sessions[i];
	return NULL;
}

static void session_free(struct server *srv, struct session *s)
{
	for (unsigned int i = 0; i < AGENT_STREAM_COUNT; i++) {
		close_fd(&s->stream_fd[i]);
		close_fd(&s->local_fd[i]);
	}
	for (unsigned int i = 0; i < RELAY_COUNT; i++)
		free(s->relay[i].buf);
	agent_exec_req_free(&s->req);
	for (unsigned int i = 0; i < srv->nr_sessions; i++) {
		if (srv->sessions[i] == s) {
			srv->sessions[i] = srv->sessions[--srv->nr_sessions];
			break;
		}
	}
	free(s);
}

static bool fd_in_use(const struct session *s, int fd)
{
	for (unsigned int i = 0; i < RELAY_COUNT; i++)
		if (s->relay[i].active &&
		    (s->relay[i].src == fd || s->relay[i].dst == fd))
			return true;
	return false;
}

/* Close every fd of a running session that no active relay needs. */
static void session_close_idle_fds(struct session *s)
{
	for (unsigned int i = 0; i < AGENT_STREAM_COUNT; i++) {
		if (s->stream_fd[i] >= 0 && !fd_in_use(s, s->stream_fd[i]))
			close_fd(&s->stream_fd[i]);
		if (s->local_fd[i] >= 0 && !fd_in_use(s, s->local_fd[i]))
			close_fd(&s->local_fd[i]);
	}
}

static bool session_output_done(const struct session *s)
{
	return !s->relay[RELAY_STDOUT].active &&
	       !s->relay[RELAY_STDERR].active &&
	       !s->relay[RELAY_TTY_OUT].active;
}

static void relay_start(struct relay *r, int src, int dst)
{
	r->buf = malloc(RELAY_BUF);
	if (!r->buf)
		return; /* inactive: its fds close, the process sees EOF */
	r->src = src;
	r->dst = dst;
	r->head = r->tail = 0;
	r->src_eof = false;
	r->active = true;
}

static void relay_stop(struct relay *r)
{
	r->active = false;
	free(r->buf);
	r->buf = NULL;
}

static bool env_has_key(char **envp, const char *entry)
{
	size_t klen = strcspn(entry, "=");

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, entry, klen) && (*envp)[klen] == '=')
			return true;
	return false;
}

/*
 * The process's environment: the request's entries, then each default
 * the request did not set (docs/agent.md). Called in the child.
 */
static char **merge_env(char **given, bool tty)
{
	char *defaults[] = { DEFAULT_PATH, "HOME=/",
			     tty ? "TERM=xterm-256color" : NULL, NULL };
	size_t n = 0, k = 0;
	char **env;

	for (char **e = given; e && *e; e++)
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	for (char **e = given; e && *e; e++)
		env[k++] = *e;
	for (char **d = defaults; *d; d++)
		if (!env_has_key(given, *d))
			env[k++] = *d;
	return env;
}

/*
 * A new process starts with every signal at its default and none blocked,
 * whatever the agent inherited (a shell's "&" ignores SIGINT and SIGQUIT).
 */
static void reset_signals(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * A pod's container (EXEC's ROOT): a mount namespace of its own, so that
 * what it mounts stays its own, /proc for its tools, a /dev as runc's,
 * and ROOT as its root. -errno.
 */
static int enter_root(const char *root)
{
	char proc[AGENT_MAX_PATH + sizeof("/proc")];
	struct stat st;
	int r;

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	/* An image without /proc runs without one, as under runc's
	 * default spec it would not. */
	if (!stat(proc, &st) && S_ISDIR(st.st_mode) &&
	    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return -errno;
	r = agent_pod_dev_setup(root);
	if (r < 0)
		return r;
	if (chroot(root) < 0)
		return -errno;
	return 0;
}

/* The child: set up stdio, identity and directory, then exec. */
static void __attribute__((noreturn))
child_exec(struct session *s, int child_fd[3], int tty_slave, int err_fd,
	   int cgroup_procs)
{
	const struct agent_exec_req *req = &s->req;
	const char *what = NULL;
	int err, null_fd, r;
	char **envp;

	/* Its container's cgroup first: whatever it allocates is charged
	 * there, and it never runs outside that limit. */
	if (cgroup_procs >= 0 && write(cgroup_procs, "0", 1) != 1)
		goto fail;
	reset_signals();
	setsid();
	if (tty_slave >= 0) {
		ioctl(tty_slave, TIOCSCTTY, 0);
		for (int i = 0; i < 3; i++)
			dup2(tty_slave, i);
	} else {
		null_fd = open("/dev/null", O_RDWR);
		for (int i = 0; i < 3; i++)
			dup2(child_fd[i] >= 0 ? child_fd[i] : null_fd, i);
	}
	if (req->root) {
		r = enter_root(req->root);
		if (r < 0) {
			errno = -r;
			goto fail;
		}
	}
	if (chdir(req->cwd ? req->cwd : "/") < 0)
		goto fail;
	r = limits_before_user(&req->limits, &what);
	if (r < 0)
		goto fail_limits;
	if ((req->has_uid || req->has_gid) && setgroups(0, NULL) < 0 &&
	    errno != EPERM)
		goto fail;
	if (req->has_gid && setgid(req->gid) < 0)
		goto fail;
	if (req->has_uid && setuid(req->uid) < 0)
		goto fail;
	r = limits_after_user(&req->limits, &what);
	if (r < 0)
		goto fail_limits;
	envp = merge_env(req->envp, tty_slave >= 0);
	if (!envp)
		goto fail;
	r = limits_last(&req->limits, &what);
	if (r < 0)
		goto fail_limits;
	execvpe(req->argv[0], req->argv, envp);
fail:
	err = errno;
	goto report;
fail_limits:
	/* A limit could not be applied (step WHAT): never run unconfined. */
	(void)what;
	err = -r;
report:
	if (write(err_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

static int open_pty(struct session *s, int *slave)
{
	struct winsize ws = { .ws_row = s->req.rows ? s->req.rows : 24,
			      .ws_col = s->req.cols ? s->req.cols : 80 };
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (master < 0)
		return -errno;
	if (grantpt(master) < 0 || unlockpt(master) < 0)
		goto fail;
	*slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		goto fail;
	ioctl(master, TIOCSWINSZ, &ws);
	return master;
fail:
	close(master);
	return -errno;
}

static struct pidns *pidns_find(struct server *srv, const char *name)
{
	for (int i = 0; i < MAX_PIDNS; i++)
		if (srv->pidns[i].fd >= 0 && !strcmp(srv->pidns[i].name, name))
			return &srv->pidns[i];
	return NULL;
}

/*
 * Before the fork: make the next child's PID namespace S's (a new one,
 * or its container's). -errno; pidns_after_fork() undoes it either way.
 */
static int pidns_before_fork(struct server *srv, struct session *s)
{
	struct pidns *ns;

	if (!s->req.pidns)
		return 0;
	if (srv->own_pidns < 0)
		return -ENOSYS; /* no /proc/self/ns/pid to come back to */
	if (s->req.pidns == AGENT_PIDNS_NEW) {
		if (pidns_find(srv, s->req.cgroup))
			return -EEXIST;
		return unshare(CLONE_NEWPID) ? -errno : 0;
	}
	ns = pidns_find(srv, s->req.cgroup);
	if (!ns)
		return -ESRCH; /* no such container, or it has ended */
	return setns(ns->fd, CLONE_NEWPID) ? -errno : 0;
}

/* After it: the agent's own namespace for its next children again, and
 * a new namespace recorded under its container's name. */
static void pidns_after_fork(struct server *srv, struct session *s)
{
	char path[64];

	if (!s->req.pidns || srv->own_pidns < 0)
		return;
	if (setns(srv->own_pidns, CLONE_NEWPID))
		agent_log("PID namespace: cannot return to the agent's: %s",
			  strerror(errno));
	if (s->req.pidns != AGENT_PIDNS_NEW || s->pid <= 0)
		return;
	for (int i = 0; i < MAX_PIDNS; i++) {
		struct pidns *ns = &srv->pidns[i];

		if (ns->fd >= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)s->pid);
		ns->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (ns->fd < 0) {
			agent_log("%s: %s: execs cannot join it", path,
				  strerror(errno));
			return;
		}
		snprintf(ns->name, sizeof(ns->name), "%s", s->req.cgroup);
		ns->init = s->pid;
		return;
	}
	agent_log("PID namespace of %s: %d already: execs cannot join it",
		  s->req.cgroup, MAX_PIDNS);
}

/* PID ended: the namespace it was PID 1 of is gone. */
static void pidns_ended(struct server *srv, pid_t pid)
{
	for (int i = 0; i < MAX_PIDNS; i++) {
		struct pidns *ns = &srv->pidns[i];

		if (ns->fd >= 0 && ns->init == pid) {
			close(ns->fd);
			*ns = (struct pidns){ .fd = -1 };
		}
	}
}

/* All streams are attached: create pipes or the terminal, fork, exec. */
static void session_start(struct server *srv, struct session *s)
{
	int child_fd[3] = { -1, -1, -1 }, err_pipe[2], tty_slave = -1;
	int cgroup_procs = -1, err = 0, r;
	struct agent_builder b;
	ssize_t n;

	if (s->req.flags & AGENT_EXEC_TTY) {
		r = open_pty(s, &tty_slave);
		if (r < 0) {
			err = -r;
			goto fail;
		}
		s->local_fd[AGENT_STREAM_TTY] = r;
	}
	for (int i = 0; i < 3; i++) {
		int p[2];

		if (!(s->want & (1u << i)))
			continue;
		if (pipe2(p, O_CLOEXEC) < 0) {
			err = errno;
			goto fail;
		}
		/* stdin: the child reads p[0]; stdout/stderr: it writes p[1]. */
		child_fd[i] = i == 0 ? p[0] : p[1];
		s->local_fd[i] = i == 0 ? p[1] : p[0];
	}
	if (s->req.root) {
		r = agent_lazy_share_mount(s->req.root);
		if (r < 0) {
			err = -r;
			goto fail;
		}
	}
	if (s->req.cgroup) {
		r = srv->task_cgroup < 0
			    ? -ENOENT
			    : agent_ctr_cgroup_prepare(srv->task_cgroup,
						       s->req.cgroup,
						       s->req.memory_max);
		if (r < 0) {
			err = -r;
			agent_log("cgroup %s: %s", s->req.cgroup,
				  strerror(err));
			goto fail;
		}
		cgroup_procs = r;
	}
	if (pipe2(err_pipe, O_CLOEXEC) < 0) {
		err = errno;
		goto fail;
	}
	r = pidns_before_fork(srv, s);
	if (r < 0) {
		err = -r;
		pidns_after_fork(srv, s);
		close(err_pipe[0]);
		close(err_pipe[1]);
		agent_log("PID namespace of %s: %s", s->req.cgroup,
			  strerror(err));
		goto fail;
	}
	s->pid = fork();
	if (s->pid == 0)
		child_exec(s, child_fd, tty_slave, err_pipe[1], cgroup_procs);
	pidns_after_fork(srv, s);
	close_fd(&cgroup_procs);
	close(err_pipe[1]);
	for (int i = 0; i < 3; i++)
		close_fd(&child_fd[i]);
	close_fd(&tty_slave);
	if (s->pid < 0) {
		err = errno;
		close(err_pipe[0]);
		goto fail;
	}
	do {
		n = read(err_pipe[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(err_pipe[0]);
	if (n == sizeof(err)) {
		/* The child failed before exec and has exited: reap it here. */
		waitpid(s->pid, NULL, 0);
		pidns_ended(srv, s->pid);
		s->pid = 0;
		goto fail;
	}
	err = 0;
	s->state = AGENT_PROC_RUNNING;
	for (int i = 0; i < AGENT_STREAM_COUNT; i++) {
		if (s->stream_fd[i] >= 0)
			set_nonblock(s->stream_fd[i]);
		if (s->local_fd[i] >= 0)
			set_nonblock(s->local_fd[i]);
	}
	if (s->want & (1u << AGENT_STREAM_STDIN))
		relay_start(&s->relay[RELAY_STDIN],
			    s->stream_fd[AGENT_STREAM_STDIN],
			    s->local_fd[AGENT_STREAM_STDIN]);
	if (s->want & (1u << AGENT_STREAM_STDOUT))
		relay_start(&s->relay[RELAY_STDOUT],
			    s->local_fd[AGENT_STREAM_STDOUT],
			    s->stream_fd[AGENT_STREAM_STDOUT]);
	if (s->want & (1u << AGENT_STREAM_STDERR))
		relay_start(&s->relay[RELAY_STDERR],
			    s->local_fd[AGENT_STREAM_STDERR],
			    s->stream_fd[AGENT_STREAM_STDERR]);
	if (s->want & (1u << AGENT_STREAM_TTY)) {
		relay_start(&s->relay[RELAY_TTY_IN],
			    s->stream_fd[AGENT_STREAM_TTY],
			    s->local_fd[AGENT_STREAM_TTY]);
		relay_start(&s->relay[RELAY_TTY_OUT],
			    s->local_fd[AGENT_STREAM_TTY],
			    s->stream_fd[AGENT_STREAM_TTY]);
	}
	session_close_idle_fds(s);
	if (s->owner) {
		agent_build_begin(&b, frame_buf, sizeof(frame_buf),
				  AGENT_MSG_STARTED, s->req_id);
		agent_put_u32(&b, AGENT_ATTR_SESSION, s->id);
		agent_put_u32(&b, AGENT_ATTR_PID, (uint32_t)s->pid);
		conn_queue(s->owner, frame_buf, agent_build_end(&b));
	}
	if (agent_debug)
		agent_log("session %u: pid %d runs %s", s->id, s->pid,
			  s->req.argv[0]);
	return;
fail:
	for (int i = 0; i < 3; i++)
		close_fd(&child_fd[i]);
	close_fd(&tty_slave);
	close_fd(&cgroup_procs);
	if (s->owner)
		reply_error(s->owner, s->req_id, err, "%s: %s", s->req.argv[0],
			    strerror(err));
	session_free(srv, s);
}

/* ---- requests ---------------------------------------------------------- */

static void handle_exec(struct server *srv, struct conn *c)
{
	struct agent_builder b;
	struct session *s;
	char msg[128];
	int r;

	if (srv->nr_sessions >= MAX_SESSIONS) {
		reply_error(c, c->hdr.id, EAGAIN, "%u processes already",
			    srv->nr_sessions);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		reply_error(c, c->hdr.id, ENOMEM, "out of memory");
		return;
	}
	r = agent_exec_decode(c->payload, c->hdr.len, &s->req, msg,
			      sizeof(msg));
	if (r < 0) {
		free(s);
		reply_error(c, c->hdr.id, -r, "EXEC refused: %s", msg);
		return;
	}
	for (int i = 0; i < AGENT_STREAM_COUNT; i++)
		s->stream_fd[i] = s->local_fd[i] = -1;
	do {
		s->id = ++srv->next_session;
	} while (!s->id || session_find(srv, s->id));
	if (getrandom(&s->token, sizeof(s->token), 0) != sizeof(s->token)) {
		free(s->req.storage);
		free(s);
		reply_error(c, c->hdr.id, EIO, "no randomness for a token");
		return;
	}
	s->req_id = c->hdr.id;
	s->owner = c;
	s->want = agent_exec_streams(s->req.flags);
	s->state = AGENT_PROC_STARTING;
	srv->sessions[srv->nr_sessions++] = s;
	agent_build_begin(&b, frame_buf, sizeof(frame_buf), AGENT_MSG_READY,
			  c->hdr.id);
	agent_put_u32(&b, AGENT_ATTR_SESSION, s->id);
	agent_put_u64(&b, AGENT_ATTR_TOKEN, s->token);
	conn_queue(c, frame_buf, agent_build_end(&b));
	if (!s->want)
		session_start(srv, s);
}

/*
 * ATTACH: the connection becomes one of a session's streams. Returns true
 * when the connection was handed over (the caller forgets it).
 */
static bool handle_attach(struct server *srv, struct conn *c)
{
	uint32_t sid = 0, stream = 0;
	uint64_t token = 0;
	struct session *s;
	uint8_t ok[AGENT_HDR_SIZE];

	if (agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_SESSION, &sid) ||
	    agent_get_u64(c->payload, c->hdr.len, AGENT_ATTR_TOKEN, &token) ||
	    agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_STREAM, &stream)) {
		reply_error(c, c->hdr.id, EINVAL,
			    "ATTACH needs SESSION, TOKEN and STREAM");
		return false;
	}
	s = session_find(srv, sid);
	if (!s || s->token != token || s->state != AGENT_PROC_STARTING) {
		reply_error(c, c->hdr.id, ENOENT,
			    "no session %u waiting for streams", sid);
		return false;
	}
	if (stream >= AGENT_STREAM_COUNT || !(s->want & (1u << stream)) ||
	    (s->attached & (1u << stream))) {
		reply_error(c, c->hdr.id, EINVAL,
			    "session %u does not wait for stream %u", sid,
			    stream);
		return false;
	}
	/* Replies so far are small and the socket is fresh: flush now. */
	conn_flush(c);
	agent_hdr_encode(ok, &(struct agent_hdr){ .type = AGENT_MSG_OK,
						  .id = c->hdr.id });
	if (c->dead || c->out_len ||
	    send(c->fd, ok, sizeof(ok), MSG_NOSIGNAL) != sizeof(ok)) {
		c->dead = true;
		return false;
	}
	s->stream_fd[stream] = c->fd;
	s->attached |= 1u << stream;
	if (s->attached == s->want)
		session_start(srv, s);
	return true;
}

static void handle_signal(struct server *srv, struct conn *c)
{
	uint32_t sid = 0, sig = 0;
	struct session *s;

	if (agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_SESSION, &sid) ||
	    agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_SIGNAL, &sig) ||
	    sig < 1 || sig > 64) {
		reply_error(c, c->hdr.id, EINVAL,
			    "SIGNAL needs SESSION and SIGNAL 1..64");
		return;
	}
	s = session_find(srv, sid);
	if (!s || s->state != AGENT_PROC_RUNNING) {
		reply_error(c, c->hdr.id, ESRCH, "no running session %u", sid);
		return;
	}
	if (kill(s->pid, (int)sig) < 0) {
		reply_error(c, c->hdr.id, errno, "kill(%d, %u): %s", s->pid,
			    sig, strerror(errno));
		return;
	}
	reply_simple(c, AGENT_MSG_OK, c->hdr.id);
}

static void handle_resize(struct server *srv, struct conn *c)
{
	uint32_t sid = 0, rows = 0, cols = 0;
	struct winsize ws;
	struct session *s;

	if (agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_SESSION, &sid) ||
	    agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_ROWS, &rows) ||
	    agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_COLS, &cols) ||
	    !rows || rows > UINT16_MAX || !cols || cols > UINT16_MAX) {
		reply_error(c, c->hdr.id, EINVAL,
			    "RESIZE needs SESSION, ROWS and COLS 1..65535");
		return;
	}
	s = session_find(srv, sid);
	if (!s || s->local_fd[AGENT_STREAM_TTY] < 0) {
		reply_error(c, c->hdr.id, ENOTTY, "session %u has no terminal",
			    sid);
		return;
	}
	ws = (struct winsize){ .ws_row = (unsigned short)rows,
			       .ws_col = (unsigned short)cols };
	if (ioctl(s->local_fd[AGENT_STREAM_TTY], TIOCSWINSZ, &ws) < 0) {
		reply_error(c, c->hdr.id, errno, "TIOCSWINSZ: %s",
			    strerror(errno));
		return;
	}
	reply_simple(c, AGENT_MSG_OK, c->hdr.id);
}

static void handle_list(struct server *srv, struct conn *c)
{
	struct agent_builder b;
	int len;

	agent_build_begin(&b, frame_buf, sizeof(frame_buf), AGENT_MSG_PROCS,
			  c->hdr.id);
	for (unsigned int i = 0; i < srv->nr_sessions; i++) {
		struct session *s = srv->sessions[i];

		agent_nest_begin(&b, AGENT_ATTR_PROC);
		agent_put_u32(&b, AGENT_ATTR_SESSION, s->id);
		agent_put_u32(&b, AGENT_ATTR_STATE, s->state);
		if (s->pid > 0)
			agent_put_u32(&b, AGENT_ATTR_PID, (uint32_t)s->pid);
		if (s->state == AGENT_PROC_EXITED)
			put_exit(&b, s->wait_status);
		agent_put_bytes(&b, AGENT_ATTR_NAME, s->req.argv[0],
				strnlen(s->req.argv[0], 255));
		agent_nest_end(&b);
	}
	len = agent_build_end(&b);
	if (len < 0)
		reply_error(c, c->hdr.id, EMSGSIZE, "process list too long");
	else
		conn_queue(c, frame_buf, len);
}

static void handle_wait(struct server *srv, struct conn *c)
{
	uint32_t sid = 0;
	struct session *s;

	if (agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_SESSION, &sid)) {
		reply_error(c, c->hdr.id, EINVAL, "WAIT needs SESSION");
		return;
	}
	s = session_find(srv, sid);
	if (!s) {
		reply_error(c, c->hdr.id, ESRCH, "no session %u", sid);
		return;
	}
	if (s->nr_waiters >= MAX_WAITERS) {
		reply_error(c, c->hdr.id, EAGAIN, "too many waiters");
		return;
	}
	s->waiters[s->nr_waiters++] = (struct waiter){ c, c->hdr.id };
}

/*
 * STATS: the task cgroup's numbers (hintvm-oci-init's, task_cgroup.c), or
 * with CGROUP a pod container's.
 */
static void handle_stats(struct server *srv, struct conn *c)
{
	char name[AGENT_MAX_CGROUP_NAME + 1];
	struct agent_stats st;
	int len, dir, r;

	if (srv->task_cgroup < 0) {
		reply_error(
			c, c->hdr.id, ENOENT,
			"no task cgroup in this guest (no cgroup2, or not a container VM)");
		return;
	}
	r = agent_get_str(c->payload, c->hdr.len, AGENT_ATTR_CGROUP, name,
			  sizeof(name));
	if (r && r != -ENOENT) {
		reply_error(c, c->hdr.id, EINVAL,
			    "STATS: cgroup name longer than %d bytes",
			    AGENT_MAX_CGROUP_NAME);
		return;
	}
	if (!r) {
		dir = agent_ctr_cgroup_open(srv->task_cgroup, name);
		if (dir < 0) {
			reply_error(c, c->hdr.id, -dir, "cgroup \"%s\": %s",
				    name, strerror(-dir));
			return;
		}
		agent_task_cgroup_read(dir, &st);
		close(dir);
	} else {
		agent_task_cgroup_read(srv->task_cgroup, &st);
	}
	len = agent_stats_encode(frame_buf, sizeof(frame_buf), c->hdr.id, &st);
	if (len < 0)
		reply_error(c, c->hdr.id, EMSGSIZE, "stats too long");
	else
		conn_queue(c, frame_buf, len);
}

/* CGROUP_SET: a pod container's limits (UpdateContainerResources). */
static void handle_cgroup_set(struct server *srv, struct conn *c)
{
	struct agent_cgroup_set cs;
	struct agent_builder b;
	char msg[128];
	int r;

	r = agent_cgroup_set_decode(c->payload, c->hdr.len, &cs, msg,
				    sizeof(msg));
	if (r < 0) {
		reply_error(c, c->hdr.id, -r, "CGROUP_SET refused: %s", msg);
		return;
	}
	r = srv->task_cgroup < 0 ? -ENOENT
				 : agent_ctr_cgroup_set(srv->task_cgroup, &cs);
	if (r < 0) {
		reply_error(c, c->hdr.id, -r, "cgroup \"%s\": %s", cs.cgroup,
			    strerror(-r));
		return;
	}
	agent_build_begin(&b, frame_buf, sizeof(frame_buf), AGENT_MSG_OK,
			  c->hdr.id);
	conn_queue(c, frame_buf, agent_build_end(&b));
}

/* The directory fd hintvm-oci-init handed over, or -1. */
static int task_cgroup_from_env(void)
{
	const char *v = getenv(AGENT_TASK_CGROUP_ENV);
	char *end;
	long fd;
	struct stat st;

	if (!v || !*v)
		return -1;
	fd = strtol(v, &end, 10);
	if (*end || fd < 3 || fd > INT32_MAX || fstat((int)fd, &st) ||
	    !S_ISDIR(st.st_mode)) {
		agent_log("%s=%s: not an open directory; no stats",
			  AGENT_TASK_CGROUP_ENV, v);
		return -1;
	}
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

/*
 * HELLO's SEED (docs/agent.md): the host's randomness, mixed into the
 * kernel's pool and credited (RNDADDENTROPY), then the CRNG reseeded at
 * once (RNDRESEEDCRNG): clones of one VM template start with equal CRNG
 * states (docs/template.md) and part ways at the host's first greeting,
 * before it runs anything in them. As PID 1 only: an agent run on a host
 * (--hybrid, the cli tests) leaves the host's pool alone. Best effort: a
 * kernel without either ioctl keeps its CRNG as it is.
 */
static void mix_seed(const struct conn *c)
{
	struct agent_attr_iter it;
	struct agent_attr a;
	struct rand_pool_info *pool;
	int fd;

	if (getpid() != 1)
		return;
	agent_attr_iter_init(&it, c->payload, c->hdr.len);
	while (agent_attr_next(&it, &a) == 1) {
		if (a.type != AGENT_ATTR_SEED || a.len < AGENT_SEED_MIN ||
		    a.len > AGENT_SEED_MAX)
			continue;
		pool = malloc(sizeof(*pool) + a.len);
		fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
		if (pool && fd >= 0) {
			pool->entropy_count = a.len * 8;
			pool->buf_size = a.len;
			memcpy(pool->buf, a.value, a.len);
			if ((ioctl(fd, RNDADDENTROPY, pool) < 0 ||
			     ioctl(fd, RNDRESEEDCRNG) < 0) &&
			    agent_debug)
				agent_log("the host's seed: %s",
					  strerror(errno));
		}
		if (fd >= 0)
			close(fd);
		free(pool);
		return;
	}
}

static void handle_hello(struct conn *c)
{
	uint32_t version = 0;
	struct agent_builder b;

	agent_get_u32(c->payload, c->hdr.len, AGENT_ATTR_VERSION, &version);
	if (c->hdr.type != AGENT_MSG_HELLO || version != AGENT_PROTO_VERSION) {
		reply_error(c, c->hdr.id, EPROTONOSUPPORT,
			    "agent speaks protocol version %u: HELLO first",
			    AGENT_PROTO_VERSION);
		conn_flush(c);
		c->dead = true;
		return;
	}
	agent_build_begin(&b, frame_buf, sizeof(frame_buf), AGENT_MSG_HELLO,
			  c->hdr.id);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	agent_put_str(&b, AGENT_ATTR_NAME, "hintvm-agent " HVM_VERSION);
	agent_put_u32(&b, AGENT_ATTR_MAX_PAYLOAD, AGENT_MAX_PAYLOAD);
	conn_queue(c, frame_buf, agent_build_end(&b));
	c->state = CONN_CONTROL;
	mix_seed(c);
}

/* One complete frame. Returns true when the connection was handed over. */
static bool handle_frame(struct server *srv, struct conn *c)
{
	if (agent_payload_validate(c->payload, c->hdr.len) < 0) {
		reply_error(c, c->hdr.id, EPROTO, "malformed payload");
		conn_flush(c);
		c->dead = true;
		return false;
	}
	if (c->state == CONN_HELLO) {
		handle_hello(c);
		return false;
	}
	switch (c->hdr.type) {
	case AGENT_MSG_EXEC:
		handle_exec(srv, c);
		break;
	case AGENT_MSG_ATTACH:
		return handle_attach(srv, c);
	case AGENT_MSG_SIGNAL:
		handle_signal(srv, c);
		break;
	case AGENT_MSG_RESIZE:
		handle_resize(srv, c);
		break;
	case AGENT_MSG_LIST:
		handle_list(srv, c);
		break;
	case AGENT_MSG_WAIT:
		handle_wait(srv, c);
		break;
	case AGENT_MSG_STATS:
		handle_stats(srv, c);
		break;
	case AGENT_MSG_CGROUP_SET:
		handle_cgroup_set(srv, c);
		break;
	default:
		reply_error(c, c->hdr.id, EOPNOTSUPP, "unknown request type %u",
			    c->hdr.type);
		break;
	}
	return false;
}

/* "CONNECT <port>\n" of the hybrid test mode. */
static void read_preamble(struct server *srv, struct conn *c)
{
	char reply[32];
	unsigned int port;
	char ch;
	ssize_t n = read(c->fd, &ch, 1);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			c->dead = true;
		return;
	}
	if (ch != '\n') {
		if (c->preamble_len + 1 >= sizeof(c->preamble))
			c->dead = true;
		else
			c->preamble[c->preamble_len++] = ch;
		return;
	}
	c->preamble[c->preamble_len] = '\0';
	if (sscanf(c->preamble, "CONNECT %u", &port) != 1 ||
	    port != srv->where->port) {
		c->dead = true;
		return;
	}
	snprintf(reply, sizeof(reply), "OK %u\n", ++srv->next_fake_port);
	conn_queue(c, (const uint8_t *)reply, (int)strlen(reply));
	c->state = CONN_HELLO;
}

/* Read what is there; returns true when the connection was handed over. */
static bool conn_read(struct server *srv, struct conn *c)
{
	ssize_t n;

	if (c->state == CONN_PREAMBLE) {
		read_preamble(srv, c);
		return false;
	}
	if (c->hdr_got < AGENT_HDR_SIZE) {
		n = read(c->fd, c->hdr_buf + c->hdr_got,
			 AGENT_HDR_SIZE - c->hdr_got);
		if (n <= 0)
			goto eof_or_error;
		c->hdr_got += (size_t)n;
		if (c->hdr_got < AGENT_HDR_SIZE)
			return false;
		if (agent_hdr_decode(c->hdr_buf, &c->hdr) < 0) {
			reply_error(c, c->hdr.id, EMSGSIZE,
				    "payload of %u bytes, at most %u",
				    c->hdr.len, AGENT_MAX_PAYLOAD);
			conn_flush(c);
			c->dead = true;
			return false;
		}
		c->payload = malloc(c->hdr.len ? c->hdr.len : 1);
		c->payload_got = 0;
		if (!c->payload) {
			c->dead = true;
			return false;
		}
	}
	if (c->payload_got < c->hdr.len) {
		n = read(c->fd, c->payload + c->payload_got,
			 c->hdr.len - c->payload_got);
		if (n <= 0)
			goto eof_or_error;
		c->payload_got += (size_t)n;
		if (c->payload_got < c->hdr.len)
			return false;
	}
	{
		bool handed_over = handle_frame(srv, c);

		free(c->payload);
		c->payload = NULL;
		c->hdr_got = 0;
		return handed_over;
	}
eof_or_error:
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		c->dead = true;
	return false;
}

static void conn_free(struct server *srv, unsigned int index, bool close_it)
{
	struct conn *c = srv->conns[index];

	/* Its sessions lose their owner; unkept ones end with it. */
	for (unsigned int i = 0; i < srv->nr_sessions; i++) {
		struct session *s = srv->sessions[i];

		for (unsigned int w = 0; w < s->nr_waiters; w++) {
			if (s->waiters[w].conn == c)
				s->waiters[w--] = s->waiters[--s->nr_waiters];
		}
		if (s->owner != c)
			continue;
		s->owner = NULL;
		if (s->req.flags & AGENT_EXEC_KEEP)
			continue;
		if (s->state == AGENT_PROC_STARTING) {
			session_free(srv, s);
			i--;
		} else if (s->state == AGENT_PROC_RUNNING) {
			kill(-s->pid, SIGKILL);
			kill(s->pid, SIGKILL);
		}
	}
	if (close_it)
		close(c->fd);
	free(c->payload);
	free(c->out);
	free(c);
	srv->conns[index] = srv->conns[--srv->nr_conns];
}

/* ---- relays ------------------------------------------------------------ */

static void relay_read(struct session *s, struct relay *r)
{
	ssize_t n = read(r->src, r->buf + r->tail, RELAY_BUF - r->tail);

	if (n > 0)
		r->tail += (size_t)n;
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		r->src_eof = true; /* a terminal master says EIO */
}

static void relay_write(struct session *s, struct relay *r)
{
	ssize_t n = send(r->dst, r->buf + r->head, r->tail - r->head,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && errno == ENOTSOCK)
		n = write(r->dst, r->buf + r->head, r->tail - r->head);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			/* The reader is gone: so is this relay. */
			r->head = r->tail = 0;
			r->src_eof = true;
		}
		return;
	}
	r->head += (size_t)n;
	if (r->head == r->tail)
		r->head = r->tail = 0;
}

static void relay_settle(struct session *s, struct relay *r)
{
	if (!r->active || !r->src_eof || r->head != r->tail)
		return;
	relay_stop(r);
	if (r == &s->relay[RELAY_TTY_OUT])
		relay_stop(&s->relay[RELAY_TTY_IN]);
	session_close_idle_fds(s);
}

/* ---- processes ----------------------------------------------------------- */

static void reap_children(struct server *srv)
{
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	while (read(srv->signal_fd, &si, sizeof(si)) == sizeof(si))
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		pidns_ended(srv, pid);
		if (srv->main && pid == srv->main->pid) {
			srv->main->exited = true;
			srv->main->status = status;
			continue;
		}
		for (unsigned int i = 0; i < srv->nr_sessions; i++) {
			struct session *s = srv->sessions[i];

			if (s->pid == pid && s->state == AGENT_PROC_RUNNING) {
				s->state = AGENT_PROC_EXITED;
				s->wait_status = status;
				break;
			}
		}
		/* Anything else was an orphan PID 1 inherited: reaped. */
	}
}

/* A session whose process exited and whose output is all delivered. */
static void session_finish(struct server *srv, struct session *s)
{
	if (s->state != AGENT_PROC_EXITED || !session_output_done(s))
		return;
	if (!s->reported) {
		s->reported = true;
		/* Nothing more goes in: stdin's relay ends here. */
		relay_stop(&s->relay[RELAY_STDIN]);
		relay_stop(&s->relay[RELAY_TTY_IN]);
		session_close_idle_fds(s);
		if (s->owner)
			send_exited(s->owner, s->req_id, s);
	}
	for (unsigned int w = 0; w < s->nr_waiters; w++)
		send_exited(s->waiters[w].conn, s->waiters[w].id, s);
	if (s->nr_waiters && (s->req.flags & AGENT_EXEC_KEEP)) {
		session_free(srv, s);
		return;
	}
	s->nr_waiters = 0;
	if (!(s->req.flags & AGENT_EXEC_KEEP))
		session_free(srv, s);
}

/* ---- the loop ------------------------------------------------------------ */

enum poll_kind {
	POLL_LISTEN,
	POLL_SIGNAL,
	POLL_CONN,
	POLL_RELAY_SRC,
	POLL_RELAY_DST
};

struct poll_ref {
	enum poll_kind kind;
	struct conn *conn;
	struct session *session;
	struct relay *relay;
};

#define MAX_POLL (2 + MAX_CONNS + MAX_SESSIONS * 2 * RELAY_COUNT)
static struct pollfd pfds[MAX_POLL];
static struct poll_ref refs[MAX_POLL];

static unsigned int add_poll(unsigned int n, int fd, short events,
			     struct poll_ref ref)
{
	pfds[n] = (struct pollfd){ .fd = fd, .events = events };
	refs[n] = ref;
	return n + 1;
}

static void accept_conns(struct server *srv)
{
	for (;;) {
		int fd = accept4(srv->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0)
			return;
		if (srv->nr_conns >= MAX_CONNS) {
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = srv->where->hybrid_path ? CONN_PREAMBLE : CONN_HELLO;
		srv->conns[srv->nr_conns++] = c;
	}
}

static int open_listener(const struct agent_listen *where)
{
	int fd;

	if (where->hybrid_path) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		if (strlen(where->hybrid_path) >= sizeof(sun.sun_path))
			return -ENAMETOOLONG;
		strcpy(sun.sun_path, where->hybrid_path);
		unlink(where->hybrid_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)))
			goto fail;
	} else {
		struct sockaddr_vm svm = { .svm_family = AF_VSOCK,
					   .svm_cid = VMADDR_CID_ANY,
					   .svm_port = where->port };

		fd = socket(AF_VSOCK,
			    SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&svm, sizeof(svm)))
			goto fail;
	}
	if (listen(fd, 128) < 0)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -errno;
}

int agent_serve(const struct agent_listen *where, struct agent_main *main)
{
	static struct server srv;
	sigset_t chld;

	srv = (struct server){ .where = where,
			       .main = main,
			       .task_cgroup = task_cgroup_from_env() };
	for (int i = 0; i < MAX_PIDNS; i++)
		srv.pidns[i].fd = -1;
	/* No /proc (a test guest): no PID namespaces asked can be given. */
	srv.own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv.signal_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	srv.listen_fd = open_listener(where);
	if (srv.listen_fd < 0) {
		agent_log("cannot listen on %s port %u: %s",
			  where->hybrid_path ? where->hybrid_path : "vsock",
			  where->port, strerror(-srv.listen_fd));
		/* A main process still runs and ends the VM. */
	}
	if (main && main->argv) {
		/* Its stdio from the host's ports when served, else ours. */
		agent_stdio_connect(where->hybrid_path, main->stdio);
		main->pid = fork();
		if (main->pid == 0) {
			reset_signals();
			setsid();
			ioctl(0, TIOCSCTTY, 0);
			for (int i = 0; i < 3 && main->stdio[0] >= 0; i++)
				dup2(main->stdio[i], i);
			execvp(main->argv[0], main->argv);
			agent_log("cannot run %s: %s", main->argv[0],
				  strerror(errno));
			_exit(127);
		}
		if (main->pid < 0) {
			main->exited = true;
			main->status = 127 << 8;
		}
	}
	reap_children(&srv);

	while (!(main && main->exited)) {
		unsigned int n = 0;

		if (srv.listen_fd >= 0)
			n = add_poll(n, srv.listen_fd, POLLIN,
				     (struct poll_ref){ .kind = POLL_LISTEN });
		n = add_poll(n, srv.signal_fd, POLLIN,
			     (struct poll_ref){ .kind = POLL_SIGNAL });
		for (unsigned int i = 0; i < srv.nr_conns; i++) {
			struct conn *c = srv.conns[i];

			n = add_poll(n, c->fd,
				     POLLIN | (c->out_len ? POLLOUT : 0),
				     (struct poll_ref){ .kind = POLL_CONN,
							.conn = c });
		}
		for (unsigned int i = 0; i < srv.nr_sessions; i++) {
			struct session *s = srv.sessions[i];

			for (unsigned int k = 0; k < RELAY_COUNT; k++) {
				struct relay *r = &s->relay[k];
				struct poll_ref ref = { .session = s,
							.relay = r };

				if (!r->active)
					continue;
				if (!r->src_eof && r->tail < RELAY_BUF) {
					ref.kind = POLL_RELAY_SRC;
					n = add_poll(n, r->src, POLLIN, ref);
				}
				if (r->tail > r->head) {
					ref.kind = POLL_RELAY_DST;
					n = add_poll(n, r->dst, POLLOUT, ref);
				}
			}
		}
		if (poll(pfds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			agent_log("poll: %s", strerror(errno));
			return -1;
		}
		for (unsigned int i = 0; i < n; i++) {
			struct poll_ref *ref = &refs[i];

			if (!pfds[i].revents)
				continue;
			switch (ref->kind) {
			case POLL_LISTEN:
				accept_conns(&srv);
				break;
			case POLL_SIGNAL:
				reap_children(&srv);
				break;
			case POLL_CONN:
				/* Handled below, by index (they move). */
				break;
			case POLL_RELAY_SRC:
				if (ref->relay->active)
					relay_read(ref->session, ref->relay);
				break;
			case POLL_RELAY_DST:
				if (ref->relay->active)
					relay_write(ref->session, ref->relay);
				break;
			}
		}
		/* Connections: read, flush, drop the dead and the handed over. */
		for (unsigned int i = 0; i < n; i++) {
			struct conn *c = refs[i].conn;
			unsigned int idx;

			if (refs[i].kind != POLL_CONN || !pfds[i].revents)
				continue;
			for (idx = 0; idx < srv.nr_conns; idx++)
				if (srv.conns[idx] == c)
					break;
			if (idx == srv.nr_conns)
				continue;
			if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				if (conn_read(&srv, c)) {
					conn_free(&srv, idx, false);
					continue;
				}
			}
			conn_flush(c);
		}
		for (unsigned int i = 0; i < srv.nr_conns; i++) {
			if (srv.conns[i]->out_len)
				conn_flush(srv.conns[i]);
			if (srv.conns[i]->dead)
				conn_free(&srv, i--, true);
		}
		for (unsigned int i = 0; i < srv.nr_sessions; i++) {
			struct session *s = srv.sessions[i];
			unsigned int before = srv.nr_sessions;

			for (unsigned int k = 0; k < RELAY_COUNT; k++)
				relay_settle(s, &s->relay[k]);
			session_finish(&srv, s);
			if (srv.nr_sessions < before)
				i--;
		}
		for (unsigned int i = 0; i < srv.nr_conns; i++)
			if (srv.conns[i]->out_len)
				conn_flush(srv.conns[i]);
	}
	return main ? main->status : 0;
}

/* ---- the exit report ------------------------------------------------------ */

int agent_report_exit(const struct agent_listen *where, pid_t pid,
		      int wait_status)
{
	uint8_t frame[128], reply[AGENT_HDR_SIZE];
	struct agent_builder b;
	struct pollfd pfd;
	size_t got = 0;
	int fd, len;

	fd = agent_connect_host(where->hybrid_path, AGENT_STATUS_PORT);
	if (fd < 0)
		return fd;
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_EXIT_REPORT, 1);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	agent_put_u32(&b, AGENT_ATTR_PID, (uint32_t)pid);
	put_exit(&b, wait_status);
	len = agent_build_end(&b);
	if (len < 0 || send(fd, frame, (size_t)len, MSG_NOSIGNAL) != len) {
		close(fd);
		return -EIO;
	}
	/* hintvm acknowledges, so the report is in before the power goes. */
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (got < sizeof(reply) && poll(&pfd, 1, 2000) > 0) {
		ssize_t n = read(fd, reply + got, sizeof(reply) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return got == sizeof(reply) ? 0 : -ETIMEDOUT;
}
