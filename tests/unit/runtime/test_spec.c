// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of src/runtime/spec.c: config.json as engines write it, and
 * hostile variations of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "runtime/spec.h"

/* Trimmed from what containerd 1.6 writes for `ctr run`. */
static const char *const full_config =
	"{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"terminal\":true,"
	"\"consoleSize\":{\"height\":40,\"width\":120},"
	"\"user\":{\"uid\":1000,\"gid\":100,\"additionalGids\":[10]},"
	"\"args\":[\"sh\",\"-c\",\"echo hi\"],\"env\":[\"PATH=/bin\"],"
	"\"cwd\":\"/work\",\"capabilities\":{\"bounding\":[\"CAP_KILL\"]},"
	"\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}],"
	"\"noNewPrivileges\":true},"
	"\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"hostname\":\"h1\","
	"\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\","
	"\"options\":[\"nosuid\"]},{\"destination\":\"/data\",\"type\":\"bind\","
	"\"source\":\"/srv/data\",\"options\":[\"rbind\",\"ro\"]}],"
	"\"annotations\":{\"io.hintvm.halt-poll\":\"off\",\"other\":\"x\"},"
	"\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],"
	"\"cpu\":{\"quota\":150000,\"period\":100000,\"cpus\":\"0-1\"},"
	"\"memory\":{\"limit\":536870912}},\"cgroupsPath\":\"/default/c1\","
	"\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\","
	"\"path\":\"/var/run/netns/cni-1\"},{\"type\":\"mount\"}],"
	"\"maskedPaths\":[\"/proc/kcore\"],\"readonlyPaths\":[\"/proc/sys\"]}}";

static bool has_warning(const struct oci_spec *s, const char *text)
{
	for (size_t i = 0; i < s->nwarnings; i++)
		if (strstr(s->warnings[i], text))
			return true;
	return false;
}

static void test_full_config(void **state)
{
	struct oci_spec s;
	char err[256] = "";

	assert_int_equal(oci_spec_parse(full_config, strlen(full_config), &s,
					err, sizeof(err)),
			 0);
	assert_true(s.has_process);
	assert_int_equal(s.process.nargs, 3);
	assert_string_equal(s.process.args[2], "echo hi");
	assert_null(s.process.args[3]);
	assert_string_equal(s.process.cwd, "/work");
	assert_int_equal(s.process.uid, 1000);
	assert_int_equal(s.process.gid, 100);
	assert_true(s.process.terminal);
	assert_int_equal(s.process.console_rows, 40);
	assert_int_equal(s.process.console_cols, 120);
	assert_true(s.root_readonly);
	assert_string_equal(s.root_path, "rootfs");
	assert_int_equal(s.nmounts, 2);
	assert_false(s.mounts[0].bind);
	assert_true(s.mounts[1].bind);
	assert_true(s.mounts[1].readonly);
	assert_string_equal(oci_spec_annotation(&s, "io.hintvm.halt-poll"),
			    "off");
	assert_int_equal(s.resources.cpu_quota, 150000);
	assert_int_equal(s.resources.cpu_period, 100000);
	assert_string_equal(s.resources.cpuset_cpus, "0-1");
	assert_int_equal(s.resources.memory_limit, 536870912);
	assert_string_equal(s.cgroups_path, "/default/c1");
	assert_true(s.has_netns);
	assert_string_equal(s.netns_path, "/var/run/netns/cni-1");
	/* The limits are read, not warned about. */
	assert_false(has_warning(&s, "process.rlimits"));
	assert_int_equal(s.process.nrlimits, 1);
	assert_int_equal(s.process.rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(s.process.rlimits[0].soft, 1024);
	assert_true(s.process.no_new_privileges);
	assert_true(s.process.has_capabilities);
	assert_int_equal(s.process.caps[OCI_CAP_BOUNDING], 1u << 5);
	assert_int_equal(s.process.caps[OCI_CAP_EFFECTIVE], 0);
	assert_int_equal(s.nmasked_paths, 1);
	assert_string_equal(s.masked_paths[0], "/proc/kcore");
	assert_int_equal(s.nreadonly_paths, 1);
	assert_string_equal(s.readonly_paths[0], "/proc/sys");
	/* What is not honoured is said, by name. */
	assert_true(has_warning(&s, "process.user.additionalGids"));
	/* containerd's deny-all device rule is no news. */
	assert_false(has_warning(&s, "devices"));
	oci_spec_free(&s);
}

static void expect_refused(const char *text, const char *why)
{
	struct oci_spec s;
	char err[256] = "";

	assert_int_not_equal(
		oci_spec_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	if (!strstr(err, why))
		fail_msg("\"%s\": error \"%s\" does not say \"%s\"", text, err,
			 why);
	oci_spec_free(&s);
}

static void test_refused(void **state)
{
	expect_refused("", "not valid JSON");
	expect_refused("[]", "not a JSON object");
	expect_refused("{\"ociVersion\":\"1\"} x", "JSON");
	expect_refused("{}", "ociVersion is missing");
	expect_refused("{\"ociVersion\":1}", "ociVersion is not a string");
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"args\":[1]}}",
		       "process.args[0] is not a string");
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"rel\"}}",
		       "not absolute");
	expect_refused(
		"{\"ociVersion\":\"1\",\"process\":{\"env\":[\"NOEQ\"]}}",
		"has no '='");
	expect_refused(
		"{\"ociVersion\":\"1\",\"process\":{\"user\":{\"uid\":-1}}}",
		"out of range");
	expect_refused(
		"{\"ociVersion\":\"1\",\"mounts\":[{\"destination\":\"x\"}]}",
		"not absolute");
	expect_refused(
		"{\"ociVersion\":\"1\",\"process\":{\"args\":[\"a\\u0000b\"]}}",
		"NUL");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"namespaces\":[{}]}}",
		       "has no type");
}

