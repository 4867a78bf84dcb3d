// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pods (src/shim/pod_spec.c): the role containerd's CRI plugin gives a
 * container in its config.json annotations, refused with the reason when
 * it makes no sense, and the two rewrites of a bundle's config.json a pod
 * needs (the sandbox's share, an app container's process).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "shim/pod.h"

struct rt_globals rt;

static int parse(const char *json, struct pod_info *info, char *err)
{
	return pod_info_parse(json, strlen(json), info, err, 256);
}

static void test_roles(void **state)
{
	struct pod_info info;
	char err[256] = "";

	(void)state;
	/* ctr run: no annotations, a task of its own. */
	assert_int_equal(parse("{\"ociVersion\":\"1.0.2\"}", &info, err), 0);
	assert_int_equal(info.role, POD_NONE);
	assert_int_equal(parse("{\"annotations\":{\"a\":\"b\"}}", &info, err),
			 0);
	assert_int_equal(info.role, POD_NONE);
	/* What containerd 1.6's CRI writes for a sandbox and a container. */
	assert_int_equal(parse("{\"annotations\":{\"" POD_ANN_TYPE
			       "\":\"sandbox\",\"" POD_ANN_SANDBOX_ID
			       "\":\"4f1e\"}}",
			       &info, err),
			 0);
	assert_int_equal(info.role, POD_SANDBOX);
	assert_string_equal(info.sandbox_id, "4f1e");
	assert_int_equal(
		parse("{\"annotations\":{\"" POD_ANN_TYPE
		      "\":\"container\",\"" POD_ANN_SANDBOX_ID
		      "\":\"4f1e\",\"io.kubernetes.cri.container-name\":\"c\"}}",
		      &info, err),
		0);
	assert_int_equal(info.role, POD_CONTAINER);
	assert_string_equal(info.sandbox_id, "4f1e");
}

#define CTR_ANN                            \
	"\"annotations\":{\"" POD_ANN_TYPE \
	"\":\"container\",\"" POD_ANN_SANDBOX_ID "\":\"4f1e\"}"

/* The container's memory limit: what its guest cgroup's memory.max gets. */
static void test_memory_limit(void **state)
{
	struct pod_info info;
	char err[256] = "";

	(void)state;
	/* What containerd writes for memory_limit_in_bytes 33554432. */
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"limit\":33554432}}}}",
		      &info, err),
		0);
	assert_int_equal(info.role, POD_CONTAINER);
	assert_true(info.memory_limit == 33554432ull);
	/* Larger than 32 bits. */
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"limit\":8589934592}}}}",
		      &info, err),
		0);
	assert_true(info.memory_limit == 8589934592ull);
	/* None, null, runc's -1 and 0: no limit. */
	assert_int_equal(parse("{" CTR_ANN "}", &info, err), 0);
	assert_true(info.memory_limit == 0);
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"limit\":null}}}}",
		      &info, err),
		0);
	assert_true(info.memory_limit == 0);
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"limit\":-1}}}}",
		      &info, err),
		0);
	assert_true(info.memory_limit == 0);
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"swap\":5}}}}",
		      &info, err),
		0);
	assert_true(info.memory_limit == 0);
	/* Not a number: refused, naming the value. */
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"limit\":\"32M\"}}}}",
		      &info, err),
		-EINVAL);
	assert_non_null(strstr(err, "linux.resources.memory.limit \"32M\""));
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"resources\":{\"memory\":{\"limit\":1.5}}}}",
		      &info, err),
		-EINVAL);
	assert_non_null(strstr(err, "expected an integer"));
}

