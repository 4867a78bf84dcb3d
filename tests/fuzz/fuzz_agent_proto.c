// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness: the fuzzer's bytes are what arrives on an agent
 * connection (docs/agent.md), from either side: a header and a payload.
 * Whatever the bytes, the codec (src/abi/agent_proto.c, linked into
 * libhintvm, the guest agent and hintvm-oci-init) must refuse oversized
 * frames, read nothing outside the payload, and an EXEC it accepts must
 * hold only what its limits allow and encode back to a request that
 * decodes the same; so must a CGROUP_SET it accepts. The same bytes, whole, are also a CONTAINER frame as
 * hintvm-oci-init reads it from its initramfs: one it accepts holds only
 * what the frame's rules allow and encodes back to the same container.
 */
#include <errno.h>

#include "fuzz.h"
#include "abi/agent_proto.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_exec(const struct agent_exec_req *req)
{
	size_t n = 0;

	check(req->argv && req->argv[0]);
	for (; req->argv[n]; n++)
		check(n < AGENT_MAX_ARGS);
	for (n = 0; req->envp && req->envp[n]; n++) {
		check(n < AGENT_MAX_ENV);
		check(req->envp[n][0] != '=' && strchr(req->envp[n], '='));
	}
	check(!req->cwd ||
	      (req->cwd[0] == '/' && strlen(req->cwd) <= AGENT_MAX_PATH));
	check(!(req->flags & ~AGENT_EXEC_KNOWN_FLAGS));
	check(!(req->flags & AGENT_EXEC_TTY) ||
	      agent_exec_streams(req->flags) == 1u << AGENT_STREAM_TTY);
	/* A pod container's cgroup: a name, and the rest only with it. */
	check(!req->cgroup == !(req->flags & AGENT_EXEC_CGROUP));
	check(!req->cgroup ||
	      agent_cgroup_name_valid(req->cgroup, strlen(req->cgroup)));
	check(req->cgroup || (!req->memory_max && !req->pidns));
	check(!req->pidns == !(req->flags & AGENT_EXEC_PIDNS));
	check(!req->pidns || req->pidns == AGENT_PIDNS_NEW ||
	      req->pidns == AGENT_PIDNS_JOIN);
}

/* The payload as a CGROUP_SET: one accepted is in bounds and round-trips. */
static void fuzz_cgroup_set(const uint8_t *payload, size_t len, uint8_t *frame,
			    size_t cap)
{
	struct agent_cgroup_set c, again;
	char msg[128];
	int r = agent_cgroup_set_decode(payload, len, &c, msg, sizeof(msg));

	check(memchr(msg, '\0', sizeof(msg)));
	if (r < 0) {
		check((r == -EPROTO || r == -EINVAL) && msg[0]);
		return;
	}
	check(agent_cgroup_name_valid(c.cgroup, strlen(c.cgroup)));
	check(c.memory_max || c.set_cpu);
	check(!c.set_cpu || (c.cpu_period >= 1000 && c.cpu_period <= 1000000));
	r = agent_cgroup_set_encode(frame, cap, 1, &c);
	check(r > 0);
	check(agent_cgroup_set_decode(frame + AGENT_HDR_SIZE,
				      (size_t)r - AGENT_HDR_SIZE, &again, msg,
				      sizeof(msg)) == 0);
	check(!strcmp(c.cgroup, again.cgroup) &&
	      c.memory_max == again.memory_max && c.set_cpu == again.set_cpu &&
	      c.cpu_quota == again.cpu_quota &&
	      c.cpu_period == again.cpu_period);
}

static bool clean(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || strstr(p, "/../") ||
	    (n >= 3 && !strcmp(p + n - 3, "/..")))
		return false;
	return true;
}

static void check_container(const struct agent_container *c)
{
	check_exec(&c->process);
	check(c->nmounts <= AGENT_MAX_MOUNTS);
	for (size_t i = 0; i < c->nmounts; i++)
		check(c->mounts[i].destination &&
		      c->mounts[i].destination[0] == '/' &&
		      !(c->mounts[i].flags & ~AGENT_MOUNT_KNOWN_FLAGS));
	check(c->nsysctls <= AGENT_MAX_SYSCTLS);
	for (size_t i = 0; i < c->nsysctls; i++)
		check(c->sysctls[i].key[0] && c->sysctls[i].key[0] != '/' &&
		      !strstr(c->sysctls[i].key, "..") &&
		      !strchr(c->sysctls[i].key, '=') && c->sysctls[i].value);
	check(c->nmasked_paths <= AGENT_MAX_PATHS &&
	      c->nreadonly_paths <= AGENT_MAX_PATHS);
	for (size_t i = 0; i < c->nmasked_paths; i++)
		check(clean(c->masked_paths[i]));
	check(!c->masked_paths[c->nmasked_paths]);
	for (size_t i = 0; i < c->nreadonly_paths; i++)
		check(clean(c->readonly_paths[i]));
	check(!c->readonly_paths[c->nreadonly_paths]);
}

static bool same_str(const char *a, const char *b)
{
	return !a == !b && (!a || !strcmp(a, b));
}

static void same_exec(const struct agent_exec_req *a,
		      const struct agent_exec_req *b);

