// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest agent protocol codec (docs/agent.md), shared by libhintvm and
 * the guest agent. Both ends treat what they read as hostile: every
 * length and count is checked here before anything is used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_proto.h"

#define ATTR_HDR_SIZE 4

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

int agent_hdr_decode(const uint8_t *buf, struct agent_hdr *hdr)
{
	hdr->len = get_le32(buf);
	hdr->type = get_le16(buf + 4);
	/* buf[6..7] reserved: zero on send, ignored on receipt. */
	hdr->id = get_le32(buf + 8);
	return hdr->len > AGENT_MAX_PAYLOAD ? -EMSGSIZE : 0;
}

void agent_hdr_encode(uint8_t *buf, const struct agent_hdr *hdr)
{
	put_le32(buf, hdr->len);
	put_le16(buf + 4, hdr->type);
	put_le16(buf + 6, 0);
	put_le32(buf + 8, hdr->id);
}

enum agent_attr_kind agent_attr_kind(uint16_t type)
{
	switch (type) {
	case AGENT_ATTR_VERSION:
	case AGENT_ATTR_UID:
	case AGENT_ATTR_GID:
	case AGENT_ATTR_FLAGS:
	case AGENT_ATTR_ROWS:
	case AGENT_ATTR_COLS:
	case AGENT_ATTR_SESSION:
	case AGENT_ATTR_STREAM:
	case AGENT_ATTR_PID:
	case AGENT_ATTR_SIGNAL:
	case AGENT_ATTR_EXIT_CODE:
	case AGENT_ATTR_TERM_SIGNAL:
	case AGENT_ATTR_ERRNO:
	case AGENT_ATTR_MAX_PAYLOAD:
	case AGENT_ATTR_STATE:
	case AGENT_ATTR_NO_NEW_PRIVS:
	case AGENT_ATTR_ROOT_READONLY:
	case AGENT_ATTR_PIDNS:
		return AGENT_KIND_U32;
	case AGENT_ATTR_TOKEN:
	case AGENT_ATTR_CPU_USAGE_NS:
	case AGENT_ATTR_CPU_USER_NS:
	case AGENT_ATTR_CPU_SYSTEM_NS:
	case AGENT_ATTR_MEM_USAGE:
	case AGENT_ATTR_MEM_LIMIT:
	case AGENT_ATTR_PIDS_CURRENT:
	case AGENT_ATTR_PIDS_LIMIT:
	case AGENT_ATTR_OOM_KILLS:
	case AGENT_ATTR_MEMORY_MAX:
	case AGENT_ATTR_CPU_QUOTA:
	case AGENT_ATTR_CPU_PERIOD:
		return AGENT_KIND_U64;
	case AGENT_ATTR_NAME:
	case AGENT_ATTR_ARG:
	case AGENT_ATTR_ENV:
	case AGENT_ATTR_CWD:
	case AGENT_ATTR_MESSAGE:
	case AGENT_ATTR_HOSTNAME:
	case AGENT_ATTR_MOUNT_DEST:
	case AGENT_ATTR_MOUNT_TYPE:
	case AGENT_ATTR_MOUNT_SOURCE:
	case AGENT_ATTR_SYSCTL:
	case AGENT_ATTR_MASKED_PATH:
	case AGENT_ATTR_READONLY_PATH:
	case AGENT_ATTR_ROOT:
	case AGENT_ATTR_CGROUP:
		return AGENT_KIND_STRING;
	case AGENT_ATTR_PROC:
	case AGENT_ATTR_MOUNT:
		return AGENT_KIND_NESTED;
	case AGENT_ATTR_RLIMIT:
	case AGENT_ATTR_CAPS:
	case AGENT_ATTR_SECCOMP:
	case AGENT_ATTR_SEED:
		return AGENT_KIND_BYTES;
	default:
		return AGENT_KIND_UNKNOWN;
	}
}

/* Attributes that may repeat at one level; all others appear once. */
static bool attr_repeats(uint16_t type)
{
	switch (type) {
	case AGENT_ATTR_ARG:
	case AGENT_ATTR_ENV:
	case AGENT_ATTR_PROC:
	case AGENT_ATTR_RLIMIT:
	case AGENT_ATTR_MOUNT:
	case AGENT_ATTR_SYSCTL:
	case AGENT_ATTR_MASKED_PATH:
	case AGENT_ATTR_READONLY_PATH:
		return true;
	default:
		return agent_attr_kind(type) == AGENT_KIND_UNKNOWN;
	}
}

/* ---- building -------------------------------------------------------- */

void agent_build_begin(struct agent_builder *b, uint8_t *buf, size_t cap,
		       uint16_t type, uint32_t id)
{
	*b = (struct agent_builder){ .buf = buf, .cap = cap };
	if (cap < AGENT_HDR_SIZE) {
		b->error = -EMSGSIZE;
		return;
	}
	agent_hdr_encode(buf, &(struct agent_hdr){ .type = type, .id = id });
	b->len = AGENT_HDR_SIZE;
}

