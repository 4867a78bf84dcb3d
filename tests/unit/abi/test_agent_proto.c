// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest agent protocol codec (src/abi/agent_proto.c), which libhintvm,
 * the guest agent and hintvm-oci-init link: frames round-trip, and every
 * malformed or out-of-bounds input is refused before it is used.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "abi/agent_proto.h"

static uint8_t buf[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD + 64];

static void test_header_round_trip(void **state)
{
	struct agent_hdr in = { .len = 77,
				.type = AGENT_MSG_EXEC,
				.id = 0xdeadbeef },
			 out;

	agent_hdr_encode(buf, &in);
	assert_int_equal(agent_hdr_decode(buf, &out), 0);
	assert_int_equal(out.len, 77);
	assert_int_equal(out.type, AGENT_MSG_EXEC);
	assert_int_equal(out.id, 0xdeadbeef);
	/* Little-endian on the wire, whatever the host. */
	assert_int_equal(buf[0], 77);
	assert_int_equal(buf[4], AGENT_MSG_EXEC);
}

static void test_header_refuses_oversized_payload(void **state)
{
	struct agent_hdr h = { .len = AGENT_MAX_PAYLOAD + 1 }, out;

	agent_hdr_encode(buf, &h);
	assert_int_equal(agent_hdr_decode(buf, &out), -EMSGSIZE);
	h.len = AGENT_MAX_PAYLOAD;
	agent_hdr_encode(buf, &h);
	assert_int_equal(agent_hdr_decode(buf, &out), 0);
}

static void test_build_and_read_attributes(void **state)
{
	struct agent_builder b;
	struct agent_hdr h;
	uint32_t v32;
	uint64_t v64;
	char s[16];
	int len;

	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_READY, 9);
	agent_put_u32(&b, AGENT_ATTR_SESSION, 42);
	agent_put_u64(&b, AGENT_ATTR_TOKEN, 0x0123456789abcdefULL);
	agent_put_str(&b, AGENT_ATTR_MESSAGE, "hi");
	len = agent_build_end(&b);
	assert_int_equal(len, AGENT_HDR_SIZE + 8 + 12 + 6);
	assert_int_equal(agent_hdr_decode(buf, &h), 0);
	assert_int_equal(h.len, len - AGENT_HDR_SIZE);
	assert_int_equal(agent_payload_validate(buf + AGENT_HDR_SIZE, h.len),
			 0);
	assert_int_equal(agent_get_u32(buf + AGENT_HDR_SIZE, h.len,
				       AGENT_ATTR_SESSION, &v32),
			 0);
	assert_int_equal(v32, 42);
	assert_int_equal(agent_get_u64(buf + AGENT_HDR_SIZE, h.len,
				       AGENT_ATTR_TOKEN, &v64),
			 0);
	assert_true(v64 == 0x0123456789abcdefULL);
	assert_int_equal(agent_get_str(buf + AGENT_HDR_SIZE, h.len,
				       AGENT_ATTR_MESSAGE, s, sizeof(s)),
			 0);
	assert_string_equal(s, "hi");
	assert_int_equal(agent_get_str(buf + AGENT_HDR_SIZE, h.len,
				       AGENT_ATTR_MESSAGE, s, 2),
			 -ENAMETOOLONG);
	assert_int_equal(agent_get_u32(buf + AGENT_HDR_SIZE, h.len,
				       AGENT_ATTR_PID, &v32),
			 -ENOENT);
}

static void test_builder_overflow_is_sticky(void **state)
{
	uint8_t small[AGENT_HDR_SIZE + 10];
	struct agent_builder b;

	agent_build_begin(&b, small, sizeof(small), AGENT_MSG_OK, 1);
	agent_put_u32(&b, AGENT_ATTR_PID, 1); /* 8 bytes: fits */
	agent_put_u32(&b, AGENT_ATTR_PID, 2); /* does not */
	agent_put_u32(&b, AGENT_ATTR_SIGNAL, 3);
	assert_int_equal(agent_build_end(&b), -EMSGSIZE);
}

static void test_payload_cap_applies_to_builder(void **state)
{
	static char big[60000];
	struct agent_builder b;

	memset(big, 'a', sizeof(big) - 1);
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_EXEC, 1);
	for (int i = 0; i < 5; i++)
		agent_put_str(&b, AGENT_ATTR_ARG, big);
	assert_int_equal(agent_build_end(&b), -EMSGSIZE);
}