/* The CRI's PID namespace modes, as containerd 1.6 writes them. */
static void test_pidns(void **state)
{
	struct pod_info info;
	char err[256] = "";

	(void)state;
	/* CONTAINER: "pid" without a path. */
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"namespaces\":[{\"type\":\"ipc\","
		      "\"path\":\"/proc/9/ns/ipc\"},{\"type\":\"pid\"},"
		      "{\"type\":\"mount\"}]}}",
		      &info, err),
		0);
	assert_true(info.own_pidns);
	/* POD: the sandbox's, by path. */
	assert_int_equal(parse("{" CTR_ANN
			       ",\"linux\":{\"namespaces\":[{\"type\":\"pid\","
			       "\"path\":\"/proc/9/ns/pid\"}]}}",
			       &info, err),
			 0);
	assert_false(info.own_pidns);
	/* NODE: no "pid" entry at all; and no namespaces. */
	assert_int_equal(
		parse("{" CTR_ANN
		      ",\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]}}",
		      &info, err),
		0);
	assert_false(info.own_pidns);
	assert_int_equal(parse("{" CTR_ANN "}", &info, err), 0);
	assert_false(info.own_pidns);
}

/* Update's resources: what containerd 1.6 marshals for the CRI's
 * UpdateContainerResources (runtime-spec LinuxResources as JSON). */
static void test_resources(void **state)
{
	struct pod_resources r;
	char err[256] = "";
	const char *j;

	(void)state;
	j = "{\"memory\":{\"limit\":50331648,\"swap\":50331648},"
	    "\"cpu\":{\"shares\":512,\"quota\":50000,\"period\":100000}}";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256), 0);
	assert_true(r.memory_limit == 50331648ull);
	assert_true(r.set_cpu && r.cpu_quota == 50000 &&
		    r.cpu_period == 100000);
	/* A quota alone: the default period; -1 is no limit. */
	j = "{\"cpu\":{\"quota\":-1}}";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256), 0);
	assert_true(r.set_cpu && r.cpu_quota == 0 && r.cpu_period == 100000);
	assert_true(r.memory_limit == 0);
	/* Memory alone. */
	j = "{\"memory\":{\"limit\":1073741824}}";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256), 0);
	assert_false(r.set_cpu);
	assert_true(r.memory_limit == 1073741824ull);

	/* Refused, saying why. */
	j = "{\"cpu\":{\"shares\":2}}";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256),
			 -EINVAL);
	assert_non_null(strstr(err, "neither a memory limit"));
	j = "{\"cpu\":{\"quota\":1000,\"period\":10}}";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256),
			 -EINVAL);
	assert_non_null(strstr(err, "cpu.period 10"));
	j = "{\"memory\":{\"limit\":\"1G\"}}";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256),
			 -EINVAL);
	assert_non_null(strstr(err, "must be integers"));
	j = "[1]";
	assert_int_equal(pod_resources_parse(j, strlen(j), &r, err, 256),
			 -EINVAL);
	assert_int_equal(pod_resources_parse("{", 1, &r, err, 256), -EINVAL);
}

static void test_bad_annotations(void **state)
{
	struct pod_info info;
	char err[256];

	(void)state;
	assert_int_equal(parse("{\"annotations\":{\"" POD_ANN_TYPE
			       "\":\"pause\",\"" POD_ANN_SANDBOX_ID
			       "\":\"x\"}}",
			       &info, err),
			 -EINVAL);
	assert_non_null(strstr(
		err, "\"pause\": expected \"sandbox\" or \"container\""));
	assert_int_equal(info.role, POD_NONE);
	/* A container without its pod, or with a pod id unfit for a path. */
	assert_int_equal(parse("{\"annotations\":{\"" POD_ANN_TYPE
			       "\":\"container\"}}",
			       &info, err),
			 -EINVAL);
	assert_non_null(strstr(err, POD_ANN_SANDBOX_ID " \"\": expected"));
	assert_int_equal(parse("{\"annotations\":{\"" POD_ANN_TYPE
			       "\":\"container\",\"" POD_ANN_SANDBOX_ID
			       "\":\"../etc\"}}",
			       &info, err),
			 -EINVAL);
	assert_non_null(
		strstr(err, "\"../etc\": expected the pod's sandbox id"));
	assert_int_equal(parse("{\"annotations\":{\"" POD_ANN_TYPE
			       "\":7,\"" POD_ANN_SANDBOX_ID "\":\"x\"}}",
			       &info, err),
			 -EINVAL);
	assert_int_equal(parse("[1,2]", &info, err), -EINVAL);
	assert_non_null(strstr(err, "expected a JSON object"));
	assert_int_equal(parse("{\"annotations\":", &info, err), -EINVAL);
}

static char bundle[64];

