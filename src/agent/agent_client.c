// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host side of the guest agent protocol (docs/agent.md): the
 * hvm_process_* API of include/hintvm/hintvm.h, which `hintvm exec` is
 * built on. Every connection goes through the VM's hybrid vsock socket
 * ("CONNECT <port>\n", "OK <n>\n"), then speaks the framed protocol; a
 * stream connection turns into raw bytes once ATTACH is acknowledged and
 * is handed to the caller as it is.
 *
 * The agent's replies are read with the same bounds the agent applies to
 * requests: the codec refuses oversized frames before anything is
 * allocated.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "abi/agent_proto.h"
#include "agent/agent_client.h"
#include "base/log.h"
#include "hintvm/hintvm.h"

/* How long a connection may take to be accepted and greeted. */
#define DIAL_TIMEOUT_MS 10000

struct hvm_process {
	int control;
	int stream[AGENT_STREAM_COUNT];
	uint32_t session;
	uint32_t next_id;
	int pid;
	unsigned int flags;
	bool exited;
	struct hvm_process_exit exit;
};

static __thread int last_process_errno;

int hvm_process_errno(void)
{
	return last_process_errno;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for FD to become readable by DEADLINE (-1: no deadline). */
static int wait_readable(int fd, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int timeout, r;

	do {
		timeout = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && timeout < 0)
			timeout = 0;
		r = poll(&pfd, 1, timeout);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

static int read_full(int fd, void *buf, size_t len, int64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;
		int r = wait_readable(fd, deadline);

		if (r < 0)
			return r;
		n = read(fd, (char *)buf + got, len - got);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const char *)buf + done, len - done,
				 MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

int agent_read_frame(int fd, struct agent_hdr *hdr, uint8_t **payload,
		     int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint8_t buf[AGENT_HDR_SIZE];
	int r;

	*payload = NULL;
	r = read_full(fd, buf, sizeof(buf), deadline);
	if (r < 0)
		return r;
	if (agent_hdr_decode(buf, hdr) < 0)
		return -EMSGSIZE;
	*payload = malloc(hdr->len ? hdr->len : 1);
	if (!*payload)
		return -ENOMEM;
	/* The header came: the rest follows without a deadline's hurry. */
	r = read_full(fd, *payload, hdr->len,
		      deadline < 0 ? -1 : now_ms() + DIAL_TIMEOUT_MS);
	if (r == 0 && agent_payload_validate(*payload, hdr->len) < 0)
		r = -EPROTO;
	if (r < 0) {
		free(*payload);
		*payload = NULL;
	}
	return r;
}

/* An ERROR frame as this thread's error; returns -ERRNO. */
static int agent_error(const uint8_t *payload, size_t len, const char *what)
{
	char msg[256] = "";
	uint32_t err = EIO;

	agent_get_u32(payload, len, AGENT_ATTR_ERRNO, &err);
	agent_get_str(payload, len, AGENT_ATTR_MESSAGE, msg, sizeof(msg));
	if (!err || err > 4095)
		err = EIO;
	return hvm_set_error(-(int)err, "%s: %s", what,
			     msg[0] ? msg : strerror((int)err));
}

/*
 * A VM name -> its vsock socket: the control socket's "info" reply names
 * it (info.config.vsock.uds, docs/control-socket.md).
 */
static int resolve_vsock_path(const char *vm, char *path, size_t size)
{
	const char *req = "{\"v\":1,\"cmd\":\"info\"}\n";
	struct json_object *reply = NULL, *info, *cfg, *vsock, *uds;
	char line[16384];
	size_t got = 0;
	int fd, r = 0;

	if (strchr(vm, '/')) {
		if (strlen(vm) >= size)
			return hvm_set_error(-ENAMETOOLONG,
					     "vsock socket path too long: %s",
					     vm);
		strcpy(path, vm);
		return 0;
	}
	fd = hvm_control_connect(vm);
	if (fd < 0)
		return fd;
	if (write_full(fd, req, strlen(req)) < 0) {
		close(fd);
		return hvm_set_error(-EIO, "VM %s: cannot ask for its info",
				     vm);
	}
	while (got < sizeof(line) - 1) {
		ssize_t n = read(fd, line + got, sizeof(line) - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(line, '\n', got))
			break;
	}
	close(fd);
	line[got] = '\0';
	reply = json_tokener_parse(line);
	/* {"v":1,"ok":true,"info":{...,"config":{...,"vsock":{...}}}} */
	if (!reply || !json_object_object_get_ex(reply, "info", &info) ||
	    !json_object_object_get_ex(info, "config", &cfg) ||
	    !json_object_object_get_ex(cfg, "vsock", &vsock)) {
		r = hvm_set_error(
			-ENODEV,
			"VM %s has no vsock device (run it with --agent or --vsock)",
			vm);
		goto out;
	}
	if (json_object_is_type(vsock, json_type_object) &&
	    json_object_object_get_ex(vsock, "uds", &uds))
		vsock = uds;
	if (!json_object_is_type(vsock, json_type_string) ||
	    json_object_get_string_len(vsock) <= 0 ||
	    (size_t)json_object_get_string_len(vsock) >= size) {
		r = hvm_set_error(-ENODEV, "VM %s reports no vsock socket", vm);
		goto out;
	}
	strcpy(path, json_object_get_string(vsock));
out:
	json_object_put(reply);
	return r;
}

int agent_dial(const char *uds_path, unsigned int port)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(uds_path) >= sizeof(addr.sun_path))
		return hvm_set_error(-ENAMETOOLONG, "socket path too long: %s",
				     uds_path);
	strcpy(addr.sun_path, uds_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hvm_set_errno_error("cannot create a socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = -errno;
		close(fd);
		return hvm_set_error(r, "cannot connect to %s: %s", uds_path,
				     strerror(-r));
	}
	r = agent_greet(fd, uds_path, port);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int agent_greet(int fd, const char *what, unsigned int port)
{
	int64_t deadline = now_ms() + DIAL_TIMEOUT_MS;
	uint8_t frame[128], seed[32], *payload = NULL;
	struct agent_builder b;
	struct agent_hdr hdr;
	uint32_t version = 0;
	char line[64];
	size_t got = 0;
	int r, len;

	/* The hybrid vsock handshake: one line each way. */
	len = snprintf(line, sizeof(line), "CONNECT %u\n", port);
	r = write_full(fd, line, (size_t)len);
	while (r == 0 && got < sizeof(line) - 1) {
		r = read_full(fd, line + got, 1, deadline);
		if (r == 0 && line[got++] == '\n')
			break;
	}
	line[got] = '\0';
	if (r < 0 || strncmp(line, "OK ", 3))
		return hvm_set_error(-ECONNREFUSED,
				     "%s: no agent listens on vsock port %u%s",
				     what, port,
				     r == -ETIMEDOUT ? " (timed out)" : "");
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_HELLO, 0);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	agent_put_str(&b, AGENT_ATTR_NAME, "libhintvm " HVM_VERSION);
	/*
	 * Fresh randomness with every greeting: the agent reseeds the
	 * guest's CRNG with it, so clones of one template (docs/template.md),
	 * whose CRNG states start equal, part ways before anything runs.
	 */
	if (getrandom(seed, sizeof(seed), 0) == (ssize_t)sizeof(seed))
		agent_put_bytes(&b, AGENT_ATTR_SEED, seed, sizeof(seed));
	len = agent_build_end(&b);
	r = write_full(fd, frame, (size_t)len);
	if (r == 0)
		r = agent_read_frame(fd, &hdr, &payload, DIAL_TIMEOUT_MS);
	if (r == 0 && hdr.type == AGENT_MSG_HELLO &&
	    agent_get_u32(payload, hdr.len, AGENT_ATTR_VERSION, &version) ==
		    0 &&
	    version == AGENT_PROTO_VERSION) {
		free(payload);
		return 0;
	}
	if (r == 0 && hdr.type == AGENT_MSG_ERROR)
		r = agent_error(payload, hdr.len, "agent refused the greeting");
	else
		r = hvm_set_error(
			r < 0 ? r : -EPROTONOSUPPORT,
			"%s: the agent did not greet with protocol version %u (%s)",
			what, AGENT_PROTO_VERSION,
			r < 0 ? strerror(-r) : "other version");
	free(payload);
	return r;
}

static int attach_stream(const char *path, uint32_t session, uint64_t token,
			 unsigned int stream)
{
	uint8_t frame[128], *payload = NULL;
	struct agent_builder b;
	struct agent_hdr hdr;
	int fd, r, len;

	fd = agent_dial(path, AGENT_VSOCK_PORT);
	if (fd < 0)
		return fd;
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_ATTACH, 1);
	agent_put_u32(&b, AGENT_ATTR_SESSION, session);
	agent_put_u64(&b, AGENT_ATTR_TOKEN, token);
	agent_put_u32(&b, AGENT_ATTR_STREAM, stream);
	len = agent_build_end(&b);
	r = write_full(fd, frame, (size_t)len);
	if (r == 0)
		r = agent_read_frame(fd, &hdr, &payload, DIAL_TIMEOUT_MS);
	if (r == 0 && hdr.type != AGENT_MSG_OK)
		r = hdr.type == AGENT_MSG_ERROR
			    ? agent_error(payload, hdr.len,
					  "attaching a stream")
			    : -EPROTO;
	free(payload);
	if (r < 0) {
		close(fd);
		return hvm_set_error(r, "attaching stream %u: %s", stream,
				     strerror(-r));
	}
	return fd;
}

