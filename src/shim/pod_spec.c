// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What containerd's CRI plugin tells a shim about pods, in the bundle's
 * config.json: the container's role (annotation
 * io.kubernetes.cri.container-type, "sandbox" or "container") and its
 * pod (io.kubernetes.cri.sandbox-id). And the two rewrites a pod needs:
 * the sandbox's spec gains the pod's share, an app container's process
 * becomes a process spec for the runtime's exec (pod.c).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "runtime/state.h"
#include "shim/pod.h"

/* config.json is read whole; a larger one is no spec of ours. */
#define POD_SPEC_MAX (4u << 20)

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static json_object *parse_json(const char *json, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;

	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, json, (int)len);
	if (o && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* SPEC's linux.resources.memory.limit (what the CRI's
 * memory_limit_in_bytes becomes) into *LIMIT; absent or below 1: 0. */
static int memory_limit(json_object *spec, unsigned long long *limit, char *err,
			size_t errlen)
{
	json_object *linux_, *res, *mem, *v;
	int64_t n;

	*limit = 0;
	if (!json_object_object_get_ex(spec, "linux", &linux_) ||
	    !json_object_object_get_ex(linux_, "resources", &res) ||
	    !json_object_object_get_ex(res, "memory", &mem) ||
	    !json_object_object_get_ex(mem, "limit", &v) ||
	    json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return fail(
			err, errlen, -EINVAL,
			"linux.resources.memory.limit %s: expected an integer (bytes)",
			json_object_to_json_string(v));
	n = json_object_get_int64(v);
	*limit = n > 0 ? (unsigned long long)n : 0;
	return 0;
}

/* SPEC's linux.namespaces: a "pid" entry without a path is a namespace
 * of the container's own. */
static bool own_pidns(json_object *spec)
{
	json_object *linux_, *nss, *ns, *v;

	if (!json_object_object_get_ex(spec, "linux", &linux_) ||
	    !json_object_object_get_ex(linux_, "namespaces", &nss) ||
	    !json_object_is_type(nss, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(nss); i++) {
		ns = json_object_array_get_idx(nss, i);
		if (!json_object_object_get_ex(ns, "type", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    strcmp(json_object_get_string(v), "pid"))
			continue;
		return !json_object_object_get_ex(ns, "path", &v) ||
		       !json_object_is_type(v, json_type_string) ||
		       !*json_object_get_string(v);
	}
	return false;
}

int pod_info_parse(const char *json, size_t len, struct pod_info *out,
		   char *err, size_t errlen)
{
	json_object *spec, *ann, *v;
	const char *type, *sid;
	int ret = 0;

	*out = (struct pod_info){ .role = POD_NONE };
	if (len > POD_SPEC_MAX)
		return fail(err, errlen, -EINVAL,
			    "config.json: %zu bytes, expected at most %u", len,
			    POD_SPEC_MAX);
	spec = parse_json(json, len);
	if (!spec || !json_object_is_type(spec, json_type_object)) {
		json_object_put(spec);
		return fail(err, errlen, -EINVAL,
			    "config.json: expected a JSON object");
	}
	if (!json_object_object_get_ex(spec, "annotations", &ann) ||
	    !json_object_object_get_ex(ann, POD_ANN_TYPE, &v))
		goto out; /* not a CRI container */
	type = json_object_get_string(v);
	if (!json_object_is_type(v, json_type_string) ||
	    (strcmp(type, "sandbox") && strcmp(type, "container"))) {
		ret = fail(err, errlen, -EINVAL,
			   "annotation " POD_ANN_TYPE
			   " \"%s\": expected \"sandbox\" or \"container\"",
			   type ? type : "");
		goto out;
	}
	sid = json_object_object_get_ex(ann, POD_ANN_SANDBOX_ID, &v) &&
			      json_object_is_type(v, json_type_string)
		      ? json_object_get_string(v)
		      : NULL;
	if (!sid || !rt_valid_id(sid)) {
		ret = fail(
			err, errlen, -EINVAL,
			"annotation " POD_ANN_SANDBOX_ID
			" \"%s\": expected the pod's sandbox id (1 to %d of [A-Za-z0-9_.+-])",
			sid ? sid : "", RT_MAX_ID);
		goto out;
	}
	if (!strcmp(type, "container")) {
		ret = memory_limit(spec, &out->memory_limit, err, errlen);
		if (ret)
			goto out;
		out->own_pidns = own_pidns(spec);
	}
	out->role = strcmp(type, "sandbox") ? POD_CONTAINER : POD_SANDBOX;
	snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sid);
out:
	json_object_put(spec);
	return ret;
}

/* O's integer KEY into *V: 0 absent (or null), 1 found, -1 not an
 * integer. */
static int get_int(json_object *o, const char *key, int64_t *v)
{
	json_object *x;

	if (!o || !json_object_object_get_ex(o, key, &x) ||
	    json_object_is_type(x, json_type_null))
		return 0;
	if (!json_object_is_type(x, json_type_int))
		return -1;
	*v = json_object_get_int64(x);
	return 1;
}

int pod_resources_parse(const char *json, size_t len, struct pod_resources *out,
			char *err, size_t errlen)
{
	json_object *res, *mem = NULL, *cpu = NULL;
	int64_t limit = 0, quota = 0, period = 0;
	int has_limit, has_quota, has_period, ret = 0;

	*out = (struct pod_resources){ 0 };
	res = len <= POD_SPEC_MAX ? parse_json(json, len) : NULL;
	if (!res || !json_object_is_type(res, json_type_object)) {
		json_object_put(res);
		return fail(
			err, errlen, -EINVAL,
			"resources: expected a JSON object (LinuxResources)");
	}
	json_object_object_get_ex(res, "memory", &mem);
	json_object_object_get_ex(res, "cpu", &cpu);
	has_limit = get_int(mem, "limit", &limit);
	has_quota = get_int(cpu, "quota", &quota);
	has_period = get_int(cpu, "period", &period);
	if (has_limit < 0 || has_quota < 0 || has_period < 0) {
		ret = fail(
			err, errlen, -EINVAL,
			"resources: memory.limit, cpu.quota and cpu.period must be integers");
		goto out;
	}
	if (has_period && (period < 1000 || period > 1000000)) {
		ret = fail(
			err, errlen, -EINVAL,
			"resources: cpu.period %lld: expected 1000 to 1000000 (us)",
			(long long)period);
		goto out;
	}
	out->memory_limit = limit > 0 ? (unsigned long long)limit : 0;
	if (has_quota || has_period) {
		out->set_cpu = true;
		out->cpu_quota = quota > 0 ? (unsigned long long)quota : 0;
		out->cpu_period =
			has_period ? (unsigned long long)period : 100000;
	}
	if (!out->memory_limit && !out->set_cpu)
		ret = fail(
			err, errlen, -EINVAL,
			"resources: neither a memory limit nor a cpu quota or period (what this runtime applies)");
out:
	json_object_put(res);
	return ret;
}

/* BUNDLE/config.json as text (malloc'd), or NULL with errno set. */
static char *read_spec(const char *bundle, size_t *len)
{
	char path[PATH_MAX + 16];
	size_t cap = 64 << 10, n = 0;
	char *buf = NULL, *nb;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || n == cap) {
			if (buf)
				cap *= 2;
			if (cap > POD_SPEC_MAX + 1u ||
			    !(nb = realloc(buf, cap))) {
				errno = EFBIG;
				goto fail;
			}
			buf = nb;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0)
			goto fail;
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	*len = n;
	return buf;
fail:
	got = errno;
	free(buf);
	close(fd);
	errno = (int)got;
	return NULL;
}

int pod_info_read(const char *bundle, struct pod_info *out, char *err,
		  size_t errlen)
{
	size_t len = 0;
	char *text = read_spec(bundle, &len);
	int ret;

	*out = (struct pod_info){ .role = POD_NONE };
	if (!text)
		return errno == ENOENT
			       ? 0
			       : fail(err, errlen, -errno, "%s/config.json: %s",
				      bundle, strerror(errno));
	ret = pod_info_parse(text, len, out, err, errlen);
	free(text);
	return ret;
}

static json_object *load_spec(const char *bundle, char *err, size_t errlen)
{
	size_t len = 0;
	char *text = read_spec(bundle, &len);
	json_object *spec;

	if (!text) {
		fail(err, errlen, -errno, "%s/config.json: %s", bundle,
		     strerror(errno));
		return NULL;
	}
	spec = parse_json(text, len);
	free(text);
	if (!spec || !json_object_is_type(spec, json_type_object)) {
		json_object_put(spec);
		fail(err, errlen, -EINVAL,
		     "%s/config.json: expected a JSON object", bundle);
		return NULL;
	}
	return spec;
}

/* O written to PATH whole (a temporary file renamed over it). */
static int save_json(json_object *o, const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 32];

	snprintf(tmp, sizeof(tmp), "%s.hintvm-tmp", path);
	if (json_object_to_file_ext(tmp, o, JSON_C_TO_STRING_PLAIN) ||
	    rename(tmp, path)) {
		int e = errno ? errno : EIO;

		unlink(tmp);
		return fail(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	return 0;
}

int pod_spec_add_share(const char *bundle, const char *share, char *err,
		       size_t errlen)
{
	json_object *spec = load_spec(bundle, err, errlen), *mounts, *m, *opts,
		    *root;
	char path[PATH_MAX + 16];
	int ret;

	if (!spec)
		return -EINVAL;
	if (!json_object_object_get_ex(spec, "mounts", &mounts)) {
		mounts = json_object_new_array();
		json_object_object_add(spec, "mounts", mounts);
	}
	if (!json_object_is_type(mounts, json_type_array)) {
		json_object_put(spec);
		return fail(err, errlen, -EINVAL,
			    "%s/config.json: \"mounts\" is not an array",
			    bundle);
	}
	m = json_object_new_object();
	opts = json_object_new_array();
	json_object_array_add(opts, json_object_new_string("rbind"));
	json_object_array_add(opts, json_object_new_string("rw"));
	json_object_object_add(m, "destination",
			       json_object_new_string(POD_GUEST_DIR));
	json_object_object_add(m, "type", json_object_new_string("bind"));
	json_object_object_add(m, "source", json_object_new_string(share));
	json_object_object_add(m, "options", opts);
	json_object_array_add(mounts, m);
	/*
	 * containerd's CRI makes a sandbox's root read-only (a runc pause
	 * needs nothing more), and the guest mounts a read-only root's
	 * overlay read-only before the mounts, so no mount point could be
	 * made for the share in the pause image: seen in the oci tier as
	 * the containers' roots missing. The root's writes go to the guest's
	 * tmpfs upper layer, never to the host.
	 */
	if (json_object_object_get_ex(spec, "root", &root) &&
	    json_object_is_type(root, json_type_object))
		json_object_object_add(root, "readonly",
				       json_object_new_boolean(0));
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	ret = save_json(spec, path, err, errlen);
	json_object_put(spec);
	return ret;
}

int pod_spec_write_process(const char *bundle, const char *out, char *err,
			   size_t errlen)
{
	json_object *spec = load_spec(bundle, err, errlen), *process;
	int ret;

	if (!spec)
		return -EINVAL;
	if (!json_object_object_get_ex(spec, "process", &process) ||
	    !json_object_is_type(process, json_type_object)) {
		json_object_put(spec);
		return fail(err, errlen, -EINVAL,
			    "%s/config.json: expected a \"process\" object",
			    bundle);
	}
	ret = save_json(process, out, err, errlen);
	json_object_put(spec);
	return ret;
}
