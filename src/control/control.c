// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

#include "abi/control_proto.h"
#include "base/accept.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/log.h"
#include "control/control.h"
#include "control/event_json.h"
#include "control/registry.h"
#include "core/console_out.h"
#include "core/events.h"
#include "core/vm.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"
#include "sandbox/thread.h"

#define MAX_CLIENTS 16
#define MAX_SUBSCRIBERS 8
/*
 * A request line comes at once or not at all: a client has this long from
 * its line's first byte (or from connecting) to its newline...
 */
#define LINE_TIMEOUT_MS 1000
/* ... and, between requests on one connection, this long for the next. */
#define IDLE_TIMEOUT_MS 10000
/* Unsent replies beyond this: stop reading the client's requests. */
#define OUT_HIGH_WATER (4u << 20)
/* A subscriber gets new events only while less than this is unsent. */
#define EVENT_BACKLOG (64u << 10)
/* When the VM ends, readers get this long to take their last events. */
#define STOP_GRACE_MS 1000
/* How often subscribers are told about dropped console output. */
#define CONSOLE_CHECK_MS 1000

struct client {
	int fd; /* -1: free slot */
	bool subscriber;
	bool internal; /* hvm_vm_event_fd(): sends no requests */
	bool closing; /* peer done sending: close once the output is out */
	bool discarding; /* inside an over-long line: drop up to its '\n' */
	uint64_t cursor; /* next event sequence number to deliver */
	uint64_t lost; /* events lost, not yet reported to the client */
	uint64_t deadline_ms; /* 0: none */
	uint64_t line_start_ms; /* first byte of the pending line came */
	uint64_t idle_since_ms; /* last complete line (or the connection) */
	/* Files passed with the pending request (SCM_RIGHTS): snapshot's. */
	int passed[CTL_SNAPSHOT_FDS];
	unsigned int nr_passed;
	size_t in_used;
	char in[CTL_MAX_REQUEST + 1];
	char *out;
	size_t out_len, out_sent, out_cap;
};

struct control {
	struct vm *vm;
	char path[REGISTRY_PATH_MAX]; /* the bound socket; "" for none */
	char link[REGISTRY_PATH_MAX]; /* the registry's link to it, or "" */
	int listen_fd;
	/* At the file limit: a spare for the owner's request, no spinning. */
	struct accept_guard accept;
	int wake_fd;
	atomic_bool stop;
	pthread_t thread;
	bool thread_started;
	uint64_t start_ns;
	/* Subscribers from hvm_vm_event_fd(), adopted by the thread. */
	pthread_mutex_t lock;
	int pending_fd[MAX_SUBSCRIBERS];
	uint64_t pending_cursor[MAX_SUBSCRIBERS];
	unsigned int nr_pending;
	atomic_uint nr_subscribers;
	_Atomic uint64_t events_lost;
	/* Guest console bytes dropped, as last reported to subscribers. */
	uint64_t console_dropped;
	uint64_t next_console_check_ms;
	/* The files the request being answered came with. */
	const int *req_fds;
	unsigned int nr_req_fds;
	/* Socket clients (at most MAX_CLIENTS), then event fds. */
	struct client clients[MAX_CLIENTS + MAX_SUBSCRIBERS];
	/*
	 * In --jail's user namespace: how host root reads through it (the
	 * kernel's overflow uid); (uid_t)-1 outside one.
	 */
	uid_t outside_root;
};

#define NR_SLOTS (MAX_CLIENTS + MAX_SUBSCRIBERS)

static const char *vm_state(struct vm *vm)
{
	if (atomic_load(&vm->stopping))
		return "stopping";
	return atomic_load(&vm->paused) ? "paused" : "running";
}

/* The brain's view of its settings, as a JSON object (or NULL). */
static struct json_object *sched_settings(struct vm *vm)
{
	char buf[2048];

	if (!vm->hooks || !vm->hooks->describe ||
	    vm->hooks->describe(vm, buf, sizeof(buf)) <= 0)
		return NULL;
	return json_tokener_parse(buf);
}

static void add_str(struct json_object *o, const char *key, const char *value)
{
	json_object_object_add(o, key,
			       value ? json_object_new_string(value) : NULL);
}

static void add_u64(struct json_object *o, const char *key, uint64_t value)
{
	json_object_object_add(o, key, json_object_new_uint64(value));
}

static void add_bool(struct json_object *o, const char *key, bool value)
{
	json_object_object_add(o, key, json_object_new_boolean(value));
}

static void add_identity(struct control *ctl, struct json_object *o)
{
	add_str(o, "name", ctl->vm->name);
	add_u64(o, "pid", (uint64_t)getpid());
	add_str(o, "socket", ctl->path[0] ? ctl->path : NULL);
}

static void add_status(struct control *ctl, struct json_object *o)
{
	struct vm *vm = ctl->vm;
	struct json_object *sched = sched_settings(vm), *commit;

	add_str(o, "state", vm_state(vm));
	add_u64(o, "vcpus", vm->nr_vcpus);
	add_u64(o, "mem_mib", vm->cfg->mem >> 20);
	add_identity(ctl, o);
	add_u64(o, "uptime_ns", hvm_monotonic_ns() - ctl->start_ns);
	if (sched && json_object_object_get_ex(sched, "commit", &commit))
		json_object_object_add(o, "commit", json_object_get(commit));
	else
		add_str(o, "commit", NULL);
	add_u64(o, "subscribers", atomic_load(&ctl->nr_subscribers));
	add_u64(o, "events_lost", atomic_load(&ctl->events_lost));
	json_object_put(sched);
}