static void same_container(const struct agent_container *a,
			   const struct agent_container *b)
{
	same_exec(&a->process, &b->process);
	check(same_str(a->hostname, b->hostname) &&
	      a->root_readonly == b->root_readonly &&
	      a->nmounts == b->nmounts && a->nsysctls == b->nsysctls &&
	      a->nmasked_paths == b->nmasked_paths &&
	      a->nreadonly_paths == b->nreadonly_paths);
	for (size_t i = 0; i < a->nmounts; i++)
		check(same_str(a->mounts[i].destination,
			       b->mounts[i].destination) &&
		      same_str(a->mounts[i].type, b->mounts[i].type) &&
		      same_str(a->mounts[i].source, b->mounts[i].source) &&
		      a->mounts[i].flags == b->mounts[i].flags);
	for (size_t i = 0; i < a->nsysctls; i++)
		check(same_str(a->sysctls[i].key, b->sysctls[i].key) &&
		      same_str(a->sysctls[i].value, b->sysctls[i].value));
	for (size_t i = 0; i < a->nmasked_paths; i++)
		check(same_str(a->masked_paths[i], b->masked_paths[i]));
	for (size_t i = 0; i < a->nreadonly_paths; i++)
		check(same_str(a->readonly_paths[i], b->readonly_paths[i]));
}

/* DATA, whole, as the file hintvm-oci-init reads. */
static void fuzz_container(const uint8_t *data, size_t size, uint8_t *frame,
			   size_t cap)
{
	struct agent_container c, again;
	char msg[128];
	int r = agent_container_decode(data, size, &c, msg, sizeof(msg));

	check(memchr(msg, '\0', sizeof(msg)));
	if (r < 0) {
		check(r == -EPROTO || r == -EPROTONOSUPPORT || r == -EINVAL ||
		      r == -ENOMEM);
		check(msg[0]);
		return;
	}
	check_container(&c);
	r = agent_container_encode(frame, cap, &c);
	if (r > 0) {
		check(agent_container_decode(frame, (size_t)r, &again, msg,
					     sizeof(msg)) == 0);
		same_container(&c, &again);
		agent_container_free(&again);
	}
	agent_container_free(&c);
}

static void same_exec(const struct agent_exec_req *a,
		      const struct agent_exec_req *b)
{
	size_t i;

	for (i = 0; a->argv[i]; i++)
		check(b->argv[i] && !strcmp(a->argv[i], b->argv[i]));
	check(!b->argv[i]);
	check(!a->envp == !b->envp);
	for (i = 0; a->envp && a->envp[i]; i++)
		check(b->envp[i] && !strcmp(a->envp[i], b->envp[i]));
	check(!a->cwd == !b->cwd && (!a->cwd || !strcmp(a->cwd, b->cwd)));
	check(same_str(a->root, b->root) && same_str(a->cgroup, b->cgroup) &&
	      a->memory_max == b->memory_max && a->pidns == b->pidns);
	check(a->flags == b->flags && a->rows == b->rows &&
	      a->cols == b->cols && a->has_uid == b->has_uid &&
	      a->uid == b->uid && a->has_gid == b->has_gid && a->gid == b->gid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
	struct agent_exec_req req, again;
	struct agent_attr_iter it;
	struct agent_attr a;
	struct agent_hdr hdr;
	const uint8_t *payload;
	size_t len;
	char msg[128], s[64];
	uint32_t v;
	int r;

	fuzz_container(data, size, frame, sizeof(frame));
	if (size < AGENT_HDR_SIZE)
		return 0;
	if (agent_hdr_decode(data, &hdr) < 0) {
		check(hdr.len > AGENT_MAX_PAYLOAD);
		return 0;
	}
	/* The payload as a reader sees it: what arrived, at most LEN. */
	payload = data + AGENT_HDR_SIZE;
	len = size - AGENT_HDR_SIZE < hdr.len ? size - AGENT_HDR_SIZE : hdr.len;
	r = agent_payload_validate(payload, len);
	check(r == 0 || r == -EPROTO);
	agent_attr_iter_init(&it, payload, len);
	while ((r = agent_attr_next(&it, &a)) > 0) {
		check(a.value >= payload && a.value + a.len <= payload + len);
		if (agent_attr_kind(a.type) == AGENT_KIND_U32)
			check(a.len == 4);
	}
	if (agent_get_str(payload, len, AGENT_ATTR_MESSAGE, s, sizeof(s)) == 0)
		check(strlen(s) < sizeof(s));
	agent_get_u32(payload, len, AGENT_ATTR_SESSION, &v);
	fuzz_cgroup_set(payload, len, frame, sizeof(frame));

	r = agent_exec_decode(payload, len, &req, msg, sizeof(msg));
	check(memchr(msg, '\0', sizeof(msg)));
	if (r < 0) {
		check(r == -EPROTO || r == -EINVAL || r == -ENOMEM);
		return 0;
	}
	check_exec(&req);
	r = agent_exec_encode(frame, sizeof(frame), hdr.id, &req);
	if (r > 0) {
		check(agent_exec_decode(frame + AGENT_HDR_SIZE,
					(size_t)r - AGENT_HDR_SIZE, &again, msg,
					sizeof(msg)) == 0);
		same_exec(&req, &again);
		agent_exec_req_free(&again);
	}
	agent_exec_req_free(&req);
	return 0;
}