static void test_malformed_payloads_refused(void **state)
{
	/* An attribute that claims more than the payload holds. */
	const uint8_t overrun[] = { AGENT_ATTR_PID, 0, 8, 0, 1, 2, 3, 4 };
	/* A u32 of 3 bytes. */
	const uint8_t short_u32[] = { AGENT_ATTR_PID, 0, 3, 0, 1, 2, 3 };
	/* A string with a NUL inside. */
	const uint8_t nul_str[] = { AGENT_ATTR_ARG, 0, 3, 0, 'a', 0, 'b' };
	/* A truncated attribute header. */
	const uint8_t stub[] = { AGENT_ATTR_PID, 0 };
	/* The same single-valued attribute twice. */
	const uint8_t twice[] = { AGENT_ATTR_PID, 0, 4, 0, 1, 0, 0, 0,
				  AGENT_ATTR_PID, 0, 4, 0, 2, 0, 0, 0 };
	/* An unknown attribute: skipped, so newer clients still work. */
	const uint8_t unknown[] = { 0xfe, 0x7f, 2, 0, 'x', 'y' };

	assert_int_equal(agent_payload_validate(overrun, sizeof(overrun)),
			 -EPROTO);
	assert_int_equal(agent_payload_validate(short_u32, sizeof(short_u32)),
			 -EPROTO);
	assert_int_equal(agent_payload_validate(nul_str, sizeof(nul_str)),
			 -EPROTO);
	assert_int_equal(agent_payload_validate(stub, sizeof(stub)), -EPROTO);
	assert_int_equal(agent_payload_validate(twice, sizeof(twice)), -EPROTO);
	assert_int_equal(agent_payload_validate(unknown, sizeof(unknown)), 0);
}

static void test_nesting_is_bounded(void **state)
{
	struct agent_builder b;
	uint8_t deep[] = { AGENT_ATTR_PROC, 0, 8, 0, AGENT_ATTR_PROC, 0, 4, 0,
			   AGENT_ATTR_PROC, 0, 0, 0 };
	int len;

	/* One level, as PROCS uses it, is fine. */
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_PROCS, 1);
	agent_nest_begin(&b, AGENT_ATTR_PROC);
	agent_put_u32(&b, AGENT_ATTR_PID, 5);
	agent_nest_end(&b);
	len = agent_build_end(&b);
	assert_true(len > 0);
	assert_int_equal(agent_payload_validate(buf + AGENT_HDR_SIZE,
						(size_t)len - AGENT_HDR_SIZE),
			 0);
	/* A PROC in a PROC is not. */
	assert_int_equal(agent_payload_validate(deep, sizeof(deep)), -EPROTO);
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_PROCS, 1);
	agent_nest_begin(&b, AGENT_ATTR_PROC);
	agent_nest_begin(&b, AGENT_ATTR_PROC);
	assert_int_equal(agent_build_end(&b), -EMSGSIZE);
}

static int encode_exec(const struct agent_exec_req *req)
{
	return agent_exec_encode(buf, sizeof(buf), 7, req);
}

static int decode_exec(int len, struct agent_exec_req *out, char *msg)
{
	return agent_exec_decode(buf + AGENT_HDR_SIZE,
				 (size_t)len - AGENT_HDR_SIZE, out, msg, 128);
}

static void test_exec_round_trip(void **state)
{
	char *argv[] = { "sh", "-c", "echo hi", NULL };
	char *envp[] = { "A=1", "B=", NULL };
	struct agent_exec_req in = { .argv = argv,
				     .envp = envp,
				     .cwd = "/tmp",
				     .uid = 1000,
				     .gid = 100,
				     .has_uid = true,
				     .has_gid = true,
				     .flags = AGENT_EXEC_TTY | AGENT_EXEC_KEEP,
				     .rows = 50,
				     .cols = 132 },
			      out;
	char msg[128];
	int len = encode_exec(&in);

	assert_true(len > 0);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_string_equal(out.argv[0], "sh");
	assert_string_equal(out.argv[2], "echo hi");
	assert_null(out.argv[3]);
	assert_string_equal(out.envp[1], "B=");
	assert_null(out.envp[2]);
	assert_string_equal(out.cwd, "/tmp");
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.gid, 100);
	assert_int_equal(out.flags, AGENT_EXEC_TTY | AGENT_EXEC_KEEP);
	assert_int_equal(out.rows, 50);
	assert_int_equal(out.cols, 132);
	agent_exec_req_free(&out);
}

/* A pod's container: ROOT comes through, and only a clean absolute one. */
static void test_exec_root(void **state)
{
	char *argv[] = { "sh", NULL };
	struct agent_exec_req in = { .argv = argv,
				     .cwd = "/work",
				     .root = "/hintvm-pod/c1/rootfs" },
			      out;
	char msg[128];
	int len = encode_exec(&in);

	(void)state;
	assert_true(len > 0);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_string_equal(out.root, "/hintvm-pod/c1/rootfs");
	assert_string_equal(out.cwd, "/work");
	agent_exec_req_free(&out);
	/* None: the agent's own root, as before. */
	in.root = NULL;
	len = encode_exec(&in);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_null(out.root);
	agent_exec_req_free(&out);
}