/* The effective configuration: what the VM was built from, and now runs. */
static struct json_object *info_object(struct control *ctl)
{
	const struct hvm_config *cfg = ctl->vm->cfg;
	struct json_object *o = json_object_new_object(),
			   *c = json_object_new_object(),
			   *disks = json_object_new_array(),
			   *nets = json_object_new_array();

	add_identity(ctl, o);
	add_str(o, "state", vm_state(ctl->vm));
	add_str(o, "version", hvm_version());
	add_str(c, "kernel", cfg->kernel ? cfg->kernel : "built-in");
	add_str(c, "initrd", cfg->initrd);
	add_str(c, "cmdline", cfg->cmdline);
	add_u64(c, "cpus", cfg->cpus);
	add_u64(c, "mem_mib", cfg->mem >> 20);
	add_bool(c, "hugepages", cfg->hugepages);
	add_bool(c, "mem_overcommit", cfg->mem_overcommit);
	add_str(c, "console", config_console_name(cfg->console));
	for (unsigned int i = 0; i < cfg->nr_disks; i++) {
		struct json_object *d = json_object_new_object();

		add_str(d, "path", cfg->disks[i].path);
		add_bool(d, "ro", cfg->disks[i].readonly);
		add_bool(d, "direct", cfg->disks[i].direct);
		json_object_array_add(disks, d);
	}
	json_object_object_add(c, "disks", disks);
	for (unsigned int i = 0; i < cfg->nr_nets; i++) {
		struct json_object *n = json_object_new_object();
		const uint8_t *m = cfg->nets[i].mac;
		char mac[18];

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 m[0], m[1], m[2], m[3], m[4], m[5]);
		add_str(n, "tap", cfg->nets[i].tap);
		add_str(n, "mac", cfg->nets[i].mac_set ? mac : NULL);
		json_object_array_add(nets, n);
	}
	json_object_object_add(c, "nets", nets);
	add_bool(c, "rng", cfg->rng);
	add_str(c, "core_sched", config_core_sched_name(cfg->core_sched));
	if (cfg->vsock.enabled) {
		struct json_object *v = json_object_new_object();

		add_u64(v, "cid", cfg->vsock.cid);
		add_str(v, "uds", cfg->vsock.uds);
		json_object_object_add(c, "vsock", v);
	}
	add_str(c, "kvm_device", cfg->kvm_path ? cfg->kvm_path : "/dev/kvm");
	add_u64(c, "verbose", (uint64_t)cfg->verbosity);
	add_str(c, "control",
		cfg->control_none   ? "none"
		: cfg->control_path ? cfg->control_path
				    : "runtime directory");
	json_object_object_add(o, "config", c);
	json_object_object_add(o, "sched", sched_settings(ctl->vm));
	return o;
}

int control_stats(struct vm *vm, bool json, char *buf, size_t len)
{
	if (!vm->hooks || !vm->hooks->format_stats)
		return hvm_set_error(-ENOENT, "this VM keeps no statistics");
	return vm->hooks->format_stats(vm, json, buf, len);
}

int control_stat(struct vm *vm, const char *name, uint64_t *value)
{
	if (!vm->hooks || !vm->hooks->stat)
		return hvm_set_error(-ENOENT, "this VM keeps no statistics");
	return vm->hooks->stat(vm, name, value);
}

/* `set` and hvm_vm_set(): 0, or a protocol error code with the reason. */
static enum ctl_error set_option(struct vm *vm, const char *key,
				 const char *value, int *err)
{
	const struct hvm_option_info *opts;
	char keys[128];
	size_t n;
	int r = -ENOENT;

	if (vm->hooks && vm->hooks->set_option)
		r = vm->hooks->set_option(vm, key, value);
	*err = r;
	if (r == 0) {
		/* The event's text is 96 bytes: cut the key and the value
		 * each to a bound of its own rather than the value's end. */
		char text[96];

		snprintf(text, sizeof(text), "%.31s=%.63s", key, value);
		event_post(&vm->events, VM_EVENT_SET, -1, 0, text, NULL);
		return CTL_OK;
	}
	if (r != -ENOENT)
		return CTL_E_BAD_VALUE;
	opts = hvm_options(&n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(opts[i].name, key))
			continue;
		*err = -EPERM;
		hvm_set_error(
			-EPERM,
			"'%s' is fixed once the VM exists; keys that change at run time: %s",
			key, ctl_set_keys_text(keys, sizeof(keys)));
		return CTL_E_NOT_RUNTIME;
	}
	hvm_set_error(
		-ENOENT,
		"'%.64s' is not an option; keys that change at run time: %s",
		key, ctl_set_keys_text(keys, sizeof(keys)));
	return CTL_E_UNKNOWN_KEY;
}