/* Read control frames until one with ID that is not EXITED arrives. */
static int control_reply(struct hvm_process *p, uint32_t id,
			 struct agent_hdr *hdr, uint8_t **payload)
{
	int r;

	for (;;) {
		r = agent_read_frame(p->control, hdr, payload, -1);
		if (r < 0)
			return r;
		if (hdr->type == AGENT_MSG_EXITED) {
			uint32_t v = 0;

			if (!agent_get_u32(*payload, hdr->len,
					   AGENT_ATTR_TERM_SIGNAL, &v)) {
				p->exit.signaled = 1;
				p->exit.signal = (int)v;
			} else {
				agent_get_u32(*payload, hdr->len,
					      AGENT_ATTR_EXIT_CODE, &v);
				p->exit.code = (int)(v & 0xff);
			}
			p->exit.status = agent_shell_status(
				p->exit.signaled,
				p->exit.signaled ? (uint32_t)p->exit.signal
						 : (uint32_t)p->exit.code);
			p->exited = true;
			free(*payload);
			*payload = NULL;
			if (id == 0)
				return 0;
			continue;
		}
		if (hdr->id == id)
			return 0;
		free(*payload); /* a late reply to something else */
		*payload = NULL;
	}
}

static void process_close_all(struct hvm_process *p)
{
	for (int i = 0; i < AGENT_STREAM_COUNT; i++) {
		if (p->stream[i] >= 0)
			close(p->stream[i]);
		p->stream[i] = -1;
	}
	if (p->control >= 0)
		close(p->control);
	p->control = -1;
}