static uint8_t *reserve(struct agent_builder *b, size_t n)
{
	uint8_t *p;

	if (b->error)
		return NULL;
	if (n > b->cap - b->len ||
	    b->len + n - AGENT_HDR_SIZE > AGENT_MAX_PAYLOAD) {
		b->error = -EMSGSIZE;
		return NULL;
	}
	p = b->buf + b->len;
	b->len += n;
	return p;
}

void agent_put_bytes(struct agent_builder *b, uint16_t type, const void *data,
		     size_t len)
{
	uint8_t *p;

	if (len > UINT16_MAX) {
		if (!b->error)
			b->error = -EMSGSIZE;
		return;
	}
	p = reserve(b, ATTR_HDR_SIZE + len);
	if (!p)
		return;
	put_le16(p, type);
	put_le16(p + 2, (uint16_t)len);
	if (len)
		memcpy(p + ATTR_HDR_SIZE, data, len);
}

void agent_put_u32(struct agent_builder *b, uint16_t type, uint32_t value)
{
	uint8_t v[4];

	put_le32(v, value);
	agent_put_bytes(b, type, v, sizeof(v));
}

void agent_put_u64(struct agent_builder *b, uint16_t type, uint64_t value)
{
	uint8_t v[8];

	put_le32(v, (uint32_t)value);
	put_le32(v + 4, (uint32_t)(value >> 32));
	agent_put_bytes(b, type, v, sizeof(v));
}

void agent_put_str(struct agent_builder *b, uint16_t type, const char *s)
{
	agent_put_bytes(b, type, s, strlen(s));
}

void agent_nest_begin(struct agent_builder *b, uint16_t type)
{
	uint8_t *p;

	if (b->depth >= AGENT_MAX_DEPTH - 1) {
		if (!b->error)
			b->error = -EMSGSIZE;
		return;
	}
	p = reserve(b, ATTR_HDR_SIZE);
	if (!p)
		return;
	put_le16(p, type);
	b->nest[b->depth++] = (size_t)(p - b->buf);
}

void agent_nest_end(struct agent_builder *b)
{
	size_t start, len;

	if (b->error || !b->depth)
		return;
	start = b->nest[--b->depth];
	len = b->len - start - ATTR_HDR_SIZE;
	if (len > UINT16_MAX) {
		b->error = -EMSGSIZE;
		return;
	}
	put_le16(b->buf + start + 2, (uint16_t)len);
}

int agent_build_end(struct agent_builder *b)
{
	if (b->error)
		return b->error;
	if (b->depth)
		return -EINVAL;
	put_le32(b->buf, (uint32_t)(b->len - AGENT_HDR_SIZE));
	return (int)b->len;
}

/* ---- reading --------------------------------------------------------- */

void agent_attr_iter_init(struct agent_attr_iter *it, const uint8_t *payload,
			  size_t len)
{
	it->pos = payload;
	it->end = payload + len;
}

int agent_attr_next(struct agent_attr_iter *it, struct agent_attr *a)
{
	size_t left = (size_t)(it->end - it->pos);

	if (!left)
		return 0;
	if (left < ATTR_HDR_SIZE)
		return -EPROTO;
	a->type = get_le16(it->pos);
	a->len = get_le16(it->pos + 2);
	if (a->len > left - ATTR_HDR_SIZE)
		return -EPROTO;
	a->value = it->pos + ATTR_HDR_SIZE;
	switch (agent_attr_kind(a->type)) {
	case AGENT_KIND_U32:
		if (a->len != 4)
			return -EPROTO;
		break;
	case AGENT_KIND_U64:
		if (a->len != 8)
			return -EPROTO;
		break;
	case AGENT_KIND_STRING:
		if (memchr(a->value, '\0', a->len))
			return -EPROTO;
		break;
	default:
		break;
	}
	it->pos += ATTR_HDR_SIZE + a->len;
	return 1;
}

uint32_t agent_attr_u32(const struct agent_attr *a)
{
	return get_le32(a->value);
}

uint64_t agent_attr_u64(const struct agent_attr *a)
{
	return get_le32(a->value) | (uint64_t)get_le32(a->value + 4) << 32;
}

static int validate_level(const uint8_t *payload, size_t len,
			  unsigned int depth)
{
	/* One bit per known single-valued type seen at this level. */
	uint64_t seen = 0;
	struct agent_attr_iter it;
	struct agent_attr a;
	int r;

	_Static_assert(AGENT_ATTR_COUNT <= 64, "seen is a 64-bit mask");
	agent_attr_iter_init(&it, payload, len);
	while ((r = agent_attr_next(&it, &a)) > 0) {
		if (!attr_repeats(a.type)) {
			if (seen & (UINT64_C(1) << a.type))
				return -EPROTO;
			seen |= UINT64_C(1) << a.type;
		}
		if (agent_attr_kind(a.type) == AGENT_KIND_NESTED) {
			if (depth + 1 >= AGENT_MAX_DEPTH)
				return -EPROTO;
			r = validate_level(a.value, a.len, depth + 1);
			if (r < 0)
				return r;
		}
	}
	return r;
}

int agent_payload_validate(const uint8_t *payload, size_t len)
{
	if (len > AGENT_MAX_PAYLOAD)
		return -EPROTO;
	return validate_level(payload, len, 0);
}