/* snapshot run|paused, with the state and memory files passed along. */
static struct json_object *answer_snapshot(struct control *ctl,
					   const struct ctl_request *req)
{
	struct vm *vm = ctl->vm;
	bool paused = !strcmp(req->arg, "paused");
	char msg[600];
	int r;

	if (!paused && strcmp(req->arg, "run"))
		return ctl_reply_error(
			req, CTL_E_BAD_VALUE,
			"snapshot: after it the VM is to 'run' or stay 'paused'");
	if (ctl->nr_req_fds != CTL_SNAPSHOT_FDS)
		return ctl_reply_error(
			req, CTL_E_BAD_REQUEST,
			"snapshot: the request must carry the state and memory files (SCM_RIGHTS), as `hintvm ctl VM snapshot DIR` sends them");
	if (!vm->hooks || !vm->hooks->snapshot)
		return ctl_reply_error(req, CTL_E_INTERNAL,
				       "snapshot: not available in this VM");
	r = vm->hooks->snapshot(vm, ctl->req_fds[0], ctl->req_fds[1], paused);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s", hvm_error_message());
		return ctl_reply_error(req,
				       r == -EBUSY ? CTL_E_BUSY
				       : r == -EOPNOTSUPP || r == -EINVAL
					       ? CTL_E_STATE
					       : CTL_E_INTERNAL,
				       msg);
	}
	{
		struct json_object *reply = ctl_reply_ok(req);

		add_str(reply, "state", vm_state(vm));
		return reply;
	}
}

static struct json_object *answer(struct control *ctl,
				  const struct ctl_request *req, int *subscribe)
{
	struct vm *vm = ctl->vm;
	struct json_object *reply;
	char msg[512];
	uint64_t value;
	enum ctl_error e;
	int r, err;

	switch (req->cmd) {
	case CTL_CMD_STATUS:
		reply = ctl_reply_ok(req);
		add_status(ctl, reply);
		return reply;
	case CTL_CMD_INFO:
		reply = ctl_reply_ok(req);
		json_object_object_add(reply, "info", info_object(ctl));
		return reply;
	case CTL_CMD_STATS: {
		int len = control_stats(vm, true, NULL, 0);
		char *buf = len > 0 ? malloc((size_t)len + 1) : NULL;
		struct json_object *doc = NULL;

		if (buf && control_stats(vm, true, buf, (size_t)len + 1) >= 0)
			doc = json_tokener_parse(buf);
		free(buf);
		if (!doc)
			return ctl_reply_error(req, CTL_E_INTERNAL,
					       "statistics are not available");
		reply = ctl_reply_ok(req);
		add_str(reply, "state", vm_state(vm));
		add_identity(ctl, reply);
		json_object_object_add(reply, "stats", doc);
		return reply;
	}
	case CTL_CMD_STAT:
		if (control_stat(vm, req->arg, &value) < 0) {
			snprintf(
				msg, sizeof(msg),
				"no statistic '%.64s'; see `hintvm ctl NAME stats` for the names",
				req->arg);
			return ctl_reply_error(req, CTL_E_UNKNOWN_STAT, msg);
		}
		reply = ctl_reply_ok(req);
		add_str(reply, "name", req->arg);
		add_u64(reply, "value", value);
		return reply;
	case CTL_CMD_PAUSE:
	case CTL_CMD_RESUME:
		r = req->cmd == CTL_CMD_PAUSE ? vm_pause(vm) : vm_resume(vm);
		if (r < 0) {
			snprintf(msg, sizeof(msg), "cannot %s: the VM is %s",
				 ctl_cmd_name(req->cmd), vm_state(vm));
			return ctl_reply_error(req, CTL_E_STATE, msg);
		}
		reply = ctl_reply_ok(req);
		add_str(reply, "state", vm_state(vm));
		return reply;
	case CTL_CMD_STOP:
		vm_request_stop(vm, HVM_EXIT_STOPPED, 0, -1,
				"stopped through the control socket");
		reply = ctl_reply_ok(req);
		add_str(reply, "state", "stopping");
		return reply;
	case CTL_CMD_SET:
		e = set_option(vm, req->arg, req->value, &err);
		if (e != CTL_OK)
			return ctl_reply_error(req, e, hvm_error_message());
		reply = ctl_reply_ok(req);
		add_str(reply, "key", req->arg);
		add_str(reply, "value", req->value);
		json_object_object_add(reply, "sched", sched_settings(vm));
		return reply;
	case CTL_CMD_SNAPSHOT:
		return answer_snapshot(ctl, req);
	case CTL_CMD_EVENTS:
		if (atomic_load(&ctl->nr_subscribers) >= MAX_SUBSCRIBERS) {
			snprintf(msg, sizeof(msg),
				 "already %d subscribers; try again later",
				 MAX_SUBSCRIBERS);
			return ctl_reply_error(req, CTL_E_BUSY, msg);
		}
		*subscribe = 1;
		reply = ctl_reply_ok(req);
		add_bool(reply, "subscribed", true);
		return reply;
	default:
		return ctl_reply_error(req, CTL_E_INTERNAL, "not implemented");
	}
}

char *control_answer(struct control *ctl, const char *line, size_t len,
		     size_t *reply_len, int *subscribe)
{
	struct ctl_request req;
	struct json_object *reply;
	char msg[512];
	enum ctl_error e;

	*subscribe = 0;
	e = ctl_parse_request(line, len, &req, msg, sizeof(msg));
	reply = e == CTL_OK ? answer(ctl, &req, subscribe)
			    : ctl_reply_error(&req, e, msg);
	ctl_request_release(&req);
	return ctl_format_line(reply, reply_len);
}

