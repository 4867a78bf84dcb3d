// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of src/runtime/container_frame.c: a config.json as the host
 * parses it, and the CONTAINER frame console mode's guest init decodes
 * from it (src/abi/agent_proto.c), hold the same process and container;
 * what the guest would refuse fails here, with the reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "abi/agent_proto.h"
#include "runtime/container_frame.h"
#include "runtime/spec.h"

static const char *const config =
	"{\"ociVersion\":\"1.0.2\",\"process\":{\"terminal\":true,"
	"\"consoleSize\":{\"height\":40,\"width\":120},"
	"\"user\":{\"uid\":1000,\"gid\":100},"
	"\"args\":[\"sh\",\"-c\",\"echo hi\"],\"env\":[\"PATH=/bin\",\"A=b=c\"],"
	"\"cwd\":\"/work\",\"capabilities\":{\"bounding\":[\"CAP_KILL\"]},"
	"\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":512}],"
	"\"noNewPrivileges\":true},"
	"\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"hostname\":\"h1\","
	"\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
	"{\"destination\":\"/data\",\"type\":\"bind\","
	"\"source\":\"/srv/data\",\"options\":[\"rbind\",\"ro\"]},"
	"{\"destination\":\"/tmp\",\"type\":\"tmpfs\"}],"
	"\"linux\":{\"maskedPaths\":[\"/proc/kcore\"],"
	"\"readonlyPaths\":[\"/proc/sys\",\"/proc/bus\"],"
	"\"sysctl\":{\"net.ipv4.ip_forward\":\"1\"}}}";

static void parse(const char *text, struct oci_spec *s)
{
	char err[256] = "";

	assert_int_equal(
		oci_spec_parse(text, strlen(text), s, err, sizeof(err)), 0);
}

static void decode(const uint8_t *frame, size_t len, struct agent_container *c)
{
	char msg[160];

	assert_int_equal(
		agent_container_decode(frame, len, c, msg, sizeof(msg)), 0);
}

static void test_everything_oci_init_uses(void **state)
{
	static const uint8_t bpf[16] = { 6, 0, 0, 0, 0, 0, 0xff, 0x7f };
	struct agent_container c;
	struct oci_spec s;
	uint8_t *frame;
	size_t len;
	char err[256];

	parse(config, &s);
	assert_int_equal(rt_container_frame(&s, bpf, sizeof(bpf), &frame, &len,
					    err, sizeof(err)),
			 0);
	decode(frame, len, &c);
	assert_string_equal(c.process.argv[2], "echo hi");
	assert_null(c.process.argv[3]);
	assert_string_equal(c.process.envp[1], "A=b=c");
	assert_null(c.process.envp[2]);
	assert_string_equal(c.process.cwd, "/work");
	assert_int_equal(c.process.uid, 1000);
	assert_int_equal(c.process.gid, 100);
	assert_int_equal(c.process.flags, AGENT_EXEC_TTY | AGENT_EXEC_LIMITS);
	assert_int_equal(c.process.rows, 40);
	assert_int_equal(c.process.cols, 120);
	assert_int_equal(c.process.limits.nrlimits, 1);
	assert_int_equal(c.process.limits.rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(c.process.limits.rlimits[0].soft, 512);
	assert_int_equal(c.process.limits.rlimits[0].hard, 1024);
	assert_true(c.process.limits.has_caps);
	assert_int_equal(c.process.limits.caps[AGENT_CAP_BOUNDING], 1u << 5);
	assert_true(c.process.limits.no_new_privs);
	assert_int_equal(c.process.limits.seccomp_len, sizeof(bpf));
	assert_memory_equal(c.process.limits.seccomp, bpf, sizeof(bpf));
	assert_string_equal(c.hostname, "h1");
	assert_true(c.root_readonly);
	/* Every mount, in config.json's order: the runtime's m<i> shares. */
	assert_int_equal(c.nmounts, 3);
	assert_string_equal(c.mounts[0].destination, "/proc");
	assert_string_equal(c.mounts[0].source, "proc");
	assert_int_equal(c.mounts[0].flags, 0);
	assert_string_equal(c.mounts[1].source, "/srv/data");
	assert_int_equal(c.mounts[1].flags, AGENT_MOUNT_RO | AGENT_MOUNT_BIND);
	assert_string_equal(c.mounts[2].type, "tmpfs");
	assert_null(c.mounts[2].source);
	assert_int_equal(c.nsysctls, 1);
	assert_string_equal(c.sysctls[0].key, "net/ipv4/ip_forward");
	assert_string_equal(c.sysctls[0].value, "1");
	assert_string_equal(c.masked_paths[0], "/proc/kcore");
	assert_null(c.masked_paths[1]);
	assert_int_equal(c.nreadonly_paths, 2);
	assert_string_equal(c.readonly_paths[1], "/proc/bus");
	agent_container_free(&c);
	free(frame);
	oci_spec_free(&s);
}

static void test_least_config(void **state)
{
	static const char *const least =
		"{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,"
		"\"gid\":0},\"args\":[\"true\"],"
		"\"consoleSize\":{\"height\":40,\"width\":120}},"
		"\"root\":{\"path\":\"rootfs\"}}";
	struct agent_container c;
	struct oci_spec s;
	uint8_t *frame;
	size_t len;
	char err[256];

	parse(least, &s);
	assert_int_equal(
		rt_container_frame(&s, NULL, 0, &frame, &len, err, sizeof(err)),
		0);
	decode(frame, len, &c);
	/* No terminal: no window size (oci-init applied none either). */
	assert_int_equal(c.process.flags, 0);
	assert_int_equal(c.process.rows, 0);
	assert_null(c.process.envp);
	assert_null(c.process.cwd);
	assert_null(c.hostname);
	assert_false(c.root_readonly);
	assert_int_equal(c.nmounts, 0);
	assert_false(agent_limits_any(&c.process.limits));
	agent_container_free(&c);
	free(frame);
	oci_spec_free(&s);
}

/* What the guest init would refuse fails on the host, with the reason. */
static void test_refused_on_the_host(void **state)
{
	static const char *const no_args =
		"{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,"
		"\"gid\":0},\"args\":[]},\"root\":{\"path\":\"rootfs\"}}";
	struct oci_spec s;
	uint8_t *frame;
	size_t len;
	char err[256] = "", *big, *text;

	parse(no_args, &s);
	assert_int_equal(
		rt_container_frame(&s, NULL, 0, &frame, &len, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "argv[0]"));
	assert_null(frame);
	oci_spec_free(&s);

	/* Arguments beyond the frame's payload (AGENT_MAX_PAYLOAD). */
	big = malloc(60001);
	text = malloc(5 * 60004 + 200);
	assert_non_null(big);
	assert_non_null(text);
	memset(big, 'x', 60000);
	big[60000] = '\0';
	snprintf(text, 5 * 60004 + 200,
		 "{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,"
		 "\"gid\":0},\"args\":[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]},"
		 "\"root\":{\"path\":\"r\"}}",
		 big, big, big, big, big);
	parse(text, &s);
	assert_int_equal(
		rt_container_frame(&s, NULL, 0, &frame, &len, err, sizeof(err)),
		-EMSGSIZE);
	assert_non_null(strstr(err, "frame"));
	assert_null(frame);
	oci_spec_free(&s);
	free(big);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_everything_oci_init_uses),
		cmocka_unit_test(test_least_config),
		cmocka_unit_test(test_refused_on_the_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