static int find_attr(const uint8_t *payload, size_t len, uint16_t type,
		     struct agent_attr *found)
{
	struct agent_attr_iter it;
	struct agent_attr a;
	int r;

	agent_attr_iter_init(&it, payload, len);
	while ((r = agent_attr_next(&it, &a)) > 0) {
		if (a.type == type) {
			*found = a;
			return 0;
		}
	}
	return r < 0 ? r : -ENOENT;
}

int agent_get_u32(const uint8_t *payload, size_t len, uint16_t type,
		  uint32_t *value)
{
	struct agent_attr a;
	int r;

	if (agent_attr_kind(type) != AGENT_KIND_U32)
		return -EINVAL;
	r = find_attr(payload, len, type, &a);
	if (r == 0)
		*value = agent_attr_u32(&a);
	return r;
}

int agent_get_u64(const uint8_t *payload, size_t len, uint16_t type,
		  uint64_t *value)
{
	struct agent_attr a;
	int r;

	if (agent_attr_kind(type) != AGENT_KIND_U64)
		return -EINVAL;
	r = find_attr(payload, len, type, &a);
	if (r == 0)
		*value = agent_attr_u64(&a);
	return r;
}

int agent_get_str(const uint8_t *payload, size_t len, uint16_t type, char *buf,
		  size_t size)
{
	struct agent_attr a;
	int r;

	if (agent_attr_kind(type) != AGENT_KIND_STRING || !size)
		return -EINVAL;
	r = find_attr(payload, len, type, &a);
	if (r < 0)
		return r;
	if (a.len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, a.value, a.len);
	buf[a.len] = '\0';
	return 0;
}

/* ---- EXEC -------------------------------------------------------------- */

static bool clean_path(const uint8_t *p, size_t len);

static int exec_error(char *msg, size_t size, int err, const char *what)
{
	if (size)
		snprintf(msg, size, "%s", what);
	return err;
}

bool agent_cgroup_name_valid(const char *name, size_t len)
{
	if (!len || len > AGENT_MAX_CGROUP_NAME || name[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '+' || c == '-'))
			return false;
	}
	return true;
}

bool agent_limits_any(const struct agent_limits *l)
{
	return l->nrlimits || l->has_caps || l->no_new_privs || l->seccomp;
}

/* One limit attribute of a well-formed EXEC payload into L. */
static int decode_limit(const struct agent_attr *a, struct agent_limits *l,
			char *msg, size_t msg_size)
{
	struct agent_rlimit *rl;

	switch (a->type) {
	case AGENT_ATTR_RLIMIT:
		if (a->len != AGENT_RLIMIT_SIZE ||
		    l->nrlimits == AGENT_MAX_RLIMITS)
			return exec_error(msg, msg_size, -EINVAL,
					  "malformed or too many rlimits");
		rl = &l->rlimits[l->nrlimits];
		rl->resource = get_le32(a->value);
		rl->soft = get_le64(a->value + 4);
		rl->hard = get_le64(a->value + 12);
		if (rl->resource >= AGENT_MAX_RLIMITS || rl->soft > rl->hard)
			return exec_error(msg, msg_size, -EINVAL,
					  "rlimit out of range");
		for (size_t i = 0; i < l->nrlimits; i++)
			if (l->rlimits[i].resource == rl->resource)
				return exec_error(msg, msg_size, -EINVAL,
						  "an rlimit given twice");
		l->nrlimits++;
		return 0;
	case AGENT_ATTR_CAPS:
		if (a->len != 8 * AGENT_CAP_SETS)
			return exec_error(msg, msg_size, -EINVAL,
					  "malformed capability sets");
		for (int i = 0; i < AGENT_CAP_SETS; i++)
			l->caps[i] = get_le64(a->value + 8 * i);
		l->has_caps = true;
		return 0;
	case AGENT_ATTR_NO_NEW_PRIVS:
		if (agent_attr_u32(a) > 1)
			return exec_error(msg, msg_size, -EINVAL,
					  "NO_NEW_PRIVS is not 0 or 1");
		l->no_new_privs = agent_attr_u32(a) == 1;
		return 0;
	case AGENT_ATTR_SECCOMP:
		if (!a->len || a->len % 8 || a->len > AGENT_MAX_SECCOMP)
			return exec_error(
				msg, msg_size, -EINVAL,
				"seccomp program size is not whole instructions within the limit");
		/* Points into the payload until the decoder copies it. */
		l->seccomp = a->value;
		l->seccomp_len = a->len;
		return 0;
	default:
		return 0;
	}
}

int agent_exec_decode(const uint8_t *payload, size_t len,
		      struct agent_exec_req *req, char *msg, size_t msg_size)
{
	size_t nargs = 0, nenv = 0, strbytes = 0;
	bool has_cgroup = false;
	struct agent_attr_iter it;
	struct agent_attr a;
	char **ptrs, *strs;
	int r;