static void expect_exec_refused(struct agent_exec_req *in, int err)
{
	struct agent_exec_req out;
	char msg[128];
	int len = encode_exec(in);

	assert_true(len > 0);
	assert_int_equal(decode_exec(len, &out, msg), err);
	assert_true(msg[0] != '\0');
}

/*
 * A pod container's cgroup: CGROUP and MEMORY_MAX come through with the
 * CGROUP flag, and are refused without it, with a bad name, or as a
 * memory max without a cgroup.
 */
static void test_exec_cgroup(void **state)
{
	char *argv[] = { "sh", NULL };
	struct agent_exec_req in = { .argv = argv,
				     .root = "/hintvm-pod/c1/rootfs",
				     .cgroup = "c1",
				     .memory_max = 5ull << 30,
				     .flags = AGENT_EXEC_CGROUP },
			      out, r;
	char msg[128], name[70];
	int len = encode_exec(&in);

	(void)state;
	assert_true(len > 0);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_string_equal(out.cgroup, "c1");
	assert_true(out.memory_max == 5ull << 30);
	assert_string_equal(out.root, "/hintvm-pod/c1/rootfs");
	agent_exec_req_free(&out);
	/* An exec joining the cgroup: no memory max. */
	in.memory_max = 0;
	len = encode_exec(&in);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_string_equal(out.cgroup, "c1");
	assert_true(out.memory_max == 0);
	agent_exec_req_free(&out);
	/* None. */
	in = (struct agent_exec_req){ .argv = argv };
	len = encode_exec(&in);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_null(out.cgroup);
	agent_exec_req_free(&out);

	/* The flag and the attribute go together. */
	r = (struct agent_exec_req){ .argv = argv, .cgroup = "c1" };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .flags = AGENT_EXEC_CGROUP };
	expect_exec_refused(&r, -EINVAL);
	/* A memory max limits a cgroup, never the agent's. */
	r = (struct agent_exec_req){ .argv = argv, .memory_max = 1 << 20 };
	expect_exec_refused(&r, -EINVAL);
	/* Names: no path, no dot first, not empty, at most 64 bytes. */
	static const char *const bad[] = { "../task", "a/b", ".hidden", "",
					   "sp ace" };
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = (struct agent_exec_req){ .argv = argv,
					     .cgroup = (char *)bad[i],
					     .flags = AGENT_EXEC_CGROUP };
		expect_exec_refused(&r, -EINVAL);
	}
	memset(name, 'a', sizeof(name));
	name[AGENT_MAX_CGROUP_NAME] = '\0';
	assert_true(agent_cgroup_name_valid(name, strlen(name)));
	name[AGENT_MAX_CGROUP_NAME] = 'a';
	name[AGENT_MAX_CGROUP_NAME + 1] = '\0';
	assert_false(agent_cgroup_name_valid(name, strlen(name)));
	assert_true(agent_cgroup_name_valid("4f1e_c-1.2+x", 12));
}

/* CGROUP_SET (UpdateContainerResources): round trip and refusals. */
static int cgset_decode(const struct agent_cgroup_set *in,
			struct agent_cgroup_set *out, char *msg)
{
	int len = agent_cgroup_set_encode(buf, sizeof(buf), 3, in);

	assert_true(len > 0);
	assert_int_equal(agent_payload_validate(buf + AGENT_HDR_SIZE,
						(size_t)len - AGENT_HDR_SIZE),
			 0);
	return agent_cgroup_set_decode(buf + AGENT_HDR_SIZE,
				       (size_t)len - AGENT_HDR_SIZE, out, msg,
				       128);
}

static void test_cgroup_set(void **state)
{
	struct agent_cgroup_set in = { .cgroup = "c1",
				       .memory_max = 48ull << 20,
				       .set_cpu = true,
				       .cpu_quota = 50000,
				       .cpu_period = 100000 },
				out;
	char msg[128];

	(void)state;
	assert_int_equal(cgset_decode(&in, &out, msg), 0);
	assert_string_equal(out.cgroup, "c1");
	assert_true(out.memory_max == 48ull << 20);
	assert_true(out.set_cpu);
	assert_true(out.cpu_quota == 50000 && out.cpu_period == 100000);
	/* Memory alone; CPU alone, quota 0 being no limit. */
	in.set_cpu = false;
	assert_int_equal(cgset_decode(&in, &out, msg), 0);
	assert_false(out.set_cpu);
	in = (struct agent_cgroup_set){ .cgroup = "c1",
					.set_cpu = true,
					.cpu_period = 100000 };
	assert_int_equal(cgset_decode(&in, &out, msg), 0);
	assert_true(out.set_cpu && out.cpu_quota == 0 && !out.memory_max);

	/* Nothing to set, a bad period, a bad name. */
	in = (struct agent_cgroup_set){ .cgroup = "c1" };
	assert_int_equal(cgset_decode(&in, &out, msg), -EINVAL);
	assert_string_equal(msg, "nothing to set");
	in = (struct agent_cgroup_set){ .cgroup = "c1",
					.set_cpu = true,
					.cpu_quota = 1,
					.cpu_period = 999 };
	assert_int_equal(cgset_decode(&in, &out, msg), -EINVAL);
	in = (struct agent_cgroup_set){ .cgroup = "../task", .memory_max = 1 };
	assert_int_equal(cgset_decode(&in, &out, msg), -EINVAL);
}