static int limits_to_req(const struct hvm_process_limits *in,
			 struct agent_limits *out)
{
	if (in->nrlimits > AGENT_MAX_RLIMITS)
		return hvm_set_error(-EINVAL, "more than %d rlimits",
				     AGENT_MAX_RLIMITS);
	for (size_t i = 0; i < in->nrlimits; i++) {
		const struct hvm_process_rlimit *r = &in->rlimits[i];

		if (r->resource < 0 || r->resource >= AGENT_MAX_RLIMITS ||
		    r->soft > r->hard)
			return hvm_set_error(
				-EINVAL, "rlimit %d: resource or soft > hard",
				r->resource);
		out->rlimits[i] = (struct agent_rlimit){
			.resource = (uint32_t)r->resource,
			.soft = r->soft,
			.hard = r->hard,
		};
	}
	out->nrlimits = in->nrlimits;
	out->has_caps = in->set_caps;
	for (int i = 0; i < AGENT_CAP_SETS; i++)
		out->caps[i] = in->caps[i];
	out->no_new_privs = in->no_new_privs;
	if (in->seccomp && (!in->seccomp_len || in->seccomp_len % 8 ||
			    in->seccomp_len > AGENT_MAX_SECCOMP))
		return hvm_set_error(
			-EINVAL,
			"seccomp program of %zu bytes: not whole instructions, or over %u",
			in->seccomp_len, AGENT_MAX_SECCOMP);
	out->seccomp = in->seccomp;
	out->seccomp_len = in->seccomp ? in->seccomp_len : 0;
	return 0;
}