	*req = (struct agent_exec_req){ 0 };
	if (msg_size)
		msg[0] = '\0';
	if (agent_payload_validate(payload, len) < 0)
		return exec_error(msg, msg_size, -EPROTO,
				  "malformed EXEC payload");
	/* First pass: counts and sizes, and every value's range. */
	agent_attr_iter_init(&it, payload, len);
	while ((r = agent_attr_next(&it, &a)) > 0) {
		uint32_t v = a.len == 4 ? agent_attr_u32(&a) : 0;

		switch (a.type) {
		case AGENT_ATTR_ARG:
			if (++nargs > AGENT_MAX_ARGS)
				return exec_error(msg, msg_size, -EINVAL,
						  "too many arguments");
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_ENV:
			if (++nenv > AGENT_MAX_ENV)
				return exec_error(
					msg, msg_size, -EINVAL,
					"too many environment entries");
			if (!a.len || a.value[0] == '=' ||
			    !memchr(a.value, '=', a.len))
				return exec_error(
					msg, msg_size, -EINVAL,
					"environment entry is not K=V");
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_CWD:
			if (!a.len || a.value[0] != '/' ||
			    a.len > AGENT_MAX_PATH)
				return exec_error(
					msg, msg_size, -EINVAL,
					"cwd is not an absolute path");
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_ROOT:
			if (a.len > AGENT_MAX_PATH ||
			    !clean_path(a.value, a.len))
				return exec_error(
					msg, msg_size, -EINVAL,
					"root is not an absolute path without \"..\"");
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_CGROUP:
			if (!agent_cgroup_name_valid((const char *)a.value,
						     a.len))
				return exec_error(
					msg, msg_size, -EINVAL,
					"cgroup is not a name of 1 to 64 of [A-Za-z0-9_.+-]");
			has_cgroup = true;
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_MEMORY_MAX:
			req->memory_max = agent_attr_u64(&a);
			if (!req->memory_max)
				return exec_error(msg, msg_size, -EINVAL,
						  "memory max 0 is no limit");
			break;
		case AGENT_ATTR_PIDNS:
			if (v != AGENT_PIDNS_NEW && v != AGENT_PIDNS_JOIN)
				return exec_error(
					msg, msg_size, -EINVAL,
					"PIDNS is not 1 (new) or 2 (join)");
			req->pidns = v;
			break;
		case AGENT_ATTR_UID:
			if (v == UINT32_MAX)
				return exec_error(msg, msg_size, -EINVAL,
						  "uid -1 is not a user");
			req->uid = v;
			req->has_uid = true;
			break;
		case AGENT_ATTR_GID:
			if (v == UINT32_MAX)
				return exec_error(msg, msg_size, -EINVAL,
						  "gid -1 is not a group");
			req->gid = v;
			req->has_gid = true;
			break;
		case AGENT_ATTR_FLAGS:
			req->flags = v;
			break;
		case AGENT_ATTR_RLIMIT:
		case AGENT_ATTR_CAPS:
		case AGENT_ATTR_NO_NEW_PRIVS:
		case AGENT_ATTR_SECCOMP:
			r = decode_limit(&a, &req->limits, msg, msg_size);
			if (r)
				return r;
			if (a.type == AGENT_ATTR_SECCOMP)
				strbytes += a.len + 8u; /* 8-byte aligned */
			break;
		case AGENT_ATTR_ROWS:
		case AGENT_ATTR_COLS:
			if (!v || v > UINT16_MAX)
				return exec_error(
					msg, msg_size, -EINVAL,
					"window size out of 1..65535");
			if (a.type == AGENT_ATTR_ROWS)
				req->rows = (uint16_t)v;
			else
				req->cols = (uint16_t)v;
			break;
		default:
			break; /* unknown or irrelevant here: skipped */
		}
	}
	if (!nargs)
		return exec_error(msg, msg_size, -EINVAL, "no argv[0]");
	if (req->flags & ~AGENT_EXEC_KNOWN_FLAGS)
		return exec_error(msg, msg_size, -EINVAL, "unknown flags");
	if ((req->flags & AGENT_EXEC_TTY) &&
	    (req->flags &
	     (AGENT_EXEC_STDIN | AGENT_EXEC_STDOUT | AGENT_EXEC_STDERR)))
		return exec_error(msg, msg_size, -EINVAL,
				  "a terminal replaces the stdio streams");
	if (!(req->flags & AGENT_EXEC_TTY) && (req->rows || req->cols))
		return exec_error(msg, msg_size, -EINVAL,
				  "a window size needs a terminal");
	if (agent_limits_any(&req->limits) !=
	    !!(req->flags & AGENT_EXEC_LIMITS))
		return exec_error(msg, msg_size, -EINVAL,
				  "limits and the LIMITS flag go together");
	if (has_cgroup != !!(req->flags & AGENT_EXEC_CGROUP))
		return exec_error(msg, msg_size, -EINVAL,
				  "a cgroup and the CGROUP flag go together");
	if (req->memory_max && !has_cgroup)
		return exec_error(msg, msg_size, -EINVAL,
				  "a memory max needs a cgroup");
	if (!!req->pidns != !!(req->flags & AGENT_EXEC_PIDNS))
		return exec_error(
			msg, msg_size, -EINVAL,
			"a PID namespace and the PIDNS flag go together");
	if (req->pidns && !has_cgroup)
		return exec_error(
			msg, msg_size, -EINVAL,
			"a PID namespace needs a cgroup to be named by");
	/*
	 * One block: the pointer arrays, then the strings. Bounded by the
	 * payload: strbytes <= len + counts, counts <= the limits above.
	 */
	req->storage =
		malloc((nargs + 1 + nenv + 1) * sizeof(char *) + strbytes);
	/* (the seccomp program is copied last, at an 8-byte boundary) */
	if (!req->storage)
		return exec_error(msg, msg_size, -ENOMEM, "out of memory");
	ptrs = req->storage;
	strs = (char *)(ptrs + nargs + 1 + nenv + 1);
	req->argv = ptrs;
	req->envp = nenv ? ptrs + nargs + 1 : NULL;
	nargs = nenv = 0;
	agent_attr_iter_init(&it, payload, len);
	while (agent_attr_next(&it, &a) > 0) {
		if (a.type != AGENT_ATTR_ARG && a.type != AGENT_ATTR_ENV &&
		    a.type != AGENT_ATTR_CWD && a.type != AGENT_ATTR_ROOT &&
		    a.type != AGENT_ATTR_CGROUP)
			continue;
		memcpy(strs, a.value, a.len);
		strs[a.len] = '\0';
		if (a.type == AGENT_ATTR_ARG)
			req->argv[nargs++] = strs;
		else if (a.type == AGENT_ATTR_ENV)
			req->envp[nenv++] = strs;
		else if (a.type == AGENT_ATTR_ROOT)
			req->root = strs;
		else if (a.type == AGENT_ATTR_CGROUP)
			req->cgroup = strs;
		else
			req->cwd = strs;
		strs += a.len + 1u;
	}
	req->argv[nargs] = NULL;
	if (req->envp)
		req->envp[nenv] = NULL;
	if (req->limits.seccomp) {
		uintptr_t at = ((uintptr_t)strs + 7) & ~(uintptr_t)7;

		memcpy((void *)at, req->limits.seccomp,
		       req->limits.seccomp_len);
		req->limits.seccomp = (const void *)at;
	}
	return 0;
}