static void write_spec(const char *text)
{
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static int setup(void **state)
{
	(void)state;
	snprintf(bundle, sizeof(bundle), "/tmp/hintvm-test-pod-XXXXXX");
	return mkdtemp(bundle) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	unlink(path);
	snprintf(path, sizeof(path), "%s/process.json", bundle);
	unlink(path);
	rmdir(bundle);
	return 0;
}

static void test_read_bundle(void **state)
{
	struct pod_info info;
	char err[256];

	(void)state;
	/* No config.json: not a pod's (containerd's start always has one). */
	assert_int_equal(pod_info_read(bundle, &info, err, sizeof(err)), 0);
	assert_int_equal(info.role, POD_NONE);
	write_spec("{\"annotations\":{\"" POD_ANN_TYPE
		   "\":\"container\",\"" POD_ANN_SANDBOX_ID "\":\"sb1\"}}");
	assert_int_equal(pod_info_read(bundle, &info, err, sizeof(err)), 0);
	assert_int_equal(info.role, POD_CONTAINER);
	assert_string_equal(info.sandbox_id, "sb1");
}

static void test_add_share(void **state)
{
	char path[128], err[256];
	json_object *spec, *mounts, *m, *v;

	(void)state;
	write_spec(
		"{\"process\":{\"args\":[\"/pause\"]},\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}]}");
	assert_int_equal(pod_spec_add_share(bundle,
					    "/run/hintvm-shim/pods/k8s.io/sb1",
					    err, sizeof(err)),
			 0);
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	spec = json_object_from_file(path);
	assert_non_null(spec);
	assert_true(json_object_object_get_ex(spec, "mounts", &mounts));
	/* The spec's own mounts first, in order; the share last. */
	assert_int_equal(json_object_array_length(mounts), 2);
	m = json_object_array_get_idx(mounts, 1);
	assert_true(json_object_object_get_ex(m, "destination", &v));
	assert_string_equal(json_object_get_string(v), POD_GUEST_DIR);
	assert_true(json_object_object_get_ex(m, "source", &v));
	assert_string_equal(json_object_get_string(v),
			    "/run/hintvm-shim/pods/k8s.io/sb1");
	assert_true(json_object_object_get_ex(m, "type", &v));
	assert_string_equal(json_object_get_string(v), "bind");
	assert_true(json_object_object_get_ex(spec, "process", &v));
	/* The CRI's read-only sandbox root is made writable (in the guest
	 * only), or the share's mount point could not be made. */
	assert_true(json_object_object_get_ex(spec, "root", &m));
	assert_true(json_object_object_get_ex(m, "readonly", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(m, "path", &v));
	assert_string_equal(json_object_get_string(v), "rootfs");
	json_object_put(spec);
	/* mounts that are not an array: the spec's fault, named. */
	write_spec("{\"mounts\":{}}");
	assert_int_equal(pod_spec_add_share(bundle, "/x", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "\"mounts\" is not an array"));
}

static void test_write_process(void **state)
{
	char in[128], out[128], err[256];
	json_object *p, *v;

	(void)state;
	write_spec(
		"{\"process\":{\"args\":[\"sh\",\"-c\",\"echo hi\"],\"cwd\":\"/\",\"env\":[\"PATH=/bin\"]},\"root\":{\"path\":\"rootfs\"}}");
	snprintf(in, sizeof(in), "%s", bundle);
	snprintf(out, sizeof(out), "%s/process.json", bundle);
	assert_int_equal(pod_spec_write_process(in, out, err, sizeof(err)), 0);
	p = json_object_from_file(out);
	assert_non_null(p);
	assert_true(json_object_object_get_ex(p, "args", &v));
	assert_int_equal(json_object_array_length(v), 3);
	assert_false(json_object_object_get_ex(p, "root", &v));
	json_object_put(p);
	write_spec("{\"root\":{\"path\":\"rootfs\"}}");
	assert_int_equal(pod_spec_write_process(in, out, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "expected a \"process\" object"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_bad_annotations),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_pidns),
		cmocka_unit_test(test_resources),
		cmocka_unit_test_setup_teardown(test_read_bundle, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_add_share, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_process, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