static int spec_to_req(const struct hvm_process_spec *spec,
		       struct agent_exec_req *req)
{
	*req = (struct agent_exec_req){ 0 };
	if (!spec || !spec->argv || !spec->argv[0])
		return hvm_set_error(-EINVAL, "no command to run");
	if (spec->flags & ~AGENT_EXEC_KNOWN_FLAGS)
		return hvm_set_error(-EINVAL, "unknown process flags %#x",
				     spec->flags);
	if (spec->cwd && spec->cwd[0] != '/')
		return hvm_set_error(-EINVAL,
				     "working directory %s is not absolute",
				     spec->cwd);
	if (spec->uid < -1 || spec->uid >= UINT32_MAX || spec->gid < -1 ||
	    spec->gid >= UINT32_MAX)
		return hvm_set_error(-EINVAL, "uid/gid out of range");
	req->argv = (char **)spec->argv;
	req->envp = (char **)spec->envp;
	if (spec->root && (spec->root[0] != '/' || strstr(spec->root, "..")))
		return hvm_set_error(
			-EINVAL,
			"process root %s: expected an absolute path without \"..\"",
			spec->root);
	if (spec->cgroup &&
	    !agent_cgroup_name_valid(spec->cgroup, strlen(spec->cgroup)))
		return hvm_set_error(
			-EINVAL,
			"process cgroup \"%s\": expected 1 to %d of [A-Za-z0-9_.+-], not starting with '.'",
			spec->cgroup, AGENT_MAX_CGROUP_NAME);
	if (spec->memory_max && !spec->cgroup)
		return hvm_set_error(
			-EINVAL,
			"process memory max %llu: it needs a cgroup to be the limit of",
			spec->memory_max);
	req->cwd = (char *)spec->cwd;
	req->root = (char *)spec->root;
	if (spec->pidns && (!spec->cgroup || (spec->pidns != HVM_PIDNS_NEW &&
					      spec->pidns != HVM_PIDNS_JOIN)))
		return hvm_set_error(
			-EINVAL,
			"process PID namespace %u: expected HVM_PIDNS_NEW or _JOIN, with a cgroup to name it",
			spec->pidns);
	req->cgroup = (char *)spec->cgroup;
	req->memory_max = spec->memory_max;
	req->pidns = spec->pidns == HVM_PIDNS_NEW    ? AGENT_PIDNS_NEW
		     : spec->pidns == HVM_PIDNS_JOIN ? AGENT_PIDNS_JOIN
						     : 0;
	req->has_uid = spec->uid >= 0;
	req->uid = req->has_uid ? (uint32_t)spec->uid : 0;
	req->has_gid = spec->gid >= 0;
	req->gid = req->has_gid ? (uint32_t)spec->gid : 0;
	req->flags = spec->flags & ~(AGENT_EXEC_LIMITS | AGENT_EXEC_CGROUP |
				     AGENT_EXEC_PIDNS);
	if (spec->flags & HVM_PROCESS_TTY) {
		req->rows = spec->rows;
		req->cols = spec->cols;
	}
	if (spec->limits) {
		int r = limits_to_req(spec->limits, &req->limits);

		if (r)
			return r;
	}
	/* Set by us alone: an agent without limits then refuses them. */
	if (agent_limits_any(&req->limits))
		req->flags |= AGENT_EXEC_LIMITS;
	if (req->cgroup)
		req->flags |= AGENT_EXEC_CGROUP;
	if (req->pidns)
		req->flags |= AGENT_EXEC_PIDNS;
	return 0;
}