void agent_exec_req_free(struct agent_exec_req *req)
{
	free(req->storage);
	*req = (struct agent_exec_req){ 0 };
}

/* REQ's attributes: an EXEC's payload, or a CONTAINER's process. */
static void put_exec(struct agent_builder *b, const struct agent_exec_req *req)
{
	for (char **a = req->argv; a && *a; a++)
		agent_put_str(b, AGENT_ATTR_ARG, *a);
	for (char **e = req->envp; e && *e; e++)
		agent_put_str(b, AGENT_ATTR_ENV, *e);
	if (req->cwd)
		agent_put_str(b, AGENT_ATTR_CWD, req->cwd);
	if (req->root)
		agent_put_str(b, AGENT_ATTR_ROOT, req->root);
	if (req->cgroup)
		agent_put_str(b, AGENT_ATTR_CGROUP, req->cgroup);
	if (req->memory_max)
		agent_put_u64(b, AGENT_ATTR_MEMORY_MAX, req->memory_max);
	if (req->pidns)
		agent_put_u32(b, AGENT_ATTR_PIDNS, req->pidns);
	if (req->has_uid)
		agent_put_u32(b, AGENT_ATTR_UID, req->uid);
	if (req->has_gid)
		agent_put_u32(b, AGENT_ATTR_GID, req->gid);
	agent_put_u32(b, AGENT_ATTR_FLAGS, req->flags);
	if (req->rows)
		agent_put_u32(b, AGENT_ATTR_ROWS, req->rows);
	if (req->cols)
		agent_put_u32(b, AGENT_ATTR_COLS, req->cols);
	for (size_t i = 0; i < req->limits.nrlimits; i++) {
		const struct agent_rlimit *rl = &req->limits.rlimits[i];
		uint8_t v[AGENT_RLIMIT_SIZE];

		put_le32(v, rl->resource);
		put_le64(v + 4, rl->soft);
		put_le64(v + 12, rl->hard);
		agent_put_bytes(b, AGENT_ATTR_RLIMIT, v, sizeof(v));
	}
	if (req->limits.has_caps) {
		uint8_t v[8 * AGENT_CAP_SETS];

		for (int i = 0; i < AGENT_CAP_SETS; i++)
			put_le64(v + 8 * i, req->limits.caps[i]);
		agent_put_bytes(b, AGENT_ATTR_CAPS, v, sizeof(v));
	}
	if (req->limits.no_new_privs)
		agent_put_u32(b, AGENT_ATTR_NO_NEW_PRIVS, 1);
	if (req->limits.seccomp)
		agent_put_bytes(b, AGENT_ATTR_SECCOMP, req->limits.seccomp,
				req->limits.seccomp_len);
}

int agent_exec_encode(uint8_t *buf, size_t cap, uint32_t id,
		      const struct agent_exec_req *req)
{
	struct agent_builder b;

	agent_build_begin(&b, buf, cap, AGENT_MSG_EXEC, id);
	put_exec(&b, req);
	return agent_build_end(&b);
}

/* ---- CONTAINER --------------------------------------------------------- */