/* A container's PID namespace: new or joined, by its cgroup's name. */
static void test_exec_pidns(void **state)
{
	char *argv[] = { "sh", NULL };
	struct agent_exec_req in = { .argv = argv,
				     .cgroup = "c1",
				     .pidns = AGENT_PIDNS_NEW,
				     .flags = AGENT_EXEC_CGROUP |
					      AGENT_EXEC_PIDNS },
			      out, r;
	char msg[128];
	int len = encode_exec(&in);

	(void)state;
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_int_equal(out.pidns, AGENT_PIDNS_NEW);
	agent_exec_req_free(&out);
	in.pidns = AGENT_PIDNS_JOIN;
	len = encode_exec(&in);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_int_equal(out.pidns, AGENT_PIDNS_JOIN);
	agent_exec_req_free(&out);

	/* Only 1 or 2, with the flag, and with a cgroup to name it. */
	r = in;
	r.pidns = 3;
	expect_exec_refused(&r, -EINVAL);
	r = in;
	r.flags = AGENT_EXEC_CGROUP;
	expect_exec_refused(&r, -EINVAL);
	r = in;
	r.pidns = 0;
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv,
				     .pidns = AGENT_PIDNS_NEW,
				     .flags = AGENT_EXEC_PIDNS };
	expect_exec_refused(&r, -EINVAL);
}

static void test_exec_values_checked(void **state)
{
	char *argv[] = { "true", NULL }, *none[] = { NULL };
	char *bad_env[] = { "NOEQUALS", NULL }, *empty_key[] = { "=x", NULL };
	struct agent_exec_req r;

	r = (struct agent_exec_req){ .argv = none };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .envp = bad_env };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .envp = empty_key };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .cwd = "relative" };
	expect_exec_refused(&r, -EINVAL);
	/* ROOT: absolute, no ".." (the agent chroots there). */
	r = (struct agent_exec_req){ .argv = argv, .root = "rootfs" };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .root = "/pod/../etc" };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .root = "/.." };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .flags = 0x100 };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){
		.argv = argv, .flags = AGENT_EXEC_TTY | AGENT_EXEC_STDIN
	};
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .rows = 10, .cols = 10 };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv,
				     .has_uid = true,
				     .uid = UINT32_MAX };
	expect_exec_refused(&r, -EINVAL);
}

static void test_exec_limits_round_trip(void **state)
{
	char *argv[] = { "id", NULL };
	/* 3 instructions, deliberately at an odd offset in the frame. */
	static const uint8_t bpf[24] = { 6, 0, 0, 0, 0, 0, 0xff, 0x7f, 1 };
	struct agent_exec_req in = { .argv = argv, .flags = AGENT_EXEC_LIMITS },
			      out;
	char msg[128];
	int len;

	in.limits.rlimits[0] = (struct agent_rlimit){ 7, 1024, UINT64_MAX };
	in.limits.rlimits[1] = (struct agent_rlimit){ 6, 5, 10 };
	in.limits.nrlimits = 2;
	in.limits.has_caps = true;
	in.limits.caps[AGENT_CAP_BOUNDING] = 1ull << 40 | 1;
	in.limits.caps[AGENT_CAP_AMBIENT] = 1;
	in.limits.no_new_privs = true;
	in.limits.seccomp = bpf;
	in.limits.seccomp_len = sizeof(bpf);
	len = encode_exec(&in);
	assert_true(len > 0);
	assert_int_equal(decode_exec(len, &out, msg), 0);
	assert_int_equal(out.limits.nrlimits, 2);
	assert_int_equal(out.limits.rlimits[0].hard, UINT64_MAX);
	assert_int_equal(out.limits.rlimits[1].resource, 6);
	assert_true(out.limits.has_caps);
	assert_int_equal(out.limits.caps[AGENT_CAP_BOUNDING], 1ull << 40 | 1);
	assert_int_equal(out.limits.caps[AGENT_CAP_AMBIENT], 1);
	assert_true(out.limits.no_new_privs);
	assert_int_equal(out.limits.seccomp_len, sizeof(bpf));
	/* Copied out of the frame, aligned for struct sock_filter. */
	assert_int_equal((uintptr_t)out.limits.seccomp % 8, 0);
	assert_memory_equal(out.limits.seccomp, bpf, sizeof(bpf));
	agent_exec_req_free(&out);
}