struct hvm_process *hvm_process_start(const char *vm,
				      const struct hvm_process_spec *spec)
{
	char path[108];
	struct agent_exec_req req;
	struct hvm_process *p;
	struct agent_hdr hdr;
	uint8_t *frame = NULL, *payload = NULL;
	uint64_t token = 0;
	unsigned int want;
	bool exec_refused = false;
	uint32_t pid = 0;
	int r, len;

	last_process_errno = 0;
	r = vm ? spec_to_req(spec, &req)
	       : hvm_set_error(-EINVAL, "no VM name or vsock socket");
	if (r == 0)
		r = resolve_vsock_path(vm, path, sizeof(path));
	if (r < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	frame = malloc(AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD);
	if (!p || !frame) {
		free(p);
		free(frame);
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	p->control = -1;
	for (int i = 0; i < AGENT_STREAM_COUNT; i++)
		p->stream[i] = -1;
	p->flags = spec->flags;
	p->next_id = 2;
	r = agent_dial(path, AGENT_VSOCK_PORT);
	if (r < 0)
		goto fail;
	p->control = r;
	len = agent_exec_encode(frame, AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD, 1,
				&req);
	if (len < 0) {
		r = hvm_set_error(
			len, "command line and environment exceed %u bytes",
			AGENT_MAX_PAYLOAD);
		goto fail;
	}
	r = write_full(p->control, frame, (size_t)len);
	if (r == 0)
		r = control_reply(p, 1, &hdr, &payload);
	if (r < 0) {
		hvm_set_error(r, "agent at %s: %s", path, strerror(-r));
		goto fail;
	}
	if (hdr.type == AGENT_MSG_ERROR) {
		r = agent_error(payload, hdr.len, "cannot start");
		exec_refused = true;
		goto fail;
	}
	if (hdr.type != AGENT_MSG_READY ||
	    agent_get_u32(payload, hdr.len, AGENT_ATTR_SESSION, &p->session) ||
	    agent_get_u64(payload, hdr.len, AGENT_ATTR_TOKEN, &token)) {
		r = hvm_set_error(-EPROTO, "agent: no READY for EXEC");
		goto fail;
	}
	free(payload);
	payload = NULL;
	want = agent_exec_streams(spec->flags);
	for (unsigned int s = 0; s < AGENT_STREAM_COUNT; s++) {
		if (!(want & (1u << s)))
			continue;
		r = attach_stream(path, p->session, token, s);
		if (r < 0)
			goto fail;
		p->stream[s] = r;
	}
	r = control_reply(p, 1, &hdr, &payload);
	if (r < 0) {
		hvm_set_error(r, "agent at %s: %s", path, strerror(-r));
		goto fail;
	}
	if (hdr.type == AGENT_MSG_ERROR) {
		r = agent_error(payload, hdr.len, "cannot start");
		exec_refused = true;
		goto fail;
	}
	if (hdr.type != AGENT_MSG_STARTED ||
	    agent_get_u32(payload, hdr.len, AGENT_ATTR_PID, &pid)) {
		r = hvm_set_error(-EPROTO, "agent: no STARTED for EXEC");
		goto fail;
	}
	p->pid = (int)pid;
	free(payload);
	free(frame);
	return p;
fail:
	last_process_errno = exec_refused ? -r : 0;
	free(payload);
	free(frame);
	process_close_all(p);
	free(p);
	return NULL;
}

int hvm_process_fd(struct hvm_process *p, enum hvm_stream stream)
{
	if ((unsigned int)stream >= AGENT_STREAM_COUNT || p->stream[stream] < 0)
		return -EBADF;
	return p->stream[stream];
}

int hvm_process_close_fd(struct hvm_process *p, enum hvm_stream stream)
{
	if ((unsigned int)stream >= AGENT_STREAM_COUNT || p->stream[stream] < 0)
		return -EBADF;
	close(p->stream[stream]);
	p->stream[stream] = -1;
	return 0;
}

int hvm_process_pid(struct hvm_process *p)
{
	return p->pid;
}

int hvm_process_event_fd(struct hvm_process *p)
{
	return p->control;
}

static int simple_request(struct hvm_process *p, uint16_t type, uint32_t a1,
			  uint32_t v1, uint32_t a2, uint32_t v2)
{
	uint8_t frame[128], *payload = NULL;
	struct agent_builder b;
	struct agent_hdr hdr;
	uint32_t id = p->next_id++;
	int r, len;

	if (p->control < 0)
		return hvm_set_error(-ECONNRESET, "no connection to the agent");
	agent_build_begin(&b, frame, sizeof(frame), type, id);
	agent_put_u32(&b, AGENT_ATTR_SESSION, p->session);
	agent_put_u32(&b, a1, v1);
	if (a2)
		agent_put_u32(&b, a2, v2);
	len = agent_build_end(&b);
	r = write_full(p->control, frame, (size_t)len);
	if (r == 0)
		r = control_reply(p, id, &hdr, &payload);
	if (r < 0)
		return hvm_set_error(r, "agent: %s", strerror(-r));
	if (hdr.type == AGENT_MSG_ERROR)
		r = agent_error(payload, hdr.len, "agent");
	else if (hdr.type != AGENT_MSG_OK)
		r = hvm_set_error(-EPROTO, "agent: unexpected reply %u",
				  hdr.type);
	free(payload);
	return r;
}

int hvm_process_signal(struct hvm_process *p, int sig)
{
	if (sig < 1 || sig > 64)
		return hvm_set_error(-EINVAL, "signal %d is not 1..64", sig);
	return simple_request(p, AGENT_MSG_SIGNAL, AGENT_ATTR_SIGNAL,
			      (uint32_t)sig, 0, 0);
}

int hvm_process_resize(struct hvm_process *p, unsigned short rows,
		       unsigned short cols)
{
	if (!rows || !cols)
		return hvm_set_error(-EINVAL, "window size %ux%u", rows, cols);
	return simple_request(p, AGENT_MSG_RESIZE, AGENT_ATTR_ROWS, rows,
			      AGENT_ATTR_COLS, cols);
}

int hvm_process_wait(struct hvm_process *p, struct hvm_process_exit *exit,
		     int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct agent_hdr hdr;
	uint8_t *payload;
	int r;

	while (!p->exited) {
		if (p->control < 0)
			return hvm_set_error(-ECONNRESET,
					     "no connection to the agent");
		r = wait_readable(p->control, deadline);
		if (r < 0)
			return r;
		/* A frame has started: read it whole, then look again. */
		r = control_reply(p, 0, &hdr, &payload);
		if (r < 0)
			return hvm_set_error(
				r,
				"lost the agent before the process's exit: %s",
				strerror(-r));
		free(payload);
	}
	*exit = p->exit;
	return 0;
}

unsigned int hvm_process_session(struct hvm_process *p)
{
	return p->session;
}

/* The pid of SESSION from a PROCS payload; 0 when it is not listed. */
static uint32_t procs_find(const uint8_t *payload, size_t len, uint32_t session)
{
	struct agent_attr_iter it, in;
	struct agent_attr a, b;

	agent_attr_iter_init(&it, payload, len);
	while (agent_attr_next(&it, &a) > 0) {
		uint32_t sid = 0, pid = 0;

		if (a.type != AGENT_ATTR_PROC)
			continue;
		agent_attr_iter_init(&in, a.value, a.len);
		while (agent_attr_next(&in, &b) > 0) {
			if (b.type == AGENT_ATTR_SESSION)
				sid = agent_attr_u32(&b);
			else if (b.type == AGENT_ATTR_PID)
				pid = agent_attr_u32(&b);
		}
		if (sid == session)
			return pid ? pid : 1;
	}
	return 0;
}

struct hvm_process *hvm_process_attach(const char *vm, unsigned int session)
{
	uint8_t frame[64], *payload = NULL;
	struct agent_builder b;
	struct hvm_process *p;
	struct agent_hdr hdr;
	char path[108];
	uint32_t pid;
	int r, len;

	last_process_errno = 0;
	if (!vm) {
		hvm_set_error(-EINVAL, "no VM name or vsock socket");
		return NULL;
	}
	if (resolve_vsock_path(vm, path, sizeof(path)) < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		hvm_set_error(-ENOMEM, "out of memory");
		return NULL;
	}
	for (int i = 0; i < AGENT_STREAM_COUNT; i++)
		p->stream[i] = -1;
	p->session = session;
	p->next_id = 3;
	p->control = agent_dial(path, AGENT_VSOCK_PORT);
	if (p->control < 0)
		goto fail;
	/* LIST: is the session there, and its pid; then WAIT for its exit. */
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_LIST, 1);
	len = agent_build_end(&b);
	r = write_full(p->control, frame, (size_t)len);
	if (r == 0)
		r = control_reply(p, 1, &hdr, &payload);
	if (r < 0 || hdr.type != AGENT_MSG_PROCS) {
		hvm_set_error(r < 0 ? r : -EPROTO,
			      "agent at %s: no process list", path);
		goto fail;
	}
	pid = procs_find(payload, hdr.len, session);
	free(payload);
	payload = NULL;
	if (!pid) {
		hvm_set_error(-ESRCH, "the agent at %s has no session %u", path,
			      session);
		goto fail;
	}
	p->pid = (int)pid;
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_WAIT, 2);
	agent_put_u32(&b, AGENT_ATTR_SESSION, session);
	len = agent_build_end(&b);
	if (write_full(p->control, frame, (size_t)len) < 0) {
		hvm_set_error(-ECONNRESET, "agent at %s: connection lost",
			      path);
		goto fail;
	}
	return p;
fail:
	process_close_all(p);
	free(p);
	return NULL;
}