int agent_container_encode(uint8_t *buf, size_t cap,
			   const struct agent_container *c)
{
	struct agent_builder b;

	agent_build_begin(&b, buf, cap, AGENT_MSG_CONTAINER, 0);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	put_exec(&b, &c->process);
	if (c->hostname)
		agent_put_str(&b, AGENT_ATTR_HOSTNAME, c->hostname);
	if (c->root_readonly)
		agent_put_u32(&b, AGENT_ATTR_ROOT_READONLY, 1);
	for (size_t i = 0; i < c->nmounts; i++) {
		const struct agent_mount *m = &c->mounts[i];

		agent_nest_begin(&b, AGENT_ATTR_MOUNT);
		agent_put_str(&b, AGENT_ATTR_MOUNT_DEST, m->destination);
		if (m->type)
			agent_put_str(&b, AGENT_ATTR_MOUNT_TYPE, m->type);
		if (m->source)
			agent_put_str(&b, AGENT_ATTR_MOUNT_SOURCE, m->source);
		if (m->flags)
			agent_put_u32(&b, AGENT_ATTR_FLAGS, m->flags);
		agent_nest_end(&b);
	}
	for (size_t i = 0; i < c->nsysctls; i++) {
		const struct agent_sysctl *s = &c->sysctls[i];
		size_t klen = strlen(s->key), vlen = strlen(s->value);
		uint8_t *p;

		/* "KEY=VALUE" without a copy: the attribute in two parts. */
		if (klen + 1 + vlen > UINT16_MAX) {
			if (!b.error)
				b.error = -EMSGSIZE;
			break;
		}
		p = reserve(&b, ATTR_HDR_SIZE + klen + 1 + vlen);
		if (!p)
			break;
		put_le16(p, AGENT_ATTR_SYSCTL);
		put_le16(p + 2, (uint16_t)(klen + 1 + vlen));
		memcpy(p + ATTR_HDR_SIZE, s->key, klen);
		p[ATTR_HDR_SIZE + klen] = '=';
		memcpy(p + ATTR_HDR_SIZE + klen + 1, s->value, vlen);
	}
	for (size_t i = 0; i < c->nmasked_paths; i++)
		agent_put_str(&b, AGENT_ATTR_MASKED_PATH, c->masked_paths[i]);
	for (size_t i = 0; i < c->nreadonly_paths; i++)
		agent_put_str(&b, AGENT_ATTR_READONLY_PATH,
			      c->readonly_paths[i]);
	return agent_build_end(&b);
}

/* An absolute path of LEN bytes without a ".." component. */
static bool clean_path(const uint8_t *p, size_t len)
{
	if (!len || p[0] != '/')
		return false;
	for (size_t i = 1, j; i <= len; i = j + 1) {
		for (j = i; j < len && p[j] != '/'; j++)
			;
		if (j - i == 2 && p[i] == '.' && p[i + 1] == '.')
			return false;
	}
	return true;
}

/* A sysctl "KEY=VALUE": KEY non-empty, below /proc/sys. */
static bool good_sysctl(const uint8_t *p, size_t len)
{
	const uint8_t *eq = memchr(p, '=', len);
	size_t klen = eq ? (size_t)(eq - p) : 0;

	if (!klen || p[0] == '/')
		return false;
	for (size_t i = 0; i + 1 < klen; i++)
		if (p[i] == '.' && p[i + 1] == '.')
			return false;
	return true;
}

/* One MOUNT's attributes: checked, and its string bytes counted. */
static int check_mount(const struct agent_attr *m, size_t *strbytes, char *msg,
		       size_t msg_size)
{
	struct agent_attr_iter it;
	struct agent_attr a;
	bool dest = false;
	int r;

	agent_attr_iter_init(&it, m->value, m->len);
	while ((r = agent_attr_next(&it, &a)) > 0) {
		switch (a.type) {
		case AGENT_ATTR_MOUNT_DEST:
			if (!a.len || a.value[0] != '/')
				return exec_error(
					msg, msg_size, -EINVAL,
					"a mount's destination is not absolute");
			dest = true;
			/* fall through */
		case AGENT_ATTR_MOUNT_TYPE:
		case AGENT_ATTR_MOUNT_SOURCE:
			*strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_FLAGS:
			if (agent_attr_u32(&a) & ~AGENT_MOUNT_KNOWN_FLAGS)
				return exec_error(msg, msg_size, -EINVAL,
						  "unknown mount flags");
			break;
		default:
			break;
		}
	}
	if (!dest)
		return exec_error(msg, msg_size, -EINVAL,
				  "a mount without a destination");
	return 0;
}

/* Copy string attribute A into the block at *STRS: the copy. */
static char *take_str(const struct agent_attr *a, char **strs)
{
	char *s = *strs;

	memcpy(s, a->value, a->len);
	s[a->len] = '\0';
	*strs += a->len + 1u;
	return s;
}