/* ---- the control thread ---- */

static uint64_t now_ms(void)
{
	return hvm_monotonic_ns() / 1000000;
}

static void close_passed(struct client *c)
{
	for (unsigned int i = 0; i < c->nr_passed; i++)
		close(c->passed[i]);
	c->nr_passed = 0;
}

static void client_close(struct control *ctl, struct client *c)
{
	close_passed(c);
	close(c->fd);
	accept_guard_refill(&ctl->accept);
	if (c->subscriber) {
		atomic_fetch_sub(&ctl->vm->events.subscribers, 1);
		atomic_fetch_sub(&ctl->nr_subscribers, 1);
	}
	free(c->out);
	*c = (struct client){ .fd = -1 };
}

static size_t unsent(const struct client *c)
{
	return c->out_len - c->out_sent;
}

static int queue(struct client *c, const char *data, size_t len)
{
	if (c->out_sent && c->out_sent == c->out_len)
		c->out_sent = c->out_len = 0;
	if (c->out_len + len > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *grown;

		/* Reclaim what went out before growing. */
		if (c->out_sent) {
			memmove(c->out, c->out + c->out_sent, unsent(c));
			c->out_len -= c->out_sent;
			c->out_sent = 0;
		}
		while (c->out_len + len > cap)
			cap *= 2;
		grown = cap == c->out_cap ? c->out : realloc(c->out, cap);
		if (!grown)
			return -ENOMEM;
		c->out = grown;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
	return 0;
}

/* Send what the socket takes now; false when the client is gone. */
static bool flush(struct client *c)
{
	while (unsent(c)) {
		ssize_t n = send(c->fd, c->out + c->out_sent, unsent(c),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		c->out_sent += (size_t)n;
	}
	return true;
}

static void subscribe(struct control *ctl, struct client *c, uint64_t cursor)
{
	c->subscriber = true;
	c->deadline_ms = 0;
	c->cursor = cursor;
}

static void client_line(struct control *ctl, struct client *c, const char *line,
			size_t len)
{
	size_t reply_len;
	int sub;
	char *reply;

	ctl->req_fds = c->passed;
	ctl->nr_req_fds = c->nr_passed;
	reply = control_answer(ctl, line, len, &reply_len, &sub);
	ctl->nr_req_fds = 0;
	/* Files come with one request; the next brings its own. */
	close_passed(c);

	if (reply && queue(c, reply, reply_len) < 0)
		pr_debug("control: no memory for a reply");
	free(reply);
	if (sub && !c->subscriber) {
		/* Counted first, so nothing posted from now on is skipped. */
		atomic_fetch_add(&ctl->vm->events.subscribers, 1);
		atomic_fetch_add(&ctl->nr_subscribers, 1);
		subscribe(ctl, c, event_ring_tail(&ctl->vm->events));
	}
	c->idle_since_ms = now_ms();
}

/* Requests are text: a control byte (a NUL...) gets its answer at once. */
static bool printable(const char *p, size_t len, bool more_may_come)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == '\n' || ch == '\t')
			continue;
		if (ch == '\r' && ((i + 1 == len && more_may_come) ||
				   (i + 1 < len && p[i + 1] == '\n')))
			continue;
		if (ch < 0x20 || ch == 0x7f)
			return false;
	}
	return true;
}

static void set_deadline(struct client *c)
{
	if (c->subscriber || c->internal)
		c->deadline_ms = 0;
	else if (c->in_used || c->discarding)
		c->deadline_ms = c->line_start_ms + LINE_TIMEOUT_MS;
	else
		c->deadline_ms = c->idle_since_ms + IDLE_TIMEOUT_MS;
}

/*
 * Read what C sent, keeping files passed with it (at most
 * CTL_SNAPSHOT_FDS; more are closed at once, as are files from a client
 * that already holds some).
 */
static ssize_t recv_with_fds(struct client *c)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * CTL_SNAPSHOT_FDS)];
	} ctrl;
	struct iovec iov = { c->in + c->in_used, sizeof(c->in) - c->in_used };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = ctrl.buf,
			      .msg_controllen = sizeof(ctrl.buf) };
	ssize_t n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return n;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h;
	     h = CMSG_NXTHDR(&msg, h)) {
		size_t nfds = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fds[CTL_SNAPSHOT_FDS];

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		if (nfds > CTL_SNAPSHOT_FDS)
			nfds = CTL_SNAPSHOT_FDS;
		memcpy(fds, CMSG_DATA(h), nfds * sizeof(int));
		for (size_t i = 0; i < nfds; i++) {
			if (c->nr_passed < CTL_SNAPSHOT_FDS)
				c->passed[c->nr_passed++] = fds[i];
			else
				close(fds[i]);
		}
	}
	return n;
}