void hvm_process_free(struct hvm_process *p)
{
	if (!p)
		return;
	process_close_all(p);
	free(p);
}

/* How long a STATS answer may take: the agent reads a few small files. */
#define STATS_TIMEOUT_MS 5000

int hvm_guest_stats(const char *vm, struct hvm_guest_stats *stats)
{
	return hvm_guest_cgroup_stats(vm, NULL, stats);
}

int hvm_guest_cgroup_stats(const char *vm, const char *cgroup,
			   struct hvm_guest_stats *stats)
{
	uint8_t frame[AGENT_HDR_SIZE + 4 + AGENT_MAX_CGROUP_NAME + 8],
		*payload = NULL;
	struct agent_builder b;
	struct agent_stats st;
	struct agent_hdr hdr;
	char path[108];
	int fd, r, len;

	if (!vm || !stats)
		return hvm_set_error(-EINVAL, "no VM or no stats to fill");
	if (cgroup && !agent_cgroup_name_valid(cgroup, strlen(cgroup)))
		return hvm_set_error(
			-EINVAL,
			"cgroup \"%s\": expected 1 to %d of [A-Za-z0-9_.+-], not starting with '.'",
			cgroup, AGENT_MAX_CGROUP_NAME);
	r = resolve_vsock_path(vm, path, sizeof(path));
	if (r < 0)
		return r;
	fd = agent_dial(path, AGENT_VSOCK_PORT);
	if (fd < 0)
		return fd;
	agent_build_begin(&b, frame, sizeof(frame), AGENT_MSG_STATS, 1);
	if (cgroup)
		agent_put_str(&b, AGENT_ATTR_CGROUP, cgroup);
	len = agent_build_end(&b);
	r = write_full(fd, frame, (size_t)len);
	if (r == 0)
		r = agent_read_frame(fd, &hdr, &payload, STATS_TIMEOUT_MS);
	close(fd);
	if (r < 0)
		return hvm_set_error(r, "agent at %s: no answer to STATS: %s",
				     path, strerror(-r));
	if (hdr.type == AGENT_MSG_ERROR) {
		r = agent_error(payload, hdr.len, "agent: STATS");
	} else if (hdr.type != AGENT_MSG_STATS_DATA || hdr.id != 1) {
		r = hvm_set_error(
			-EPROTO,
			"agent at %s: answered STATS with frame type %u (expected %u)",
			path, hdr.type, AGENT_MSG_STATS_DATA);
	} else {
		agent_stats_decode(payload, hdr.len, &st);
		*stats = (struct hvm_guest_stats){
			.cpu_usage_ns =
				st.value[AGENT_STAT(AGENT_ATTR_CPU_USAGE_NS)],
			.cpu_user_ns =
				st.value[AGENT_STAT(AGENT_ATTR_CPU_USER_NS)],
			.cpu_system_ns =
				st.value[AGENT_STAT(AGENT_ATTR_CPU_SYSTEM_NS)],
			.memory_usage =
				st.value[AGENT_STAT(AGENT_ATTR_MEM_USAGE)],
			.memory_limit =
				st.value[AGENT_STAT(AGENT_ATTR_MEM_LIMIT)],
			.pids_current =
				st.value[AGENT_STAT(AGENT_ATTR_PIDS_CURRENT)],
			.pids_limit =
				st.value[AGENT_STAT(AGENT_ATTR_PIDS_LIMIT)],
			.oom_kills = st.value[AGENT_STAT(AGENT_ATTR_OOM_KILLS)],
		};
	}
	free(payload);
	return r;
}