static void fill_mount(const struct agent_attr *m, struct agent_mount *out,
		       char **strs)
{
	struct agent_attr_iter it;
	struct agent_attr a;

	*out = (struct agent_mount){ 0 };
	agent_attr_iter_init(&it, m->value, m->len);
	while (agent_attr_next(&it, &a) > 0) {
		if (a.type == AGENT_ATTR_MOUNT_DEST)
			out->destination = take_str(&a, strs);
		else if (a.type == AGENT_ATTR_MOUNT_TYPE)
			out->type = take_str(&a, strs);
		else if (a.type == AGENT_ATTR_MOUNT_SOURCE)
			out->source = take_str(&a, strs);
		else if (a.type == AGENT_ATTR_FLAGS)
			out->flags = agent_attr_u32(&a);
	}
}

int agent_container_decode(const uint8_t *frame, size_t len,
			   struct agent_container *c, char *msg,
			   size_t msg_size)
{
	size_t nmounts = 0, nsysctls = 0, nmasked = 0, nro = 0, strbytes = 0;
	const uint8_t *payload = frame + AGENT_HDR_SIZE;
	struct agent_attr_iter it;
	struct agent_attr a;
	struct agent_hdr hdr;
	uint32_t version;
	char *strs;
	int r;

	*c = (struct agent_container){ 0 };
	if (msg_size)
		msg[0] = '\0';
	if (len < AGENT_HDR_SIZE || agent_hdr_decode(frame, &hdr) ||
	    hdr.type != AGENT_MSG_CONTAINER || hdr.len != len - AGENT_HDR_SIZE)
		return exec_error(msg, msg_size, -EPROTO,
				  "not a whole CONTAINER frame");
	len = hdr.len;
	r = agent_exec_decode(payload, len, &c->process, msg, msg_size);
	if (r)
		return r;
	if (agent_get_u32(payload, len, AGENT_ATTR_VERSION, &version) ||
	    version != AGENT_PROTO_VERSION) {
		agent_exec_req_free(&c->process);
		return exec_error(
			msg, msg_size, -EPROTONOSUPPORT,
			"not a CONTAINER frame of protocol version 1");
	}
	/* First pass: counts, sizes and values (the payload is valid). */
	agent_attr_iter_init(&it, payload, len);
	while ((r = agent_attr_next(&it, &a)) > 0) {
		const char *bad = NULL;
		size_t *n;

		switch (a.type) {
		case AGENT_ATTR_HOSTNAME:
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_ROOT_READONLY:
			if (agent_attr_u32(&a) > 1)
				bad = "ROOT_READONLY is not 0 or 1";
			break;
		case AGENT_ATTR_MOUNT:
			if (++nmounts > AGENT_MAX_MOUNTS) {
				bad = "too many mounts";
				break;
			}
			r = check_mount(&a, &strbytes, msg, msg_size);
			if (r) {
				agent_exec_req_free(&c->process);
				return r;
			}
			break;
		case AGENT_ATTR_SYSCTL:
			if (++nsysctls > AGENT_MAX_SYSCTLS)
				bad = "too many sysctls";
			else if (!good_sysctl(a.value, a.len))
				bad = "a sysctl is not KEY=VALUE below /proc/sys";
			strbytes += a.len + 1u;
			break;
		case AGENT_ATTR_MASKED_PATH:
		case AGENT_ATTR_READONLY_PATH:
			n = a.type == AGENT_ATTR_MASKED_PATH ? &nmasked : &nro;
			if (++*n > AGENT_MAX_PATHS)
				bad = "too many masked or read-only paths";
			else if (!clean_path(a.value, a.len))
				bad = "a masked or read-only path is not absolute without \"..\"";
			strbytes += a.len + 1u;
			break;
		default:
			break;
		}
		if (bad) {
			agent_exec_req_free(&c->process);
			return exec_error(msg, msg_size, -EINVAL, bad);
		}
	}
	/*
	 * One block: the mounts, the sysctls, the two path vectors, then
	 * the strings; bounded by the payload and the counts above.
	 */
	c->storage = malloc(
		nmounts * sizeof(*c->mounts) + nsysctls * sizeof(*c->sysctls) +
		(nmasked + 1 + nro + 1) * sizeof(char *) + strbytes);
	if (!c->storage) {
		agent_exec_req_free(&c->process);
		return exec_error(msg, msg_size, -ENOMEM, "out of memory");
	}
	c->mounts = c->storage;
	c->sysctls = (struct agent_sysctl *)(c->mounts + nmounts);
	c->masked_paths = (char **)(c->sysctls + nsysctls);
	c->readonly_paths = c->masked_paths + nmasked + 1;
	strs = (char *)(c->readonly_paths + nro + 1);
	agent_attr_iter_init(&it, payload, len);
	while (agent_attr_next(&it, &a) > 0) {
		switch (a.type) {
		case AGENT_ATTR_HOSTNAME:
			c->hostname = take_str(&a, &strs);
			break;
		case AGENT_ATTR_ROOT_READONLY:
			c->root_readonly = agent_attr_u32(&a) == 1;
			break;
		case AGENT_ATTR_MOUNT:
			fill_mount(&a, &c->mounts[c->nmounts++], &strs);
			break;
		case AGENT_ATTR_SYSCTL: {
			struct agent_sysctl *s = &c->sysctls[c->nsysctls++];

			s->key = take_str(&a, &strs);
			s->value = strchr(s->key, '=');
			*s->value++ = '\0';
			break;
		}
		case AGENT_ATTR_MASKED_PATH:
			c->masked_paths[c->nmasked_paths++] =
				take_str(&a, &strs);
			break;
		case AGENT_ATTR_READONLY_PATH:
			c->readonly_paths[c->nreadonly_paths++] =
				take_str(&a, &strs);
			break;
		default:
			break;
		}
	}
	c->masked_paths[c->nmasked_paths] = NULL;
	c->readonly_paths[c->nreadonly_paths] = NULL;
	return 0;
}

