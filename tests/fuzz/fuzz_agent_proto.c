// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness: the fuzzer's bytes are what arrives on an agent
 * connection (docs/agent.md), from either side: a header and a payload.
 * Whatever the bytes, the codec (src/abi/agent_proto.c, compiled into
 * both libhintvm and the guest agent) must refuse oversized frames, read
 * nothing outside the payload, and an EXEC it accepts must hold only what
 * its limits allow and encode back to a request that decodes the same.
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
