// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm exec: run a command in a running VM through its guest agent
 * (docs/agent.md), with stdio attached, and exit with its status as a
 * shell would. Everything guest-facing is libhintvm's hvm_process_* API;
 * this file is the terminal and the copying between our stdio and the
 * process's streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "hintvm/hintvm.h"

/* hintvm exec's own failures, apart from the process's statuses. */
#define EXEC_FAILED 125
#define EXEC_NOT_EXECUTABLE 126
#define EXEC_NOT_FOUND 127
#define PUMP_BUF (64 * 1024)
#define MAX_ENV 1024

/* Bytes from one fd to another; we own neither. */
struct pump {
	int src, dst;
	char buf[PUMP_BUF];
	size_t head, tail;
	bool eof; /* src said EOF or failed */
	bool done; /* eof and everything written (or dst gone) */
};

static struct termios saved_termios;
static bool termios_saved;

static void restore_terminal(void)
{
	if (termios_saved)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_termios);
	termios_saved = false;
}

static int raw_terminal(void)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &saved_termios) < 0)
		return -1;
	raw = saved_termios;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) < 0)
		return -1;
	termios_saved = true;
	atexit(restore_terminal);
	return 0;
}

static void window_size(unsigned short *rows, unsigned short *cols)
{
	struct winsize ws = { 0 };

	if ((ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || !ws.ws_row) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		ws = (struct winsize){ 0 };
	*rows = ws.ws_row ? ws.ws_row : 24;
	*cols = ws.ws_col ? ws.ws_col : 80;
}

static void pump_init(struct pump *p, int src, int dst)
{
	p->src = src;
	p->dst = dst;
	p->head = p->tail = 0;
	p->eof = p->done = src < 0 || dst < 0;
}

static void pump_read(struct pump *p)
{
	ssize_t n = read(p->src, p->buf + p->tail, PUMP_BUF - p->tail);

	if (n > 0)
		p->tail += (size_t)n;
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		p->eof = true;
}

static void pump_write(struct pump *p)
{
	ssize_t n = write(p->dst, p->buf + p->head, p->tail - p->head);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			/* Nobody reads any more: drop what is left. */
			p->head = p->tail = 0;
			p->eof = true;
		}
		return;
	}
	p->head += (size_t)n;
	if (p->head == p->tail)
		p->head = p->tail = 0;
}

static short pump_src_events(const struct pump *p)
{
	return !p->done && !p->eof && p->tail < PUMP_BUF ? POLLIN : 0;
}

static short pump_dst_events(const struct pump *p)
{
	return !p->done && p->tail > p->head ? POLLOUT : 0;
}

static void pump_settle(struct pump *p)
{
	if (!p->done && p->eof && p->head == p->tail)
		p->done = true;
}

struct exec_args {
	bool tty;
	const char *env[MAX_ENV + 1];
	unsigned int nr_env;
	const char *cwd;
	long long uid, gid;
	const char *vm;
	char **argv;
};

static int parse_user(const char *s, struct exec_args *a)
{
	char *end;

	errno = 0;
	a->uid = strtoll(s, &end, 10);
	if (errno || end == s || a->uid < 0 || a->uid >= 0xffffffffLL)
		return -1;
	if (*end == ':') {
		s = end + 1;
		a->gid = strtoll(s, &end, 10);
		if (errno || end == s || a->gid < 0 || a->gid >= 0xffffffffLL)
			return -1;
	}
	return *end ? -1 : 0;
}