void agent_container_free(struct agent_container *c)
{
	agent_exec_req_free(&c->process);
	free(c->storage);
	*c = (struct agent_container){ 0 };
}

unsigned int agent_exec_streams(uint32_t flags)
{
	unsigned int s = 0;

	if (flags & AGENT_EXEC_TTY)
		return 1u << AGENT_STREAM_TTY;
	if (flags & AGENT_EXEC_STDIN)
		s |= 1u << AGENT_STREAM_STDIN;
	if (flags & AGENT_EXEC_STDOUT)
		s |= 1u << AGENT_STREAM_STDOUT;
	if (flags & AGENT_EXEC_STDERR)
		s |= 1u << AGENT_STREAM_STDERR;
	return s;
}

int agent_shell_status(bool signaled, uint32_t code_or_signal)
{
	if (signaled)
		return 128 + (int)(code_or_signal & 0x7f);
	return (int)(code_or_signal & 0xff);
}

int agent_stats_encode(uint8_t *buf, size_t cap, uint32_t id,
		       const struct agent_stats *s)
{
	struct agent_builder b;

	agent_build_begin(&b, buf, cap, AGENT_MSG_STATS_DATA, id);
	for (unsigned int i = 0; i < AGENT_STATS_COUNT; i++)
		if (s->value[i] != AGENT_STATS_UNKNOWN)
			agent_put_u64(&b,
				      (uint16_t)(AGENT_ATTR_CPU_USAGE_NS + i),
				      s->value[i]);
	return agent_build_end(&b);
}

void agent_stats_decode(const uint8_t *payload, size_t len,
			struct agent_stats *s)
{
	for (unsigned int i = 0; i < AGENT_STATS_COUNT; i++)
		if (agent_get_u64(payload, len,
				  (uint16_t)(AGENT_ATTR_CPU_USAGE_NS + i),
				  &s->value[i]))
			s->value[i] = AGENT_STATS_UNKNOWN;
}

int agent_cgroup_set_encode(uint8_t *buf, size_t cap, uint32_t id,
			    const struct agent_cgroup_set *c)
{
	struct agent_builder b;

	agent_build_begin(&b, buf, cap, AGENT_MSG_CGROUP_SET, id);
	agent_put_str(&b, AGENT_ATTR_CGROUP, c->cgroup);
	if (c->memory_max)
		agent_put_u64(&b, AGENT_ATTR_MEMORY_MAX, c->memory_max);
	if (c->set_cpu) {
		agent_put_u64(&b, AGENT_ATTR_CPU_QUOTA, c->cpu_quota);
		agent_put_u64(&b, AGENT_ATTR_CPU_PERIOD, c->cpu_period);
	}
	return agent_build_end(&b);
}

int agent_cgroup_set_decode(const uint8_t *payload, size_t len,
			    struct agent_cgroup_set *c, char *msg,
			    size_t msg_size)
{
	bool has_quota, has_period;
	int r;

	*c = (struct agent_cgroup_set){ 0 };
	if (msg_size)
		msg[0] = '\0';
	if (agent_payload_validate(payload, len) < 0)
		return exec_error(msg, msg_size, -EPROTO,
				  "malformed CGROUP_SET payload");
	r = agent_get_str(payload, len, AGENT_ATTR_CGROUP, c->cgroup,
			  sizeof(c->cgroup));
	if (r || !agent_cgroup_name_valid(c->cgroup, strlen(c->cgroup)))
		return exec_error(msg, msg_size, -EINVAL,
				  "no CGROUP, or not a cgroup name");
	if (!agent_get_u64(payload, len, AGENT_ATTR_MEMORY_MAX,
			   &c->memory_max) &&
	    !c->memory_max)
		return exec_error(msg, msg_size, -EINVAL,
				  "memory max 0 is no limit");
	has_quota = !agent_get_u64(payload, len, AGENT_ATTR_CPU_QUOTA,
				   &c->cpu_quota);
	has_period = !agent_get_u64(payload, len, AGENT_ATTR_CPU_PERIOD,
				    &c->cpu_period);
	if (has_quota != has_period)
		return exec_error(msg, msg_size, -EINVAL,
				  "CPU_QUOTA and CPU_PERIOD go together");
	if (has_period && (c->cpu_period < 1000 || c->cpu_period > 1000000))
		return exec_error(msg, msg_size, -EINVAL,
				  "CPU_PERIOD is not 1000..1000000 us");
	c->set_cpu = has_quota;
	if (!c->set_cpu && !c->memory_max)
		return exec_error(msg, msg_size, -EINVAL, "nothing to set");
	return 0;
}