static void test_exec_limits_checked(void **state)
{
	char *argv[] = { "id", NULL };
	static const uint8_t bpf[12] = { 0 };
	struct agent_exec_req r;

	/* Limits without the flag: an old client or a confused one. */
	r = (struct agent_exec_req){ .argv = argv };
	r.limits.no_new_privs = true;
	expect_exec_refused(&r, -EINVAL);
	/* The flag without limits. */
	r = (struct agent_exec_req){ .argv = argv, .flags = AGENT_EXEC_LIMITS };
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .flags = AGENT_EXEC_LIMITS };
	r.limits.rlimits[0] = (struct agent_rlimit){ 7, 2, 1 };
	r.limits.nrlimits = 1;
	expect_exec_refused(&r, -EINVAL);
	r.limits.rlimits[0] = (struct agent_rlimit){ 16, 1, 1 };
	expect_exec_refused(&r, -EINVAL);
	r.limits.rlimits[0] = (struct agent_rlimit){ 7, 1, 1 };
	r.limits.rlimits[1] = (struct agent_rlimit){ 7, 1, 1 };
	r.limits.nrlimits = 2;
	expect_exec_refused(&r, -EINVAL);
	r = (struct agent_exec_req){ .argv = argv, .flags = AGENT_EXEC_LIMITS };
	r.limits.seccomp = bpf; /* not whole 8-byte instructions */
	r.limits.seccomp_len = sizeof(bpf);
	expect_exec_refused(&r, -EINVAL);
}

static void test_exec_counts_bounded(void **state)
{
	static char *argv[AGENT_MAX_ARGS + 2];
	struct agent_exec_req r = { .argv = argv };

	for (int i = 0; i <= AGENT_MAX_ARGS; i++)
		argv[i] = "x";
	argv[AGENT_MAX_ARGS + 1] = NULL;
	expect_exec_refused(&r, -EINVAL);
	argv[AGENT_MAX_ARGS] = NULL;
	{
		struct agent_exec_req out;
		char msg[128];
		int len = encode_exec(&r);

		assert_int_equal(decode_exec(len, &out, msg), 0);
		agent_exec_req_free(&out);
	}
}

/* ---- CONTAINER (hintvm-runtime -> oci-init) ---------------------------- */

static char *ctr_argv[] = { "/bin/probe", "a b", NULL };
static char *ctr_env[] = { "PATH=/bin", "FOO=bar=baz", NULL };

/* A container with one of everything the frame carries. */
static void full_container(struct agent_container *c,
			   struct agent_mount mounts[3],
			   struct agent_sysctl sysctls[2], char **masked,
			   char **ro)
{
	static const uint8_t bpf[16] = { 6, 0, 0, 0, 0, 0, 0xff, 0x7f };

	mounts[0] = (struct agent_mount){ .destination = "/proc",
					  .type = "proc",
					  .source = "proc" };
	mounts[1] = (struct agent_mount){ .destination = "/data",
					  .type = "bind",
					  .source = "/host/dir",
					  .flags = AGENT_MOUNT_RO |
						   AGENT_MOUNT_BIND };
	mounts[2] = (struct agent_mount){ .destination = "/sys/fs/cgroup" };
	sysctls[0] = (struct agent_sysctl){ "kernel/domainname", "d" };
	sysctls[1] = (struct agent_sysctl){ "net/ipv4/ip_forward", "a=b" };
	*c = (struct agent_container){
		.process = { .argv = ctr_argv,
			     .envp = ctr_env,
			     .cwd = "/tmp",
			     .uid = 1000,
			     .gid = 1001,
			     .has_uid = true,
			     .has_gid = true,
			     .flags = AGENT_EXEC_TTY | AGENT_EXEC_LIMITS,
			     .rows = 30,
			     .cols = 100 },
		.hostname = "box",
		.root_readonly = true,
		.mounts = mounts,
		.nmounts = 3,
		.sysctls = sysctls,
		.nsysctls = 2,
		.masked_paths = masked,
		.nmasked_paths = 2,
		.readonly_paths = ro,
		.nreadonly_paths = 1,
	};
	c->process.limits.nrlimits = 1;
	c->process.limits.rlimits[0] = (struct agent_rlimit){ 7, 123, 456 };
	c->process.limits.has_caps = true;
	c->process.limits.caps[AGENT_CAP_BOUNDING] = 0x21;
	c->process.limits.no_new_privs = true;
	c->process.limits.seccomp = bpf;
	c->process.limits.seccomp_len = sizeof(bpf);
}