static int parse_exec_args(int argc, char **argv, struct exec_args *a)
{
	static const struct option longopts[] = {
		{ "tty", no_argument, NULL, 't' },
		{ "env", required_argument, NULL, 'e' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct exec_args){ .uid = -1, .gid = -1 };
	opterr = 0;
	optind = 1;
	/* '+': options end at VM, so CMD's own options stay CMD's. */
	while ((c = getopt_long(argc, argv, "+te:w:u:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 't':
			a->tty = true;
			break;
		case 'e':
			if (!strchr(optarg, '=') || optarg[0] == '=') {
				fprintf(stderr,
					"hintvm exec: -e wants K=V, not '%s'\n",
					optarg);
				return -1;
			}
			if (a->nr_env >= MAX_ENV) {
				fprintf(stderr,
					"hintvm exec: more than %d -e\n",
					MAX_ENV);
				return -1;
			}
			a->env[a->nr_env++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/') {
				fprintf(stderr,
					"hintvm exec: -w wants an absolute directory, not '%s'\n",
					optarg);
				return -1;
			}
			a->cwd = optarg;
			break;
		case 'u':
			if (parse_user(optarg, a) < 0) {
				fprintf(stderr,
					"hintvm exec: -u wants UID[:GID] (numbers), not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'h':
			cli_usage(stdout, "exec");
			exit(0);
		default:
			fprintf(stderr,
				"hintvm exec: unknown option or missing value: '%s' (see hintvm exec --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
			"hintvm exec: which VM? (usage: hintvm exec VM -- CMD [ARG...])\n");
		return -1;
	}
	a->vm = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		fprintf(stderr,
			"hintvm exec: no command (usage: hintvm exec VM -- CMD [ARG...])\n");
		return -1;
	}
	a->argv = argv + optind;
	return 0;
}

/* The signals we pass on to the process (SIGWINCH resizes instead). */
static const int forwarded[] = { SIGINT,  SIGTERM, SIGHUP,
				 SIGQUIT, SIGUSR1, SIGUSR2 };

static int signal_fd_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void handle_signals(int sfd, struct hvm_process *p, bool tty)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGWINCH) {
			unsigned short rows, cols;

			if (!tty)
				continue;
			window_size(&rows, &cols);
			hvm_process_resize(p, rows, cols);
		} else if (hvm_process_signal(p, (int)si.ssi_signo) < 0) {
			/* The process may have just exited: not an error. */
		}
	}
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Copy until the process exited and its output is all out. */
static int attach(struct hvm_process *p, bool tty, int sfd)
{
	static struct pump in, out, err;
	struct hvm_process_exit ex;
	bool exited = false;

	if (tty) {
		pump_init(&in, STDIN_FILENO, hvm_process_fd(p, HVM_STREAM_TTY));
		pump_init(&out, hvm_process_fd(p, HVM_STREAM_TTY),
			  STDOUT_FILENO);
		pump_init(&err, -1, -1);
	} else {
		pump_init(&in, STDIN_FILENO,
			  hvm_process_fd(p, HVM_STREAM_STDIN));
		pump_init(&out, hvm_process_fd(p, HVM_STREAM_STDOUT),
			  STDOUT_FILENO);
		pump_init(&err, hvm_process_fd(p, HVM_STREAM_STDERR),
			  STDERR_FILENO);
	}
	/* Only the sockets: our stdio's file descriptions are shared. */
	for (int s = HVM_STREAM_STDIN; s <= HVM_STREAM_TTY; s++)
		if (hvm_process_fd(p, (enum hvm_stream)s) >= 0)
			set_nonblock(hvm_process_fd(p, (enum hvm_stream)s));

	while (!exited || !out.done || !err.done) {
		struct pollfd fds[8];
		int n = 0, i_in_src, i_in_dst, i_out_src, i_out_dst, i_err_src,
		    i_err_dst, i_ctl, i_sig;
		bool ask;

#define ADD(fd, ev) \
	((ev) ? (fds[n] = (struct pollfd){ (fd), (ev), 0 }, n++) : -1)
		i_in_src = ADD(in.src, pump_src_events(&in));
		i_in_dst = ADD(in.dst, pump_dst_events(&in));
		i_out_src = ADD(out.src, pump_src_events(&out));
		i_out_dst = ADD(out.dst, pump_dst_events(&out));
		i_err_src = ADD(err.src, pump_src_events(&err));
		i_err_dst = ADD(err.dst, pump_dst_events(&err));
		i_ctl = ADD(hvm_process_event_fd(p), exited ? 0 : POLLIN);
		i_sig = ADD(sfd, POLLIN);
#undef ADD
		if (poll(fds, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("hintvm exec: poll");
			return EXEC_FAILED;
		}
#define READY(i) ((i) >= 0 && fds[i].revents)
		if (READY(i_in_src))
			pump_read(&in);
		if (READY(i_in_dst))
			pump_write(&in);
		if (READY(i_out_src))
			pump_read(&out);
		if (READY(i_out_dst))
			pump_write(&out);
		if (READY(i_err_src))
			pump_read(&err);
		if (READY(i_err_dst))
			pump_write(&err);
		/*
		 * A signal's reply can come after the process's EXITED,
		 * which the library then takes in on the way: the control
		 * connection says nothing more, so look again here.
		 */
		ask = READY(i_ctl);
		if (READY(i_sig)) {
			handle_signals(sfd, p, tty);
			ask = !exited;
		}
		if (ask) {
			int r = hvm_process_wait(p, &ex, 0);

			if (r == 0) {
				exited = true;
			} else if (r != -ETIMEDOUT) {
				restore_terminal();
				fprintf(stderr, "hintvm exec: %s\n",
					hvm_last_error());
				return EXEC_FAILED;
			}
		}
#undef READY
		pump_settle(&in);
		pump_settle(&out);
		pump_settle(&err);
		/* Our stdin ended: the process reads EOF (not a terminal's). */
		if (!tty && in.done && hvm_process_fd(p, HVM_STREAM_STDIN) >= 0)
			hvm_process_close_fd(p, HVM_STREAM_STDIN);
	}
	return ex.status;
}

int cmd_exec(int argc, char **argv)
{
	struct hvm_process_spec spec = { 0 };
	struct exec_args a;
	struct hvm_process *p;
	int sfd, status;

	if (parse_exec_args(argc, argv, &a) < 0)
		return EXEC_FAILED;
	if (a.tty && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "hintvm exec: -t needs a terminal on stdin\n");
		return EXEC_FAILED;
	}
	/* A vanished agent is an error from write(), not a SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (a.tty) {
		const char *term = getenv("TERM");
		static char term_env[128];
		bool given = false;

		for (unsigned int i = 0; i < a.nr_env; i++)
			given |= !strncmp(a.env[i], "TERM=", 5);
		if (term && !given && a.nr_env < MAX_ENV &&
		    (size_t)snprintf(term_env, sizeof(term_env), "TERM=%s",
				     term) < sizeof(term_env))
			a.env[a.nr_env++] = term_env;
	}
	a.env[a.nr_env] = NULL;
	spec.argv = (const char *const *)a.argv;
	spec.envp = a.nr_env ? a.env : NULL;
	spec.cwd = a.cwd;
	spec.uid = a.uid;
	spec.gid = a.gid;
	if (a.tty) {
		spec.flags = HVM_PROCESS_TTY;
		window_size(&spec.rows, &spec.cols);
	} else {
		spec.flags = HVM_PROCESS_STDIN | HVM_PROCESS_STDOUT |
			     HVM_PROCESS_STDERR;
	}
	/*
	 * Signals are ours until the process runs: Ctrl-C or a timeout's
	 * SIGTERM ends an exec whose agent does not answer, and the closed
	 * control connection makes the agent drop the half-started session.
	 * From STARTED on they are the process's (a signal in between ends
	 * us, and the agent then kills the process).
	 */
	p = hvm_process_start(a.vm, &spec);
	if (!p) {
		int err = hvm_process_errno();

		fprintf(stderr, "hintvm exec: %s\n", hvm_last_error());
		if (err == ENOENT)
			return EXEC_NOT_FOUND;
		if (err == EACCES || err == ENOEXEC || err == EISDIR ||
		    err == ENOTDIR)
			return EXEC_NOT_EXECUTABLE;
		return EXEC_FAILED;
	}
	sfd = signal_fd_open();
	if (sfd < 0) {
		perror("hintvm exec: signalfd");
		hvm_process_free(p);
		return EXEC_FAILED;
	}
	if (a.tty) {
		unsigned short rows, cols;

		/* A resize while it started went unseen (SIGWINCH is ignored
		 * by default): catch up. */
		window_size(&rows, &cols);
		if (rows != spec.rows || cols != spec.cols)
			hvm_process_resize(p, rows, cols);
		if (raw_terminal() < 0) {
			perror("hintvm exec: raw mode");
			hvm_process_free(p);
			close(sfd);
			return EXEC_FAILED;
		}
	}
	status = attach(p, a.tty, sfd);
	restore_terminal();
	hvm_process_free(p);
	close(sfd);
	return status;
}