static void test_deep_nesting_refused(void **state)
{
	char text[4096];
	size_t n = 0;

	n += (size_t)snprintf(text, sizeof(text),
			      "{\"ociVersion\":\"1\",\"x\":");
	for (int i = 0; i < 100; i++)
		text[n++] = '[';
	for (int i = 0; i < 100; i++)
		text[n++] = ']';
	text[n++] = '}';
	text[n] = '\0';
	expect_refused(text, "not valid JSON");
}

static void test_unknown_members_warned(void **state)
{
	const char *text = "{\"ociVersion\":\"1\",\"vm\":{},\"hooks\":"
			   "{\"prestart\":[{\"path\":\"/bin/true\"}]},"
			   "\"linux\":{"
			   "\"newThing\":1}}";
	struct oci_spec s;
	char err[256];

	assert_int_equal(
		oci_spec_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	assert_true(has_warning(&s, "config.vm is not known"));
	assert_true(has_warning(&s, "hooks is not applied"));
	assert_true(has_warning(&s, "linux.newThing is not known"));
	oci_spec_free(&s);
}

static void test_process_json(void **state)
{
	const char *text = "{\"args\":[\"ls\"],\"env\":[\"A=b\"],\"cwd\":\"/\","
			   "\"terminal\":true}";
	struct oci_spec s;
	char err[256];

	assert_int_equal(
		oci_process_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	assert_int_equal(s.process.nargs, 1);
	assert_true(s.process.terminal);
	oci_spec_free(&s);
}

/* podman's shape: default errno, per-arch names, an argument filter. */
static const char *const seccomp_config =
	"{\"ociVersion\":\"1.0.0\",\"process\":{\"args\":[\"sh\"],"
	"\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":18446744073709551615,"
	"\"soft\":4096},{\"type\":\"RLIMIT_NPROC\",\"hard\":10,\"soft\":5}],"
	"\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\","
	"\"CAP_NEW_IN_2030\"],\"effective\":[\"CAP_CHOWN\"],"
	"\"permitted\":[\"CAP_CHOWN\",\"CAP_CHECKPOINT_RESTORE\"],"
	"\"ambient\":[]}},"
	"\"linux\":{\"sysctl\":{\"net.ipv4.ip_forward\":\"1\","
	"\"net/ipv4/conf/eth0.1/forwarding\":\"0\"},"
	"\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
	"\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],"
	"\"syscalls\":[{\"names\":[\"read\",\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\","
	"\"args\":[{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"unshare\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,"
	"\"comment\":\"x\"}]}}}";

static void test_limits(void **state)
{
	const struct oci_seccomp *sc;
	struct oci_spec s;
	char err[256] = "";

	assert_int_equal(oci_spec_parse(seccomp_config, strlen(seccomp_config),
					&s, err, sizeof(err)),
			 0);
	assert_int_equal(s.process.nrlimits, 2);
	assert_int_equal(s.process.rlimits[0].hard, UINT64_MAX);
	assert_int_equal(s.process.rlimits[1].resource, RLIMIT_NPROC);
	assert_int_equal(s.process.caps[OCI_CAP_BOUNDING],
			 (1u << 0) | (1u << 5));
	assert_int_equal(s.process.caps[OCI_CAP_PERMITTED],
			 1ull | (1ull << 40));
	assert_true(has_warning(&s, "unknown capability \"CAP_NEW_IN_2030\""));
	assert_false(s.process.no_new_privileges);
	assert_int_equal(s.nsysctls, 2);
	assert_string_equal(s.sysctls[0].key, "net/ipv4/ip_forward");
	assert_string_equal(s.sysctls[1].key,
			    "net/ipv4/conf/eth0.1/forwarding");
	sc = &s.seccomp;
	assert_true(sc->present);
	assert_int_equal(sc->default_action, OCI_SCMP_ERRNO);
	assert_int_equal(sc->default_errno, 38);
	assert_int_equal(sc->narchs, 3);
	assert_string_equal(sc->archs[0], "x86_64");
	assert_string_equal(sc->archs[2], "x32");
	assert_int_equal(sc->nrules, 3);
	assert_int_equal(sc->rules[0].nnames, 2);
	assert_string_equal(sc->rules[0].names[1], "write");
	assert_int_equal(sc->rules[1].nargs, 1);
	assert_int_equal(sc->rules[1].args[0].value, 8);
	assert_int_equal(sc->rules[1].args[0].op, OCI_SCMP_CMP_EQ);
	assert_int_equal(sc->rules[2].action, OCI_SCMP_ERRNO);
	assert_int_equal(sc->rules[2].errno_ret, 1);
	assert_false(has_warning(&s, "seccomp"));
	oci_spec_free(&s);
}

static void test_limits_refused(void **state)
{
	/* Every refusal names the field and the value. */
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"rlimits\":"
		       "[{\"type\":\"RLIMIT_BOGUS\",\"soft\":1,\"hard\":1}]}}",
		       "process.rlimits[0].type \"RLIMIT_BOGUS\"");
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"rlimits\":"
		       "[{\"type\":\"RLIMIT_CORE\",\"soft\":2,\"hard\":1}]}}",
		       "soft 2 is above hard 1");
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"rlimits\":"
		       "[{\"type\":\"RLIMIT_CORE\",\"soft\":-1,\"hard\":1}]}}",
		       "process.rlimits[0].soft is negative");
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"rlimits\":"
		       "[{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":1},"
		       "{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":1}]}}",
		       "listed twice");
	expect_refused("{\"ociVersion\":\"1\",\"process\":{\"capabilities\":"
		       "{\"bounding\":[7]}}}",
		       "process.capabilities.bounding[0] is not a string");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"maskedPaths\":"
		       "[\"/proc/../etc\"]}}",
		       "linux.maskedPaths[0] \"/proc/../etc\"");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"readonlyPaths\":"
		       "[\"proc\"]}}",
		       "linux.readonlyPaths[0] \"proc\"");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"sysctl\":"
		       "{\"../../etc/x\":\"1\"}}}",
		       "\"../../etc/x\" is not a sysctl name");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"sysctl\":"
		       "{\"kernel.x\":1}}}",
		       "linux.sysctl.kernel.x is not a string");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":{}}}",
		       "linux.seccomp.defaultAction is missing");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		       "{\"defaultAction\":\"SCMP_ACT_MAYBE\"}}}",
		       "linux.seccomp.defaultAction: \"SCMP_ACT_MAYBE\"");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		       "{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}}}",
		       "SCMP_ACT_NOTIFY is not supported");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		       "{\"defaultAction\":\"SCMP_ACT_ALLOW\","
		       "\"architectures\":[\"SCMP_ARCH_VAX\"]}}}",
		       "linux.seccomp.architectures[0]: \"SCMP_ARCH_VAX\"");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		       "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
		       "[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_X\"}]}}}",
		       "linux.seccomp.syscalls[0].action: \"SCMP_ACT_X\"");
	expect_refused("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		       "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
		       "[{\"names\":[],\"action\":\"SCMP_ACT_ERRNO\"}]}}}",
		       "linux.seccomp.syscalls[0].names is missing or empty");
	expect_refused(
		"{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
		"[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		"\"args\":[{\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}}}",
		"linux.seccomp.syscalls[0].args[0].index = 6 is out of range");
	expect_refused(
		"{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":"
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
		"[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		"\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_ABOUT\"}]}]}}}",
		"args[0].op \"SCMP_CMP_ABOUT\" is not a seccomp operator");
}

/* exec's process.json carries its own limits. */
static void test_process_json_limits(void **state)
{
	const char *text =
		"{\"args\":[\"id\"],\"noNewPrivileges\":true,"
		"\"capabilities\":{\"bounding\":[],\"effective\":[]},"
		"\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":64,"
		"\"soft\":32}]}";
	struct oci_spec s;
	char err[256];

	assert_int_equal(
		oci_process_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	assert_true(s.process.no_new_privileges);
	assert_true(s.process.has_capabilities);
	assert_int_equal(s.process.caps[OCI_CAP_BOUNDING], 0);
	assert_int_equal(s.process.nrlimits, 1);
	assert_int_equal(s.process.rlimits[0].soft, 32);
	oci_spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_config),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_deep_nesting_refused),
		cmocka_unit_test(test_unknown_members_warned),
		cmocka_unit_test(test_process_json),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_limits_refused),
		cmocka_unit_test(test_process_json_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