static void test_container_round_trip(void **state)
{
	struct agent_mount mounts[3];
	struct agent_sysctl sysctls[2];
	char *masked[] = { "/proc/kcore", "/mask/..x", NULL };
	char *ro[] = { "/proc/sys", NULL };
	struct agent_container in, out;
	char msg[128];
	int len;

	full_container(&in, mounts, sysctls, masked, ro);
	len = agent_container_encode(buf, sizeof(buf), &in);
	assert_true(len > AGENT_HDR_SIZE);
	assert_int_equal(agent_container_decode(buf, (size_t)len, &out, msg,
						sizeof(msg)),
			 0);
	assert_string_equal(out.process.argv[0], "/bin/probe");
	assert_string_equal(out.process.argv[1], "a b");
	assert_null(out.process.argv[2]);
	assert_string_equal(out.process.envp[1], "FOO=bar=baz");
	assert_string_equal(out.process.cwd, "/tmp");
	assert_int_equal(out.process.uid, 1000);
	assert_int_equal(out.process.gid, 1001);
	assert_int_equal(out.process.flags, AGENT_EXEC_TTY | AGENT_EXEC_LIMITS);
	assert_int_equal(out.process.rows, 30);
	assert_int_equal(out.process.cols, 100);
	assert_int_equal(out.process.limits.rlimits[0].soft, 123);
	assert_int_equal(out.process.limits.caps[AGENT_CAP_BOUNDING], 0x21);
	assert_true(out.process.limits.no_new_privs);
	assert_int_equal(out.process.limits.seccomp_len, 16);
	assert_string_equal(out.hostname, "box");
	assert_true(out.root_readonly);
	assert_int_equal(out.nmounts, 3);
	assert_string_equal(out.mounts[0].type, "proc");
	assert_string_equal(out.mounts[1].source, "/host/dir");
	assert_int_equal(out.mounts[1].flags,
			 AGENT_MOUNT_RO | AGENT_MOUNT_BIND);
	assert_string_equal(out.mounts[2].destination, "/sys/fs/cgroup");
	assert_null(out.mounts[2].type);
	assert_null(out.mounts[2].source);
	assert_int_equal(out.nsysctls, 2);
	assert_string_equal(out.sysctls[0].key, "kernel/domainname");
	assert_string_equal(out.sysctls[1].value, "a=b");
	assert_int_equal(out.nmasked_paths, 2);
	assert_string_equal(out.masked_paths[1], "/mask/..x");
	assert_null(out.masked_paths[2]);
	assert_string_equal(out.readonly_paths[0], "/proc/sys");
	assert_null(out.readonly_paths[1]);
	agent_container_free(&out);

	/* The least: a process, nothing around it. */
	in = (struct agent_container){ .process = { .argv = ctr_argv } };
	len = agent_container_encode(buf, sizeof(buf), &in);
	assert_int_equal(agent_container_decode(buf, (size_t)len, &out, msg,
						sizeof(msg)),
			 0);
	assert_null(out.hostname);
	assert_false(out.root_readonly);
	assert_int_equal(out.nmounts, 0);
	assert_null(out.masked_paths[0]);
	assert_null(out.process.envp);
	agent_container_free(&out);
}

static void expect_container_refused(const struct agent_container *in, int err)
{
	struct agent_container out;
	char msg[128];
	int len = agent_container_encode(buf, sizeof(buf), in);

	assert_true(len > 0);
	assert_int_equal(agent_container_decode(buf, (size_t)len, &out, msg,
						sizeof(msg)),
			 err);
	assert_true(msg[0] != '\0');
}

static void test_container_values_checked(void **state)
{
	struct agent_mount m = { .destination = "relative" };
	struct agent_sysctl s = { "/abs", "1" };
	char *bad_path[] = { "/a/../b", NULL }, *rel_path[] = { "x", NULL };
	char *dots_end[] = { "/a/..", NULL };
	struct agent_container c = { .process = { .argv = ctr_argv } };
	char *none[] = { NULL };

	c.mounts = &m;
	c.nmounts = 1;
	expect_container_refused(&c, -EINVAL);
	m = (struct agent_mount){ .destination = "/ok", .flags = 0x80 };
	expect_container_refused(&c, -EINVAL);
	c = (struct agent_container){ .process = { .argv = ctr_argv },
				      .sysctls = &s,
				      .nsysctls = 1 };
	expect_container_refused(&c, -EINVAL);
	s = (struct agent_sysctl){ "kernel/../x", "1" };
	expect_container_refused(&c, -EINVAL);
	s = (struct agent_sysctl){ "", "1" };
	expect_container_refused(&c, -EINVAL);
	c = (struct agent_container){ .process = { .argv = ctr_argv },
				      .masked_paths = bad_path,
				      .nmasked_paths = 1 };
	expect_container_refused(&c, -EINVAL);
	c.masked_paths = dots_end;
	expect_container_refused(&c, -EINVAL);
	c = (struct agent_container){ .process = { .argv = ctr_argv },
				      .readonly_paths = rel_path,
				      .nreadonly_paths = 1 };
	expect_container_refused(&c, -EINVAL);
	/* The process is checked as an EXEC is. */
	c = (struct agent_container){ .process = { .argv = none } };
	expect_container_refused(&c, -EINVAL);
}