/* Take what C sent and answer each complete line. */
static void client_read(struct control *ctl, struct client *c)
{
	ssize_t n = recv_with_fds(c);
	size_t start = 0;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* Done sending: whatever it is owed still goes out. */
		c->closing = true;
		return;
	}
	if (!printable(c->in + c->in_used, (size_t)n, true)) {
		static const struct ctl_request none;
		size_t len;
		char *reply = ctl_format_line(
			ctl_reply_error(
				&none, CTL_E_BAD_REQUEST,
				"request is not a line of printable text"),
			&len);

		if (reply)
			queue(c, reply, len);
		free(reply);
		c->closing = true; /* binary: not a client to keep talking to */
		c->in_used = 0;
		return;
	}
	if (!c->in_used && !c->discarding)
		c->line_start_ms = now_ms();
	c->in_used += (size_t)n;
	for (size_t i = 0; i < c->in_used; i++) {
		size_t len;

		if (c->in[i] != '\n')
			continue;
		len = i - start;
		if (len && c->in[start + len - 1] == '\r')
			len--;
		if (!c->discarding)
			client_line(ctl, c, c->in + start, len);
		c->discarding = false;
		start = i + 1;
		c->line_start_ms = now_ms(); /* for what follows it */
	}
	memmove(c->in, c->in + start, c->in_used - start);
	c->in_used -= start;
	if (c->in_used == sizeof(c->in)) {
		/* A line longer than any request: answer once, skip the rest. */
		if (!c->discarding)
			client_line(ctl, c, c->in, c->in_used);
		c->discarding = true;
		c->in_used = 0;
	}
	set_deadline(c);
}

static void queue_lost(struct client *c)
{
	struct json_object *o =
		ctl_event_new("lost", c->cursor - c->lost, hvm_monotonic_ns());
	size_t len;
	char *line;

	add_u64(o, "count", c->lost);
	line = ctl_format_line(o, &len);
	if (line && queue(c, line, len) == 0)
		c->lost = 0;
	free(line);
}

/*
 * Move events from the ring into C's buffer while it has room. Events the
 * ring overwrote before C took them are counted at once (status shows
 * them) and reported to C when it has room again.
 */
static void deliver_events(struct control *ctl, struct client *c)
{
	struct vm_event ev[16];
	uint64_t lost;
	size_t n;

	event_read(&ctl->vm->events, &c->cursor, ev, 0, &lost);
	c->lost += lost;
	atomic_fetch_add(&ctl->events_lost, lost);
	while (unsent(c) < EVENT_BACKLOG) {
		if (c->lost)
			queue_lost(c);
		n = event_read(&ctl->vm->events, &c->cursor, ev, 16, &lost);
		c->lost += lost;
		atomic_fetch_add(&ctl->events_lost, lost);
		if (c->lost)
			queue_lost(c); /* before the events that follow it */
		for (size_t i = 0; i < n; i++) {
			size_t len;
			char *line =
				ctl_format_line(event_to_json(&ev[i]), &len);

			if (line)
				queue(c, line, len);
			free(line);
		}
		if (n == 0)
			break;
	}
}

static struct client *free_slot(struct control *ctl)
{
	for (unsigned int i = 0; i < NR_SLOTS; i++)
		if (ctl->clients[i].fd < 0)
			return &ctl->clients[i];
	return NULL;
}

static void adopt_pending(struct control *ctl)
{
	pthread_mutex_lock(&ctl->lock);
	for (unsigned int i = 0; i < ctl->nr_pending; i++) {
		struct client *c = free_slot(ctl);

		if (!c) {
			/* Cannot happen: control_event_fd counts the slots. */
			close(ctl->pending_fd[i]);
			atomic_fetch_sub(&ctl->vm->events.subscribers, 1);
			atomic_fetch_sub(&ctl->nr_subscribers, 1);
			continue;
		}
		*c = (struct client){ .fd = ctl->pending_fd[i],
				      .internal = true };
		subscribe(ctl, c, ctl->pending_cursor[i]);
	}
	ctl->nr_pending = 0;
	pthread_mutex_unlock(&ctl->lock);
}

/*
 * Inside a user namespace that maps only the VM's uid (--jail,
 * src/vmm/jail.c), host root is unmapped: SO_PEERCRED reads it, and
 * every other host uid, as the overflow uid. The socket (mode 0600, the
 * VM's uid's, in a directory of its own) lets only that uid and host root
 * connect at all, so there the overflow uid is host root. (uid_t)-1 when
 * the process is in the host's user namespace.
 */
static uid_t outside_root_uid(void)
{
	unsigned long inside = 1, outside = 1, count = 0;
	char buf[64] = "";
	FILE *f = fopen("/proc/self/uid_map", "re");
	uid_t overflow = 65534;

	if (f) {
		if (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) != 3)
			count = 0;
		fclose(f);
	}
	if (inside == 0 && outside == 0 && count == 4294967295UL)
		return (uid_t)-1;
	f = fopen("/proc/sys/kernel/overflowuid", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			overflow = (uid_t)strtoul(buf, NULL, 10);
		fclose(f);
	}
	return overflow;
}

/* Only the VM's own user and root may steer it (SO_PEERCRED). */
static bool peer_allowed(const struct control *ctl, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred.uid == 0 || cred.uid == geteuid() ||
	       (ctl->outside_root != (uid_t)-1 &&
		cred.uid == ctl->outside_root);
}

/*
 * A slot for a new connection: a free one, or else the one of the client
 * that has waited longest without a request (subscribers stay), so that
 * connections that say nothing cannot hold the socket.
 */
static struct client *slot_for_new_client(struct control *ctl)
{
	struct client *oldest = NULL;
	unsigned int used = 0;