int hvm_guest_cgroup_set(const char *vm, const char *cgroup,
			 unsigned long long memory_max,
			 unsigned long long cpu_quota_us,
			 unsigned long long cpu_period_us)
{
	struct agent_cgroup_set cs = { .memory_max = memory_max,
				       .set_cpu = cpu_period_us != 0,
				       .cpu_quota = cpu_quota_us,
				       .cpu_period = cpu_period_us };
	uint8_t frame[AGENT_HDR_SIZE + 3 * 12 + AGENT_MAX_CGROUP_NAME + 8],
		*payload = NULL;
	struct agent_hdr hdr;
	char path[108];
	int fd, r, len;

	if (!vm || !cgroup || !agent_cgroup_name_valid(cgroup, strlen(cgroup)))
		return hvm_set_error(
			-EINVAL, "cgroup \"%s\": expected a pod container's",
			cgroup ? cgroup : "");
	if ((cpu_period_us &&
	     (cpu_period_us < 1000 || cpu_period_us > 1000000)) ||
	    (!cpu_period_us && cpu_quota_us))
		return hvm_set_error(
			-EINVAL,
			"cpu quota %llu per period %llu us: expected a period of 1000 to 1000000 us",
			cpu_quota_us, cpu_period_us);
	if (!memory_max && !cpu_period_us)
		return hvm_set_error(-EINVAL, "cgroup %s: nothing to set",
				     cgroup);
	snprintf(cs.cgroup, sizeof(cs.cgroup), "%s", cgroup);
	r = resolve_vsock_path(vm, path, sizeof(path));
	if (r < 0)
		return r;
	fd = agent_dial(path, AGENT_VSOCK_PORT);
	if (fd < 0)
		return fd;
	len = agent_cgroup_set_encode(frame, sizeof(frame), 1, &cs);
	r = len < 0 ? len : write_full(fd, frame, (size_t)len);
	if (r == 0)
		r = agent_read_frame(fd, &hdr, &payload, STATS_TIMEOUT_MS);
	close(fd);
	if (r < 0)
		return hvm_set_error(r,
				     "agent at %s: no answer to CGROUP_SET: %s",
				     path, strerror(-r));
	if (hdr.type == AGENT_MSG_ERROR)
		r = agent_error(payload, hdr.len, "agent: CGROUP_SET");
	else if (hdr.type != AGENT_MSG_OK || hdr.id != 1)
		r = hvm_set_error(
			-EPROTO,
			"agent at %s: answered CGROUP_SET with frame type %u (expected %u)",
			path, hdr.type, AGENT_MSG_OK);
	free(payload);
	return r;
}