static void test_container_frame_checked(void **state)
{
	struct agent_container c = { .process = { .argv = ctr_argv } }, out;
	struct agent_builder b;
	char msg[128];
	int len = agent_container_encode(buf, sizeof(buf), &c);

	assert_true(len > 0);
	/* Short, long, or cut: the header announces exactly the rest. */
	assert_int_equal(agent_container_decode(buf, 5, &out, msg, 128),
			 -EPROTO);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len - 1, &out, msg, 128),
		-EPROTO);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len + 1, &out, msg, 128),
		-EPROTO);
	/* An EXEC is not a CONTAINER. */
	buf[4] = AGENT_MSG_EXEC;
	assert_int_equal(
		agent_container_decode(buf, (size_t)len, &out, msg, 128),
		-EPROTO);
	/* Another version, or none. */
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_CONTAINER, 0);
	agent_put_u32(&b, AGENT_ATTR_VERSION, 2);
	agent_put_str(&b, AGENT_ATTR_ARG, "true");
	agent_put_u32(&b, AGENT_ATTR_FLAGS, 0);
	len = agent_build_end(&b);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len, &out, msg, 128),
		-EPROTONOSUPPORT);
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_CONTAINER, 0);
	agent_put_str(&b, AGENT_ATTR_ARG, "true");
	len = agent_build_end(&b);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len, &out, msg, 128),
		-EPROTONOSUPPORT);
	/* A hostname given twice is malformed, as any single value is. */
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_CONTAINER, 0);
	agent_put_u32(&b, AGENT_ATTR_VERSION, 1);
	agent_put_str(&b, AGENT_ATTR_ARG, "true");
	agent_put_str(&b, AGENT_ATTR_HOSTNAME, "a");
	agent_put_str(&b, AGENT_ATTR_HOSTNAME, "b");
	len = agent_build_end(&b);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len, &out, msg, 128),
		-EPROTO);
	/* A mount without its destination. */
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_CONTAINER, 0);
	agent_put_u32(&b, AGENT_ATTR_VERSION, 1);
	agent_put_str(&b, AGENT_ATTR_ARG, "true");
	agent_nest_begin(&b, AGENT_ATTR_MOUNT);
	agent_put_str(&b, AGENT_ATTR_MOUNT_TYPE, "proc");
	agent_nest_end(&b);
	len = agent_build_end(&b);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len, &out, msg, 128),
		-EINVAL);
}

static void test_container_counts_bounded(void **state)
{
	static struct agent_mount mounts[AGENT_MAX_MOUNTS + 1];
	static char *paths[AGENT_MAX_PATHS + 2];
	struct agent_container c = { .process = { .argv = ctr_argv } }, out;
	char msg[128];
	int len;

	for (size_t i = 0; i <= AGENT_MAX_MOUNTS; i++)
		mounts[i] = (struct agent_mount){ .destination = "/m" };
	c.mounts = mounts;
	c.nmounts = AGENT_MAX_MOUNTS;
	len = agent_container_encode(buf, sizeof(buf), &c);
	assert_int_equal(
		agent_container_decode(buf, (size_t)len, &out, msg, 128), 0);
	agent_container_free(&out);
	c.nmounts = AGENT_MAX_MOUNTS + 1;
	expect_container_refused(&c, -EINVAL);
	c.nmounts = 0;
	for (size_t i = 0; i <= AGENT_MAX_PATHS; i++)
		paths[i] = "/p";
	c.masked_paths = paths;
	c.nmasked_paths = AGENT_MAX_PATHS + 1;
	expect_container_refused(&c, -EINVAL);
}

static void test_streams_and_status(void **state)
{
	assert_int_equal(
		agent_exec_streams(AGENT_EXEC_STDIN | AGENT_EXEC_STDERR),
		(1u << AGENT_STREAM_STDIN) | (1u << AGENT_STREAM_STDERR));
	assert_int_equal(agent_exec_streams(AGENT_EXEC_TTY),
			 1u << AGENT_STREAM_TTY);
	assert_int_equal(agent_shell_status(false, 3), 3);
	assert_int_equal(agent_shell_status(true, 9), 137);
	assert_int_equal(agent_shell_status(true, 15), 143);
}