	for (unsigned int i = 0; i < NR_SLOTS; i++) {
		struct client *c = &ctl->clients[i];

		if (c->fd < 0 || c->internal)
			continue;
		used++;
		if (!c->subscriber &&
		    (!oldest || c->idle_since_ms < oldest->idle_since_ms))
			oldest = c;
	}
	if (used < MAX_CLIENTS)
		return free_slot(ctl);
	if (oldest)
		client_close(ctl, oldest);
	return oldest;
}

static void accept_client(struct control *ctl)
{
	static const struct ctl_request none;
	int fd = accept_guarded(&ctl->accept, ctl->listen_fd,
				SOCK_CLOEXEC | SOCK_NONBLOCK, now_ms());
	struct client *c;

	if (fd < 0) {
		if (errno == EMFILE)
			pr_warn_ratelimited(
				"control: hintvm is at its file limit (RLIMIT_NOFILE); new clients wait %d ms",
				ACCEPT_BACKOFF_MS);
		return;
	}
	if (!peer_allowed(ctl, fd)) {
		size_t len;
		char *reply = ctl_format_line(
			ctl_reply_error(
				&none, CTL_E_PERMISSION,
				"permission denied: not the VM's user or root"),
			&len);

		if (reply &&
		    send(fd, reply, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			pr_debug("control: refused client went away");
		free(reply);
		close(fd);
		return;
	}
	c = slot_for_new_client(ctl);
	if (!c) {
		close(fd);
		return;
	}
	*c = (struct client){ .fd = fd, .idle_since_ms = now_ms() };
	c->line_start_ms = c->idle_since_ms;
	c->deadline_ms = c->idle_since_ms + LINE_TIMEOUT_MS;
	/* Its line usually came with the connection: answer it now. */
	client_read(ctl, c);
}

/* Every subscriber gets its events; everyone gets what is queued. */
static void service_clients(struct control *ctl)
{
	for (unsigned int i = 0; i < NR_SLOTS; i++) {
		struct client *c = &ctl->clients[i];
		unsigned int rounds = 0;

		if (c->fd < 0)
			continue;
		/*
		 * Until the ring is empty or the socket full (then polled for
		 * POLLOUT): nothing else would wake us for what is left. The
		 * ring holds a bounded number of events: so are the rounds.
		 */
		do {
			if (c->subscriber)
				deliver_events(ctl, c);
			if (!flush(c))
				break;
		} while (c->subscriber && unsent(c) < EVENT_BACKLOG &&
			 ++rounds < EVENT_RING_SIZE &&
			 (c->lost ||
			  c->cursor < event_ring_tail(&ctl->vm->events)));
		if (c->fd >= 0 && !flush(c)) {
			client_close(ctl, c);
			continue;
		}
		if (c->closing && !unsent(c))
			client_close(ctl, c);
	}
}

/*
 * Guest output the console dropped because its reader stalled (core/
 * console_out.h): checked once a second while anyone subscribes, so the
 * console path itself does nothing for it.
 */
static void report_console_drops(struct control *ctl, uint64_t now)
{
	uint64_t dropped;

	if (now < ctl->next_console_check_ms)
		return;
	ctl->next_console_check_ms = now + CONSOLE_CHECK_MS;
	dropped = console_out_dropped(ctl->vm->console_out);
	if (dropped > ctl->console_dropped)
		event_post(&ctl->vm->events, VM_EVENT_CONSOLE_DROPPED, -1,
			   dropped - ctl->console_dropped, NULL, NULL);
	ctl->console_dropped = dropped;
}

/*
 * The VM ended: its last words (the exit event) go to whoever is reading,
 * for at most STOP_GRACE_MS; a client that does not read is not waited for.
 */
static void drain_clients(struct control *ctl)
{
	uint64_t deadline = now_ms() + STOP_GRACE_MS;

	for (;;) {
		struct pollfd fds[NR_SLOTS];
		unsigned int nfds = 0;
		uint64_t now;

		service_clients(ctl);
		for (unsigned int i = 0; i < NR_SLOTS; i++)
			if (ctl->clients[i].fd >= 0 && unsent(&ctl->clients[i]))
				fds[nfds++] = (struct pollfd){
					.fd = ctl->clients[i].fd,
					.events = POLLOUT
				};
		now = now_ms();
		if (!nfds || now >= deadline ||
		    poll(fds, nfds, (int)(deadline - now)) <= 0)
			return;
	}
}

/*
 * Serves up to MAX_CLIENTS clients at once. A request line must be
 * complete LINE_TIMEOUT_MS after its first byte, the next one must start
 * within IDLE_TIMEOUT_MS; subscribers stay as long as they like. A new
 * connection always gets a slot (slot_for_new_client), so connections
 * that say nothing delay nobody.
 */
static void *control_thread(void *arg)
{
	struct control *ctl = arg;

	pthread_setname_np(pthread_self(), "hintvm-control");
	sandbox_thread_enter(SANDBOX_CONTROL);
	for (;;) {
		struct pollfd fds[3 + NR_SLOTS];
		struct client *polled[NR_SLOTS];
		unsigned int nfds = 3;
		uint64_t now = now_ms(), next = UINT64_MAX, drained;
		int timeout;

		for (unsigned int i = 0; i < NR_SLOTS; i++) {
			struct client *c = &ctl->clients[i];
			short events = 0;

			if (c->fd >= 0 && c->deadline_ms &&
			    c->deadline_ms <= now && !unsent(c))
				client_close(ctl, c); /* too slow: no answer */
			if (c->fd < 0)
				continue;
			if (c->deadline_ms && c->deadline_ms < next)
				next = c->deadline_ms;
			if (!c->closing && unsent(c) < OUT_HIGH_WATER)
				events |= POLLIN;
			if (unsent(c))
				events |= POLLOUT;
			polled[nfds - 3] = c;
			fds[nfds++] = (struct pollfd){ .fd = c->fd,
						       .events = events };
		}
		fds[0] =
			(struct pollfd){ .fd = ctl->wake_fd, .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = ctl->vm->events.wake_fd,
					  .events = POLLIN };
		/* At the file limit, the waiting client stays in the backlog. */
		fds[2] = (struct pollfd){ .fd = accept_guard_paused(
							&ctl->accept, now)
							? -1
							: ctl->listen_fd,
					  .events = POLLIN };
		if (ctl->accept.paused_until_ms &&
		    ctl->accept.paused_until_ms < next)
			next = ctl->accept.paused_until_ms;
		/* Subscribers hear of dropped console output within a second. */
		if (atomic_load(&ctl->nr_subscribers)) {
			report_console_drops(ctl, now);
			if (ctl->next_console_check_ms < next)
				next = ctl->next_console_check_ms;
		}
		timeout = next == UINT64_MAX ? -1
			  : next > now	     ? (int)(next - now)
					     : 0;
		if (poll(fds, nfds, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents) {
			if (read(ctl->wake_fd, &drained, sizeof(drained)) < 0)
				pr_debug("control: empty wake-up");
			adopt_pending(ctl);
		}
		if (fds[1].revents && read(ctl->vm->events.wake_fd, &drained,
					   sizeof(drained)) < 0)
			pr_debug("control: empty event wake-up");
		for (unsigned int i = 3; i < nfds; i++) {
			struct client *c = polled[i - 3];

			if (fds[i].revents & POLLIN)
				client_read(ctl, c);
			else if (fds[i].revents & (POLLHUP | POLLERR))
				c->closing = true;
		}
		if (fds[2].revents)
			accept_client(ctl);
		if (atomic_load(&ctl->stop))
			break;
		service_clients(ctl);
	}
	drain_clients(ctl);
	for (unsigned int i = 0; i < NR_SLOTS; i++)
		if (ctl->clients[i].fd >= 0)
			client_close(ctl, &ctl->clients[i]);
	return NULL;
}

/* ---- set-up: the socket and the registry ---- */

/* A socket file nobody listens on is left over from a dead VM. */
static int remove_stale_socket(const char *path)
{
	struct stat st;
	int r;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return hvm_set_error(
			-EEXIST,
			"--control: %s exists and is not a socket; refusing to replace it",
			path);
	r = registry_probe(path);
	if (r == 1)
		return hvm_set_error(-EADDRINUSE,
				     "--control: another VM is serving %s",
				     path);
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

static int bind_socket(struct control *ctl, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return hvm_set_error(
			-ENAMETOOLONG,
			"--control: path '%s' is longer than the %zu bytes a Unix socket allows",
			path, sizeof(addr.sun_path) - 1);
	r = remove_stale_socket(path);
	if (r < 0)
		return r;
	strcpy(addr.sun_path, path);
	ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->listen_fd < 0 || fchmod(ctl->listen_fd, 0600) < 0 ||
	    bind(ctl->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return hvm_set_errno_error("--control: cannot listen on %s",
					   path);
	/*
	 * 0600 whatever the umask: bind() gave the file the socket inode's
	 * mode, set above. Checked, never chmod()ed by path: that would
	 * follow a link put in its place. SO_PEERCRED is checked anyway.
	 */
	r = check_bound_socket("--control", path, &st);
	if (r < 0)
		return r; /* and what is at PATH now is not ours to remove */
	strcpy(ctl->path, path);
	if (listen(ctl->listen_fd, 64) < 0)
		return hvm_set_errno_error("--control: cannot listen on %s",
					   path);
	return 0;
}

/* The absolute form of PATH, for the registry's link. */
static int absolute(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(buf, len, "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(buf, len, "%s/%s", cwd, path);
	else
		return -errno;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int open_socket(struct control *ctl)
{
	const struct hvm_config *cfg = ctl->vm->cfg;
	char dir[REGISTRY_PATH_MAX], entry[REGISTRY_PATH_MAX];
	char target[REGISTRY_PATH_MAX];
	int r;

	if (cfg->control_none)
		return 0;
	r = registry_open_dir(dir, sizeof(dir));
	if (r == 0)
		r = registry_claim(dir, ctl->vm->name, entry, sizeof(entry));
	if (r < 0) {
		/* A VM nobody named need not be findable; a named one must. */
		if (cfg->name)
			return r;
		if (!cfg->control_path) {
			pr_warn("no control socket: %s", hvm_error_message());
			return 0;
		}
		entry[0] = '\0';
	}
	if (!cfg->control_path) {
		r = bind_socket(ctl, entry);
		/* As above: a host that cannot give an unnamed VM its default
		 * socket (a kernel without AF_UNIX) still runs the VM. */
		if (r < 0 && !cfg->name) {
			pr_warn("no control socket: %s", hvm_error_message());
			if (ctl->listen_fd >= 0)
				close(ctl->listen_fd);
			ctl->listen_fd = -1;
			if (ctl->path[0])
				unlink(ctl->path);
			ctl->path[0] = '\0';
			return 0;
		}
		return r;
	}
	r = bind_socket(ctl, cfg->control_path);
	if (r < 0 || !entry[0])
		return r;
	if (absolute(cfg->control_path, target, sizeof(target)) < 0 ||
	    registry_link(entry, target) < 0) {
		if (cfg->name)
			return hvm_set_error(-ENAMETOOLONG,
					     "cannot register %s as '%s' in %s",
					     target, ctl->vm->name, dir);
		pr_warn("%s: not listed by hintvm ls", hvm_error_message());
		return 0;
	}
	strcpy(ctl->link, entry);
	return 0;
}

void control_grant_teardown(const struct control *ctl)
{
	if (ctl->link[0])
		sandbox_grant_parent(ctl->link, SANDBOX_GRANT_REMOVE);
	if (ctl->path[0])
		sandbox_grant_parent(ctl->path, SANDBOX_GRANT_REMOVE);
}

static void unregister(struct control *ctl)
{
	if (ctl->link[0])
		unlink(ctl->link);
	if (ctl->path[0])
		unlink(ctl->path);
	ctl->link[0] = ctl->path[0] = '\0';
}

int control_start(struct vm *vm, struct control **out)
{
	struct control *ctl = calloc(1, sizeof(*ctl));
	int r;

	if (!ctl)
		return hvm_set_error(-ENOMEM, "out of memory");
	ctl->vm = vm;
	ctl->listen_fd = -1;
	accept_guard_init(&ctl->accept, true);
	ctl->start_ns = hvm_monotonic_ns();
	ctl->outside_root = outside_root_uid();
	pthread_mutex_init(&ctl->lock, NULL);
	for (unsigned int i = 0; i < NR_SLOTS; i++)
		ctl->clients[i].fd = -1;
	if (vm->cfg->name)
		snprintf(vm->name, sizeof(vm->name), "%s", vm->cfg->name);
	else
		registry_default_name(vm->name, sizeof(vm->name));
	ctl->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ctl->wake_fd < 0) {
		r = hvm_set_errno_error("cannot create an eventfd");
		goto fail;
	}
	r = open_socket(ctl);
	if (r < 0)
		goto fail;
	if (ctl->path[0])
		pr_info("control socket of '%s': %s", vm->name, ctl->path);
	*out = ctl;
	return 0;
fail:
	control_stop(ctl);
	return r;
}

int control_serve(struct control *ctl)
{
	sigset_t all, old;
	int r;

	if (!ctl || ctl->thread_started)
		return 0;
	/* Signals are for the vCPU threads and the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = vm_thread_create(&ctl->thread, control_thread, ctl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return hvm_set_error(-r, "cannot start the control thread");
	ctl->thread_started = true;
	return 0;
}

void control_stop(struct control *ctl)
{
	uint64_t one = 1;

	if (!ctl)
		return;
	if (ctl->thread_started) {
		atomic_store(&ctl->stop, true);
		if (write(ctl->wake_fd, &one, sizeof(one)) < 0)
			pr_warn("cannot wake the control thread");
		pthread_join(ctl->thread, NULL);
	}
	for (unsigned int i = 0; i < ctl->nr_pending; i++) {
		close(ctl->pending_fd[i]);
		atomic_fetch_sub(&ctl->vm->events.subscribers, 1);
	}
	unregister(ctl);
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	accept_guard_destroy(&ctl->accept);
	if (ctl->wake_fd >= 0)
		close(ctl->wake_fd);
	pthread_mutex_destroy(&ctl->lock);
	free(ctl);
}

int control_event_fd(struct control *ctl)
{
	uint64_t one = 1;
	int sv[2];

	if (!ctl)
		return hvm_set_error(
			-EINVAL, "the VM is not running: no events to follow");
	if (atomic_fetch_add(&ctl->nr_subscribers, 1) >= MAX_SUBSCRIBERS) {
		atomic_fetch_sub(&ctl->nr_subscribers, 1);
		return hvm_set_error(-EBUSY, "already %d event subscribers",
				     MAX_SUBSCRIBERS);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		atomic_fetch_sub(&ctl->nr_subscribers, 1);
		return hvm_set_errno_error("cannot create a socket pair");
	}
	atomic_fetch_add(&ctl->vm->events.subscribers, 1);
	pthread_mutex_lock(&ctl->lock);
	ctl->pending_cursor[ctl->nr_pending] =
		event_ring_tail(&ctl->vm->events);
	ctl->pending_fd[ctl->nr_pending++] = sv[1];
	pthread_mutex_unlock(&ctl->lock);
	if (write(ctl->wake_fd, &one, sizeof(one)) < 0)
		pr_debug("control: cannot wake the control thread");
	return sv[0];
}

int control_set(struct vm *vm, const char *key, const char *value)
{
	int err;

	set_option(vm, key, value, &err);
	return err;
}

int control_info(struct vm *vm, char *buf, size_t len)
{
	struct control fake = { .vm = vm };
	struct control *ctl = vm->control ? vm->control : &fake;
	struct json_object *o = info_object(ctl);
	const char *text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	int n = snprintf(buf, len, "%s", text ? text : "");

	json_object_put(o);
	return n;
}