/* STATS_DATA: what was known comes back, what was not stays unknown. */
static void test_stats_round_trip(void **state)
{
	uint8_t frame[256];
	struct agent_stats in, out;
	struct agent_hdr hdr;
	int len;

	(void)state;
	for (unsigned int i = 0; i < AGENT_STATS_COUNT; i++)
		in.value[i] = 1000 + i;
	in.value[AGENT_STAT(AGENT_ATTR_PIDS_LIMIT)] = AGENT_STATS_UNKNOWN;
	in.value[AGENT_STAT(AGENT_ATTR_MEM_USAGE)] = UINT64_C(1) << 40;
	len = agent_stats_encode(frame, sizeof(frame), 7, &in);
	assert_true(len > AGENT_HDR_SIZE);
	assert_int_equal(agent_hdr_decode(frame, &hdr), 0);
	assert_int_equal(hdr.type, AGENT_MSG_STATS_DATA);
	assert_int_equal(hdr.id, 7);
	assert_int_equal(
		agent_payload_validate(frame + AGENT_HDR_SIZE, hdr.len), 0);
	agent_stats_decode(frame + AGENT_HDR_SIZE, hdr.len, &out);
	assert_memory_equal(&in, &out, sizeof(in));
	/* Too small a framefer is an error, not a cut frame. */
	assert_true(agent_stats_encode(frame, AGENT_HDR_SIZE + 8, 7, &in) < 0);
	/* An empty payload: nothing known. */
	agent_stats_decode(frame, 0, &out);
	for (unsigned int i = 0; i < AGENT_STATS_COUNT; i++)
		assert_true(out.value[i] == AGENT_STATS_UNKNOWN);
}

/* HELLO's SEED: bytes, any content; a HELLO carrying one validates. */
static void test_hello_seed(void **state)
{
	uint8_t seed[32];
	struct agent_builder b;
	struct agent_attr_iter it;
	struct agent_attr a;
	int len, seen = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(i * 37); /* NULs included: not a string */
	assert_int_equal(agent_attr_kind(AGENT_ATTR_SEED), AGENT_KIND_BYTES);
	agent_build_begin(&b, buf, sizeof(buf), AGENT_MSG_HELLO, 1);
	agent_put_u32(&b, AGENT_ATTR_VERSION, AGENT_PROTO_VERSION);
	agent_put_bytes(&b, AGENT_ATTR_SEED, seed, sizeof(seed));
	len = agent_build_end(&b);
	assert_true(len > AGENT_HDR_SIZE);
	assert_int_equal(agent_payload_validate(buf + AGENT_HDR_SIZE,
						(size_t)len - AGENT_HDR_SIZE),
			 0);
	agent_attr_iter_init(&it, buf + AGENT_HDR_SIZE,
			     (size_t)len - AGENT_HDR_SIZE);
	while (agent_attr_next(&it, &a) == 1) {
		if (a.type != AGENT_ATTR_SEED)
			continue;
		assert_int_equal(a.len, sizeof(seed));
		assert_memory_equal(a.value, seed, sizeof(seed));
		seen++;
	}
	assert_int_equal(seen, 1);
	assert_true(sizeof(seed) >= AGENT_SEED_MIN &&
		    sizeof(seed) <= AGENT_SEED_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_round_trip),
		cmocka_unit_test(test_header_refuses_oversized_payload),
		cmocka_unit_test(test_build_and_read_attributes),
		cmocka_unit_test(test_builder_overflow_is_sticky),
		cmocka_unit_test(test_payload_cap_applies_to_builder),
		cmocka_unit_test(test_malformed_payloads_refused),
		cmocka_unit_test(test_nesting_is_bounded),
		cmocka_unit_test(test_exec_round_trip),
		cmocka_unit_test(test_exec_values_checked),
		cmocka_unit_test(test_exec_root),
		cmocka_unit_test(test_exec_cgroup),
		cmocka_unit_test(test_exec_pidns),
		cmocka_unit_test(test_cgroup_set),
		cmocka_unit_test(test_exec_counts_bounded),
		cmocka_unit_test(test_exec_limits_round_trip),
		cmocka_unit_test(test_exec_limits_checked),
		cmocka_unit_test(test_container_round_trip),
		cmocka_unit_test(test_container_values_checked),
		cmocka_unit_test(test_container_frame_checked),
		cmocka_unit_test(test_container_counts_bounded),
		cmocka_unit_test(test_streams_and_status),
		cmocka_unit_test(test_stats_round_trip),
		cmocka_unit_test(test_hello_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
