// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * config.json -> struct oci_spec. Each member is looked up by name, its
 * type checked, strings and arrays bounded; members the runtime does not
 * act on produce a warning naming them. Nothing here trusts the bundle.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "spec.h"

struct parse_ctx {
	struct oci_spec *spec;
	char *err;
	size_t errlen;
};

static int fail(struct parse_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct parse_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void warn(struct parse_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(struct parse_ctx *c, const char *fmt, ...)
{
	struct oci_spec *s = c->spec;
	va_list ap;
	char *msg;

	if (s->nwarnings == OCI_MAX_WARNINGS) {
		s->warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) >= 0)
		s->warnings[s->nwarnings++] = msg;
	va_end(ap);
}

/* A string member: NULL when absent; -EINVAL when of another type. */
static int get_string(struct parse_ctx *c, struct json_object *obj,
		      const char *where, const char *key, char **out)
{
	struct json_object *v;
	const char *str;
	size_t len;

	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return fail(c, "%s.%s is not a string", where, key);
	str = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len > OCI_MAX_STRING || strlen(str) != len)
		return fail(c, "%s.%s is longer than %u bytes or holds a NUL",
			    where, key, OCI_MAX_STRING);
	free(*out);
	*out = strdup(str);
	return *out ? 0 : -ENOMEM;
}

static int get_bool(struct parse_ctx *c, struct json_object *obj,
		    const char *where, const char *key, bool *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return fail(c, "%s.%s is not a boolean", where, key);
	*out = json_object_get_boolean(v);
	return 0;
}

/* An integer member within [MIN, MAX]. */
static int get_int(struct parse_ctx *c, struct json_object *obj,
		   const char *where, const char *key, int64_t min, int64_t max,
		   int64_t *out)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return fail(c, "%s.%s is not an integer", where, key);
	errno = 0;
	n = json_object_get_int64(v);
	if (errno || n < min || n > max)
		return fail(c, "%s.%s = %lld is out of range", where, key,
			    (long long)n);
	*out = n;
	return 0;
}

/* An object member: NULL when absent or null; -EINVAL for another type. */
static int get_object(struct parse_ctx *c, struct json_object *obj,
		      const char *where, const char *key,
		      struct json_object **out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return fail(c, "%s.%s is not an object", where, key);
	*out = v;
	return 0;
}

static int get_array(struct parse_ctx *c, struct json_object *obj,
		     const char *where, const char *key, size_t max,
		     struct json_object **out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return fail(c, "%s.%s is not an array", where, key);
	if (json_object_array_length(v) > max)
		return fail(c, "%s.%s has more than %zu entries", where, key,
			    max);
	*out = v;
	return 0;
}

/* An array of strings -> NULL-terminated vector. */
static int get_string_array(struct parse_ctx *c, struct json_object *obj,
			    const char *where, const char *key, size_t max,
			    char ***out, size_t *count)
{
	struct json_object *arr;
	size_t n;
	char **vec;
	int ret = get_array(c, obj, where, key, max, &arr);

	if (ret || !arr)
		return ret;
	n = json_object_array_length(arr);
	vec = calloc(n + 1, sizeof(*vec));
	if (!vec)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *str;

		if (!json_object_is_type(e, json_type_string)) {
			ret = fail(c, "%s.%s[%zu] is not a string", where, key,
				   i);
			goto out_free;
		}
		str = json_object_get_string(e);
		if ((size_t)json_object_get_string_len(e) > OCI_MAX_STRING ||
		    strlen(str) != (size_t)json_object_get_string_len(e)) {
			ret = fail(c, "%s.%s[%zu] is too long or holds a NUL",
				   where, key, i);
			goto out_free;
		}
		vec[i] = strdup(str);
		if (!vec[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	*out = vec;
	if (count)
		*count = n;
	return 0;
out_free:
	for (size_t i = 0; i < n; i++)
		free(vec[i]);
	free(vec);
	return ret;
}

static void free_vector(char **vec)
{
	if (!vec)
		return;
	for (char **p = vec; *p; p++)
		free(*p);
	free(vec);
}

/* Warn about each member of OBJ whose name is not in KNOWN (NULL-ended). */
static void warn_unknown(struct parse_ctx *c, struct json_object *obj,
			 const char *where, const char *const *known)
{
	json_object_object_foreach(obj, key, val)
	{
		bool found = false;

		(void)val;
		for (const char *const *k = known; *k && !found; k++)
			found = !strcmp(*k, key);
		if (!found)
			warn(c, "%s.%s is not known to hintvm-runtime: ignored",
			     where, key);
	}
}

/* Members hintvm reads but that mean nothing in a VM: warn when set. */
static void warn_not_applicable(struct parse_ctx *c, struct json_object *obj,
				const char *where, const char *key,
				const char *why)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return;
	if (json_object_is_type(v, json_type_array) &&
	    !json_object_array_length(v))
		return;
	if (json_object_is_type(v, json_type_object) &&
	    !json_object_object_length(v))
		return;
	if (json_object_is_type(v, json_type_string) &&
	    !json_object_get_string_len(v))
		return;
	warn(c, "%s.%s is not applied: %s", where, key, why);
}

/* ---- process limits: rlimits, capabilities ------------------------- */

static const char *const cap_names[] = {
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

const char *oci_cap_name(unsigned int cap)
{
	return cap < sizeof(cap_names) / sizeof(cap_names[0]) ? cap_names[cap]
							      : NULL;
}

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
	{ "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
	{ "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_STACK", RLIMIT_STACK },
	{ "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
	{ "RLIMIT_AS", RLIMIT_AS },
	{ "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
	{ "RLIMIT_RTTIME", RLIMIT_RTTIME },
};

/* A non-negative integer member up to UINT64_MAX (RLIM_INFINITY). */
static int get_u64(struct parse_ctx *c, struct json_object *obj,
		   const char *where, const char *key, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return fail(c, "%s.%s is missing", where, key);
	if (!json_object_is_type(v, json_type_int))
		return fail(c, "%s.%s is not an integer", where, key);
	errno = 0;
	if (json_object_get_int64(v) < 0)
		return fail(c, "%s.%s is negative", where, key);
	*out = json_object_get_uint64(v);
	if (errno)
		return fail(c, "%s.%s is out of range", where, key);
	return 0;
}

static int parse_rlimits(struct parse_ctx *c, struct json_object *proc)
{
	static const char *const known[] = { "type", "soft", "hard", NULL };
	struct oci_process *p = &c->spec->process;
	struct json_object *arr;
	int ret =
		get_array(c, proc, "process", "rlimits", OCI_MAX_RLIMITS, &arr);

	if (ret || !arr)
		return ret;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct oci_rlimit *r = &p->rlimits[p->nrlimits];
		char where[48], *type = NULL;
		size_t k, n = sizeof(rlimit_names) / sizeof(rlimit_names[0]);

		snprintf(where, sizeof(where), "process.rlimits[%zu]", i);
		if (!json_object_is_type(e, json_type_object))
			return fail(c, "%s is not an object", where);
		ret = get_string(c, e, where, "type", &type);
		if (!ret && !type)
			ret = fail(c, "%s.type is missing", where);
		for (k = 0; !ret && k < n; k++)
			if (!strcmp(type, rlimit_names[k].name))
				break;
		/* runc refuses a type it does not know: so do we. */
		if (!ret && k == n)
			ret = fail(c, "%s.type \"%s\" is not an rlimit", where,
				   type);
		free(type);
		if (!ret)
			ret = get_u64(c, e, where, "soft", &r->soft);
		if (!ret)
			ret = get_u64(c, e, where, "hard", &r->hard);
		if (ret)
			return ret;
		if (r->soft > r->hard)
			return fail(c, "%s: soft %llu is above hard %llu",
				    where, (unsigned long long)r->soft,
				    (unsigned long long)r->hard);
		r->resource = rlimit_names[k].resource;
		for (size_t j = 0; j < p->nrlimits; j++)
			if (p->rlimits[j].resource == r->resource)
				return fail(c, "%s: %s is listed twice", where,
					    rlimit_names[k].name);
		p->nrlimits++;
		warn_unknown(c, e, where, known);
	}
	return 0;
}

static int parse_cap_set(struct parse_ctx *c, struct json_object *caps,
			 const char *key, uint64_t *mask)
{
	struct json_object *arr;
	char where[48];
	int ret = get_array(c, caps, "process.capabilities", key, 256, &arr);

	*mask = 0;
	if (ret || !arr)
		return ret;
	snprintf(where, sizeof(where), "process.capabilities.%s", key);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *name;
		unsigned int cap;

		if (!json_object_is_type(e, json_type_string))
			return fail(c, "%s[%zu] is not a string", where, i);
		name = json_object_get_string(e);
		for (cap = 0; oci_cap_name(cap); cap++)
			if (!strcmp(name, oci_cap_name(cap)))
				break;
		/* runc warns about a capability it does not know. */
		if (!oci_cap_name(cap)) {
			warn(c, "%s: unknown capability \"%.64s\" ignored",
			     where, name);
			continue;
		}
		*mask |= 1ull << cap;
	}
	return 0;
}

static int parse_capabilities(struct parse_ctx *c, struct json_object *proc)
{
	static const char *const sets[OCI_CAP_SETS] = {
		"bounding", "effective", "permitted", "inheritable", "ambient"
	};
	static const char *const known[] = { "bounding",  "effective",
					     "permitted", "inheritable",
					     "ambient",	  NULL };
	struct oci_process *p = &c->spec->process;
	struct json_object *caps;
	int ret = get_object(c, proc, "process", "capabilities", &caps);

	if (ret || !caps)
		return ret;
	p->has_capabilities = true;
	for (int i = 0; i < OCI_CAP_SETS && !ret; i++)
		ret = parse_cap_set(c, caps, sets[i], &p->caps[i]);
	if (!ret)
		warn_unknown(c, caps, "process.capabilities", known);
	return ret;
}

/* ---- linux: maskedPaths, readonlyPaths, sysctl ---------------------- */

static bool path_is_clean(const char *path)
{
	const char *p = path;

	if (path[0] != '/')
		return false;
	while ((p = strstr(p, "..")))
		if ((p == path || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return false;
		else
			p += 2;
	return true;
}

static int get_path_array(struct parse_ctx *c, struct json_object *lx,
			  const char *key, char ***out, size_t *count)
{
	int ret = get_string_array(c, lx, "linux", key, OCI_MAX_PATHS, out,
				   count);

	for (size_t i = 0; !ret && *out && i < *count; i++)
		if (!path_is_clean((*out)[i]))
			ret = fail(
				c,
				"linux.%s[%zu] \"%.64s\" is not an absolute path without \"..\"",
				key, i, (*out)[i]);
	return ret;
}

/* A sysctl name: net.ipv4.ip_forward or net/ipv4/conf/eth0.1/forwarding. */
static int sysctl_key(const char *name, char **out)
{
	size_t len = strlen(name);
	bool slashes = strchr(name, '/') != NULL;
	char *key;

	if (!len || len > 255 || name[0] == '.' || name[0] == '/' ||
	    strstr(name, "..") || strstr(name, "//"))
		return -EINVAL;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._-/", *p)))
			return -EINVAL;
	key = strdup(name);
	if (!key)
		return -ENOMEM;
	for (char *p = key; !slashes && *p; p++)
		if (*p == '.')
			*p = '/';
	*out = key;
	return 0;
}

static int parse_sysctl(struct parse_ctx *c, struct json_object *lx)
{
	struct json_object *obj;
	size_t n = 0;
	int ret = get_object(c, lx, "linux", "sysctl", &obj);

	if (ret || !obj)
		return ret;
	if (json_object_object_length(obj) > OCI_MAX_SYSCTLS)
		return fail(c, "linux.sysctl has more than %u entries",
			    OCI_MAX_SYSCTLS);
	c->spec->sysctls = calloc((size_t)json_object_object_length(obj) + 1,
				  sizeof(*c->spec->sysctls));
	if (!c->spec->sysctls)
		return -ENOMEM;
	json_object_object_foreach(obj, key, val)
	{
		struct oci_sysctl *s = &c->spec->sysctls[n];
		size_t vlen;

		if (!json_object_is_type(val, json_type_string))
			return fail(c, "linux.sysctl.%.64s is not a string",
				    key);
		vlen = (size_t)json_object_get_string_len(val);
		if (vlen > OCI_MAX_SYSCTL_VALUE ||
		    strlen(json_object_get_string(val)) != vlen)
			return fail(
				c,
				"linux.sysctl.%.64s is longer than %u bytes or holds a NUL",
				key, OCI_MAX_SYSCTL_VALUE);
		ret = sysctl_key(key, &s->key);
		if (ret == -EINVAL)
			return fail(
				c,
				"linux.sysctl: \"%.64s\" is not a sysctl name",
				key);
		if (ret)
			return ret;
		c->spec->nsysctls = ++n;
		s->value = strdup(json_object_get_string(val));
		if (!s->value)
			return -ENOMEM;
	}
	return 0;
}

/* ---- linux.seccomp ---------------------------------------------------- */

static const struct {
	const char *name;
	enum oci_seccomp_action action;
} seccomp_actions[] = {
	{ "SCMP_ACT_KILL", OCI_SCMP_KILL_THREAD },
	{ "SCMP_ACT_KILL_THREAD", OCI_SCMP_KILL_THREAD },
	{ "SCMP_ACT_KILL_PROCESS", OCI_SCMP_KILL_PROCESS },
	{ "SCMP_ACT_TRAP", OCI_SCMP_TRAP },
	{ "SCMP_ACT_ERRNO", OCI_SCMP_ERRNO },
	{ "SCMP_ACT_TRACE", OCI_SCMP_TRACE },
	{ "SCMP_ACT_ALLOW", OCI_SCMP_ALLOW },
	{ "SCMP_ACT_LOG", OCI_SCMP_LOG },
};

static const char *const seccomp_ops[] = {
	[OCI_SCMP_CMP_NE] = "SCMP_CMP_NE",
	[OCI_SCMP_CMP_LT] = "SCMP_CMP_LT",
	[OCI_SCMP_CMP_LE] = "SCMP_CMP_LE",
	[OCI_SCMP_CMP_EQ] = "SCMP_CMP_EQ",
	[OCI_SCMP_CMP_GE] = "SCMP_CMP_GE",
	[OCI_SCMP_CMP_GT] = "SCMP_CMP_GT",
	[OCI_SCMP_CMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

/* The runtime-spec's architectures, as libseccomp names them. */
static const char *const seccomp_archs[] = {
	"x86",	       "x86_64", "x32",	      "arm",	 "aarch64",
	"mips",	       "mips64", "mips64n32", "mipsel",	 "mipsel64",
	"mipsel64n32", "ppc",	 "ppc64",     "ppc64le", "s390",
	"s390x",       "parisc", "parisc64",  "riscv64", "loongarch64",
	"m68k",	       "sh",	 "sheb",
};

/* An action member: NULL (absent) is -ENOENT, an unknown name an error. */
static int get_seccomp_action(struct parse_ctx *c, struct json_object *obj,
			      const char *where, const char *key,
			      enum oci_seccomp_action *out)
{
	char *name = NULL;
	int ret = get_string(c, obj, where, key, &name);

	if (ret)
		return ret;
	if (!name)
		return -ENOENT;
	ret = -EINVAL;
	for (size_t i = 0;
	     i < sizeof(seccomp_actions) / sizeof(seccomp_actions[0]); i++)
		if (!strcmp(name, seccomp_actions[i].name)) {
			*out = seccomp_actions[i].action;
			ret = 0;
		}
	if (ret && !strcmp(name, "SCMP_ACT_NOTIFY"))
		ret = fail(
			c,
			"%s.%s: SCMP_ACT_NOTIFY is not supported (no seccomp agent reaches into the VM)",
			where, key);
	else if (ret)
		ret = fail(c, "%s.%s: \"%.64s\" is not a seccomp action", where,
			   key, name);
	free(name);
	return ret;
}

static int get_errno_ret(struct parse_ctx *c, struct json_object *obj,
			 const char *where, const char *key, uint32_t *out)
{
	int64_t n = -1;
	int ret = get_int(c, obj, where, key, 0, 4095, &n);

	if (!ret)
		*out = n < 0 ? EPERM : (uint32_t)n;
	return ret;
}

static int parse_seccomp_args(struct parse_ctx *c, struct json_object *e,
			      const char *where, struct oci_seccomp_rule *r)
{
	static const char *const known[] = { "index", "value", "valueTwo", "op",
					     NULL };
	struct json_object *arr;
	int ret = get_array(c, e, where, "args", OCI_MAX_SECCOMP_ARGS, &arr);

	if (ret || !arr)
		return ret;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *a = json_object_array_get_idx(arr, i);
		struct oci_seccomp_arg *arg = &r->args[r->nargs];
		char w[96], *op = NULL;
		int64_t index = -1;
		size_t k;

		snprintf(w, sizeof(w), "%s.args[%zu]", where, i);
		if (!json_object_is_type(a, json_type_object))
			return fail(c, "%s is not an object", w);
		ret = get_int(c, a, w, "index", 0, 5, &index);
		if (!ret && index < 0)
			ret = fail(c, "%s.index is missing", w);
		if (!ret && json_object_object_get_ex(a, "value", NULL))
			ret = get_u64(c, a, w, "value", &arg->value);
		if (!ret && json_object_object_get_ex(a, "valueTwo", NULL))
			ret = get_u64(c, a, w, "valueTwo", &arg->value_two);
		if (!ret)
			ret = get_string(c, a, w, "op", &op);
		if (!ret && !op)
			ret = fail(c, "%s.op is missing", w);
		for (k = 0;
		     !ret && k < sizeof(seccomp_ops) / sizeof(*seccomp_ops);
		     k++)
			if (!strcmp(op, seccomp_ops[k]))
				break;
		if (!ret && k == sizeof(seccomp_ops) / sizeof(*seccomp_ops))
			ret = fail(c,
				   "%s.op \"%.64s\" is not a seccomp operator",
				   w, op);
		free(op);
		if (ret)
			return ret;
		arg->index = (unsigned int)index;
		arg->op = (enum oci_seccomp_op)k;
		r->nargs++;
		warn_unknown(c, a, w, known);
	}
	return 0;
}

static int parse_seccomp_rules(struct parse_ctx *c, struct json_object *sc)
{
	static const char *const known[] = { "names",	 "action",  "errnoRet",
					     "args",	 "comment", "includes",
					     "excludes", NULL };
	struct oci_seccomp *s = &c->spec->seccomp;
	struct json_object *arr;
	size_t total = 0;
	int ret = get_array(c, sc, "linux.seccomp", "syscalls",
			    OCI_MAX_SECCOMP_RULES, &arr);

	if (ret || !arr)
		return ret;
	s->rules = calloc(json_object_array_length(arr) + 1, sizeof(*s->rules));
	if (!s->rules)
		return -ENOMEM;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct oci_seccomp_rule *r = &s->rules[i];
		char where[64];

		snprintf(where, sizeof(where), "linux.seccomp.syscalls[%zu]",
			 i);
		if (!json_object_is_type(e, json_type_object))
			return fail(c, "%s is not an object", where);
		s->nrules = i + 1;
		ret = get_string_array(c, e, where, "names",
				       OCI_MAX_SECCOMP_NAMES, &r->names,
				       &r->nnames);
		if (!ret && !r->nnames)
			ret = fail(c, "%s.names is missing or empty", where);
		total += r->nnames;
		if (!ret && total > OCI_MAX_SECCOMP_TOTAL_NAMES)
			ret = fail(
				c,
				"linux.seccomp.syscalls name more than %u syscalls in all",
				OCI_MAX_SECCOMP_TOTAL_NAMES);
		if (!ret) {
			ret = get_seccomp_action(c, e, where, "action",
						 &r->action);
			if (ret == -ENOENT)
				ret = fail(c, "%s.action is missing", where);
		}
		if (!ret)
			ret = get_errno_ret(c, e, where, "errnoRet",
					    &r->errno_ret);
		if (!ret)
			ret = parse_seccomp_args(c, e, where, r);
		if (ret)
			return ret;
		warn_unknown(c, e, where, known);
	}
	return 0;
}

static int parse_seccomp(struct parse_ctx *c, struct json_object *lx)
{
	static const char *const known[] = {
		"defaultAction", "defaultErrnoRet",  "architectures", "flags",
		"listenerPath",	 "listenerMetadata", "syscalls",      NULL
	};
	struct oci_seccomp *s = &c->spec->seccomp;
	struct json_object *sc, *arr = NULL;
	int ret = get_object(c, lx, "linux", "seccomp", &sc);

	if (ret || !sc)
		return ret;
	s->present = true;
	ret = get_seccomp_action(c, sc, "linux.seccomp", "defaultAction",
				 &s->default_action);
	if (ret == -ENOENT)
		return fail(c, "linux.seccomp.defaultAction is missing");
	if (!ret)
		ret = get_errno_ret(c, sc, "linux.seccomp", "defaultErrnoRet",
				    &s->default_errno);
	if (!ret)
		ret = get_array(c, sc, "linux.seccomp", "architectures",
				OCI_MAX_SECCOMP_ARCHS, &arr);
	for (size_t i = 0; !ret && arr && i < json_object_array_length(arr);
	     i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *name = json_object_get_string(e);
		size_t k, n = sizeof(seccomp_archs) / sizeof(seccomp_archs[0]);

		if (!json_object_is_type(e, json_type_string))
			return fail(
				c,
				"linux.seccomp.architectures[%zu] is not a string",
				i);
		for (k = 0; k < n; k++)
			if (!strncmp(name, "SCMP_ARCH_", 10) &&
			    !strcasecmp(name + 10, seccomp_archs[k]))
				break;
		/* runc refuses an architecture it does not know. */
		if (k == n)
			return fail(
				c,
				"linux.seccomp.architectures[%zu]: \"%.64s\" is not an architecture",
				i, name);
		s->archs[s->narchs++] = seccomp_archs[k];
	}
	if (!ret)
		ret = parse_seccomp_rules(c, sc);
	if (ret)
		return ret;
	warn_not_applicable(c, sc, "linux.seccomp", "flags",
			    "the filter is loaded without flags");
	warn_not_applicable(c, sc, "linux.seccomp", "listenerPath",
			    "no seccomp agent reaches into the VM");
	warn_unknown(c, sc, "linux.seccomp", known);
	return 0;
}

static int parse_user(struct parse_ctx *c, struct json_object *proc)
{
	static const char *const known[] = { "uid",	 "gid",
					     "umask",	 "additionalGids",
					     "username", NULL };
	struct json_object *user;
	int64_t n;
	int ret = get_object(c, proc, "process", "user", &user);

	if (ret || !user)
		return ret;
	n = 0;
	ret = get_int(c, user, "process.user", "uid", 0, UINT32_MAX - 1, &n);
	if (ret)
		return ret;
	c->spec->process.uid = (uint32_t)n;
	n = 0;
	ret = get_int(c, user, "process.user", "gid", 0, UINT32_MAX - 1, &n);
	if (ret)
		return ret;
	c->spec->process.gid = (uint32_t)n;
	warn_not_applicable(c, user, "process.user", "additionalGids",
			    "the guest process gets uid and gid only");
	warn_not_applicable(c, user, "process.user", "umask",
			    "the guest's default umask applies");
	warn_unknown(c, user, "process.user", known);
	return 0;
}

static int parse_process_object(struct parse_ctx *c, struct json_object *proc)
{
	static const char *const known[] = { "terminal",
					     "consoleSize",
					     "args",
					     "env",
					     "cwd",
					     "user",
					     "rlimits",
					     "noNewPrivileges",
					     "capabilities",
					     "apparmorProfile",
					     "selinuxLabel",
					     "oomScoreAdj",
					     "commandLine",
					     "ioPriority",
					     "scheduler",
					     "execCPUAffinity",
					     NULL };
	struct oci_process *p = &c->spec->process;
	struct json_object *size;
	int ret;

	c->spec->has_process = true;
	ret = get_bool(c, proc, "process", "terminal", &p->terminal);
	if (!ret)
		ret = get_string_array(c, proc, "process", "args", OCI_MAX_ARGS,
				       &p->args, &p->nargs);
	if (!ret)
		ret = get_string_array(c, proc, "process", "env", OCI_MAX_ENV,
				       &p->env, &p->nenv);
	if (!ret)
		ret = get_string(c, proc, "process", "cwd", &p->cwd);
	if (!ret)
		ret = parse_user(c, proc);
	if (!ret)
		ret = get_bool(c, proc, "process", "noNewPrivileges",
			       &p->no_new_privileges);
	if (!ret)
		ret = parse_rlimits(c, proc);
	if (!ret)
		ret = parse_capabilities(c, proc);
	if (!ret)
		ret = get_object(c, proc, "process", "consoleSize", &size);
	if (!ret && size) {
		int64_t h = 0, w = 0;

		ret = get_int(c, size, "process.consoleSize", "height", 0,
			      UINT16_MAX, &h);
		if (!ret)
			ret = get_int(c, size, "process.consoleSize", "width",
				      0, UINT16_MAX, &w);
		p->console_rows = (uint16_t)h;
		p->console_cols = (uint16_t)w;
	}
	if (ret)
		return ret;
	if (p->cwd && p->cwd[0] != '/')
		return fail(c, "process.cwd \"%s\" is not absolute", p->cwd);
	for (size_t i = 0; i < p->nenv; i++)
		if (!strchr(p->env[i], '='))
			return fail(c, "process.env[%zu] has no '='", i);
	/*
	 * Inside the VM the guest kernel is the boundary: these narrow a
	 * container's privileges within a kernel shared with other
	 * containers, which a VM does not share.
	 */
	warn_not_applicable(c, proc, "process", "apparmorProfile",
			    "no AppArmor in the guest");
	warn_not_applicable(c, proc, "process", "selinuxLabel",
			    "no SELinux in the guest");
	warn_not_applicable(c, proc, "process", "oomScoreAdj",
			    "the VM is the unit the host's OOM killer sees");
	warn_not_applicable(c, proc, "process", "ioPriority", "not supported");
	warn_not_applicable(c, proc, "process", "scheduler", "not supported");
	warn_not_applicable(c, proc, "process", "execCPUAffinity",
			    "vCPU pinning comes from linux.resources.cpu");
	warn_unknown(c, proc, "process", known);
	return 0;
}

static int parse_root(struct parse_ctx *c, struct json_object *top)
{
	struct json_object *root;
	int ret = get_object(c, top, "", "root", &root);

	if (ret || !root)
		return ret;
	ret = get_string(c, root, "root", "path", &c->spec->root_path);
	if (!ret)
		ret = get_bool(c, root, "root", "readonly",
			       &c->spec->root_readonly);
	return ret;
}

static bool has_option(char **options, const char *name)
{
	for (char **o = options; o && *o; o++)
		if (!strcmp(*o, name))
			return true;
	return false;
}

static int parse_mounts(struct parse_ctx *c, struct json_object *top)
{
	static const char *const known[] = { "destination", "type",
					     "source",	    "options",
					     "uidMappings", "gidMappings",
					     NULL };
	struct json_object *arr;
	size_t n;
	int ret = get_array(c, top, "", "mounts", OCI_MAX_MOUNTS, &arr);

	if (ret || !arr)
		return ret;
	n = json_object_array_length(arr);
	c->spec->mounts = calloc(n ? n : 1, sizeof(*c->spec->mounts));
	if (!c->spec->mounts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *m = json_object_array_get_idx(arr, i);
		struct oci_mount *mnt = &c->spec->mounts[i];
		char where[48];

		snprintf(where, sizeof(where), "mounts[%zu]", i);
		if (!json_object_is_type(m, json_type_object))
			return fail(c, "%s is not an object", where);
		c->spec->nmounts = i + 1;
		ret = get_string(c, m, where, "destination", &mnt->destination);
		if (!ret)
			ret = get_string(c, m, where, "type", &mnt->type);
		if (!ret)
			ret = get_string(c, m, where, "source", &mnt->source);
		if (!ret)
			ret = get_string_array(c, m, where, "options", 256,
					       &mnt->options, NULL);
		if (ret)
			return ret;
		if (!mnt->destination || mnt->destination[0] != '/')
			return fail(c,
				    "%s.destination is missing or not absolute",
				    where);
		mnt->readonly = has_option(mnt->options, "ro");
		mnt->bind = has_option(mnt->options, "bind") ||
			    has_option(mnt->options, "rbind") ||
			    (mnt->type && !strcmp(mnt->type, "bind"));
		warn_not_applicable(c, m, where, "uidMappings",
				    "no idmapped mounts");
		warn_not_applicable(c, m, where, "gidMappings",
				    "no idmapped mounts");
		warn_unknown(c, m, where, known);
	}
	return 0;
}

static int parse_annotations(struct parse_ctx *c, struct json_object *top)
{
	struct json_object *obj;
	size_t n = 0;
	int ret = get_object(c, top, "", "annotations", &obj);

	if (ret || !obj)
		return ret;
	if (json_object_object_length(obj) > OCI_MAX_ANNOTATIONS)
		return fail(c, "more than %u annotations", OCI_MAX_ANNOTATIONS);
	c->spec->annotations =
		calloc((size_t)json_object_object_length(obj) + 1,
		       sizeof(*c->spec->annotations));
	if (!c->spec->annotations)
		return -ENOMEM;
	json_object_object_foreach(obj, key, val)
	{
		struct oci_annotation *a = &c->spec->annotations[n];

		if (!json_object_is_type(val, json_type_string))
			return fail(c, "annotations.%s is not a string", key);
		if (strlen(key) > OCI_MAX_STRING ||
		    (size_t)json_object_get_string_len(val) > OCI_MAX_STRING)
			return fail(c, "an annotation is too long");
		a->key = strdup(key);
		a->value = strdup(json_object_get_string(val));
		c->spec->nannotations = ++n;
		if (!a->key || !a->value)
			return -ENOMEM;
	}
	return 0;
}

static int parse_resources(struct parse_ctx *c, struct json_object *lx)
{
	static const char *const known[] = { "cpu",	"memory",
					     "devices", "pids",
					     "blockIO", "hugepageLimits",
					     "network", "rdma",
					     "unified", NULL };
	struct oci_resources *r = &c->spec->resources;
	struct json_object *res, *cpu, *mem;
	int64_t n;
	int ret = get_object(c, lx, "linux", "resources", &res);

	if (ret || !res)
		return ret;
	ret = get_object(c, res, "linux.resources", "cpu", &cpu);
	if (!ret && cpu) {
		n = 0;
		ret = get_int(c, cpu, "linux.resources.cpu", "quota", INT64_MIN,
			      INT64_MAX, &n);
		r->cpu_quota = n;
		n = 0;
		if (!ret)
			ret = get_int(c, cpu, "linux.resources.cpu", "period",
				      0, INT64_MAX, &n);
		r->cpu_period = (uint64_t)n;
		if (!ret)
			ret = get_string(c, cpu, "linux.resources.cpu", "cpus",
					 &r->cpuset_cpus);
		if (!ret) {
			warn_not_applicable(c, cpu, "linux.resources.cpu",
					    "mems",
					    "guest RAM is not NUMA-placed");
			warn_not_applicable(c, cpu, "linux.resources.cpu",
					    "realtimeRuntime", "not supported");
		}
	}
	if (!ret)
		ret = get_object(c, res, "linux.resources", "memory", &mem);
	if (!ret && mem) {
		n = 0;
		ret = get_int(c, mem, "linux.resources.memory", "limit",
			      INT64_MIN, INT64_MAX, &n);
		r->memory_limit = n;
		if (!ret)
			warn_not_applicable(c, mem, "linux.resources.memory",
					    "swap",
					    "the VM's RAM does not swap");
	}
	if (ret)
		return ret;
	/* containerd always lists a deny-all device rule: nothing to say. */
	warn_not_applicable(c, res, "linux.resources", "pids",
			    "the guest has its own pid space");
	warn_not_applicable(c, res, "linux.resources", "blockIO",
			    "not supported");
	warn_not_applicable(c, res, "linux.resources", "hugepageLimits",
			    "not supported");
	warn_not_applicable(c, res, "linux.resources", "network",
			    "not supported");
	warn_not_applicable(c, res, "linux.resources", "rdma", "not supported");
	warn_not_applicable(c, res, "linux.resources", "unified",
			    "not supported");
	warn_unknown(c, res, "linux.resources", known);
	return 0;
}

static int parse_namespaces(struct parse_ctx *c, struct json_object *lx)
{
	struct json_object *arr;
	int ret = get_array(c, lx, "linux", "namespaces", 16, &arr);

	if (ret || !arr)
		return ret;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *ns = json_object_array_get_idx(arr, i);
		char *type = NULL, *path = NULL;
		char where[48];

		snprintf(where, sizeof(where), "linux.namespaces[%zu]", i);
		if (!json_object_is_type(ns, json_type_object))
			return fail(c, "%s is not an object", where);
		ret = get_string(c, ns, where, "type", &type);
		if (!ret)
			ret = get_string(c, ns, where, "path", &path);
		if (!ret && !type)
			ret = fail(c, "%s has no type", where);
		if (!ret && !strcmp(type, "network")) {
			c->spec->has_netns = true;
			free(c->spec->netns_path);
			c->spec->netns_path = path;
			path = NULL;
		} else if (!ret && !strcmp(type, "user")) {
			warn(c,
			     "%s: user namespaces are not supported (rootful only)",
			     where);
		}
		/* pid, mount, ipc, uts, cgroup: the VM has its own. */
		free(type);
		free(path);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_linux(struct parse_ctx *c, struct json_object *top)
{
	static const char *const known[] = { "namespaces",	  "resources",
					     "cgroupsPath",	  "maskedPaths",
					     "readonlyPaths",	  "seccomp",
					     "devices",		  "uidMappings",
					     "gidMappings",	  "sysctl",
					     "rootfsPropagation", "mountLabel",
					     "intelRdt",	  "personality",
					     "timeOffsets",	  NULL };
	struct json_object *lx;
	int ret = get_object(c, top, "", "linux", &lx);

	if (ret || !lx)
		return ret;
	ret = parse_namespaces(c, lx);
	if (!ret)
		ret = parse_resources(c, lx);
	if (!ret)
		ret = get_string(c, lx, "linux", "cgroupsPath",
				 &c->spec->cgroups_path);
	if (!ret)
		ret = get_path_array(c, lx, "maskedPaths",
				     &c->spec->masked_paths,
				     &c->spec->nmasked_paths);
	if (!ret)
		ret = get_path_array(c, lx, "readonlyPaths",
				     &c->spec->readonly_paths,
				     &c->spec->nreadonly_paths);
	if (!ret)
		ret = parse_sysctl(c, lx);
	if (!ret)
		ret = parse_seccomp(c, lx);
	if (ret)
		return ret;
	warn_not_applicable(c, lx, "linux", "uidMappings",
			    "user namespaces are not supported");
	warn_not_applicable(c, lx, "linux", "mountLabel",
			    "no SELinux in the guest");
	warn_not_applicable(c, lx, "linux", "intelRdt", "not supported");
	warn_not_applicable(c, lx, "linux", "personality", "not supported");
	warn_not_applicable(c, lx, "linux", "timeOffsets", "not supported");
	warn_unknown(c, lx, "linux", known);
	return 0;
}

/* Parse TEXT into a JSON object; depth bounded, trailing garbage refused. */
static struct json_object *parse_json(struct parse_ctx *c, const char *text,
				      size_t len)
{
	struct json_tokener *tok;
	struct json_object *obj;

	if (len > OCI_MAX_CONFIG) {
		fail(c, "larger than %u bytes", OCI_MAX_CONFIG);
		return NULL;
	}
	tok = json_tokener_new_ex(32);
	if (!tok) {
		fail(c, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
		fail(c, "not valid JSON: %s",
		     json_tokener_error_desc(json_tokener_get_error(tok)));
		json_object_put(obj);
		obj = NULL;
	} else if ((size_t)json_tokener_get_parse_end(tok) < len) {
		size_t end = json_tokener_get_parse_end(tok);

		while (end < len && strchr(" \t\r\n", text[end]))
			end++;
		if (end < len) {
			fail(c, "text after the JSON object");
			json_object_put(obj);
			obj = NULL;
		}
	}
	json_tokener_free(tok);
	if (obj && !json_object_is_type(obj, json_type_object)) {
		fail(c, "not a JSON object");
		json_object_put(obj);
		obj = NULL;
	}
	return obj;
}

int oci_spec_parse(const char *text, size_t len, struct oci_spec *spec,
		   char *err, size_t errlen)
{
	static const char *const known[] = { "ociVersion", "process",
					     "root",	   "hostname",
					     "domainname", "mounts",
					     "hooks",	   "annotations",
					     "linux",	   NULL };
	struct parse_ctx c = { .spec = spec, .err = err, .errlen = errlen };
	struct json_object *top, *proc;
	int ret;

	memset(spec, 0, sizeof(*spec));
	top = parse_json(&c, text, len);
	if (!top)
		return -EINVAL;
	ret = get_string(&c, top, "", "ociVersion", &spec->oci_version);
	if (!ret && !spec->oci_version)
		ret = fail(&c, "ociVersion is missing");
	if (!ret)
		ret = get_object(&c, top, "", "process", &proc);
	if (!ret && proc)
		ret = parse_process_object(&c, proc);
	if (!ret)
		ret = parse_root(&c, top);
	if (!ret)
		ret = get_string(&c, top, "", "hostname", &spec->hostname);
	if (!ret)
		ret = parse_mounts(&c, top);
	if (!ret)
		ret = parse_annotations(&c, top);
	if (!ret)
		ret = parse_linux(&c, top);
	if (!ret) {
		warn_not_applicable(
			&c, top, "", "hooks",
			"hooks would run on the host, outside the VM");
		warn_unknown(&c, top, "config", known);
	}
	json_object_put(top);
	return ret;
}

int oci_process_parse(const char *text, size_t len, struct oci_spec *spec,
		      char *err, size_t errlen)
{
	struct parse_ctx c = { .spec = spec, .err = err, .errlen = errlen };
	struct json_object *proc;
	int ret;

	memset(spec, 0, sizeof(*spec));
	proc = parse_json(&c, text, len);
	if (!proc)
		return -EINVAL;
	ret = parse_process_object(&c, proc);
	json_object_put(proc);
	return ret;
}

void oci_spec_free(struct oci_spec *spec)
{
	free(spec->oci_version);
	free_vector(spec->process.args);
	free_vector(spec->process.env);
	free(spec->process.cwd);
	free(spec->root_path);
	free(spec->hostname);
	for (size_t i = 0; i < spec->nmounts; i++) {
		free(spec->mounts[i].destination);
		free(spec->mounts[i].type);
		free(spec->mounts[i].source);
		free_vector(spec->mounts[i].options);
	}
	free(spec->mounts);
	for (size_t i = 0; i < spec->nannotations; i++) {
		free(spec->annotations[i].key);
		free(spec->annotations[i].value);
	}
	free(spec->annotations);
	free(spec->resources.cpuset_cpus);
	free(spec->cgroups_path);
	free(spec->netns_path);
	free_vector(spec->masked_paths);
	free_vector(spec->readonly_paths);
	for (size_t i = 0; i < spec->nsysctls; i++) {
		free(spec->sysctls[i].key);
		free(spec->sysctls[i].value);
	}
	free(spec->sysctls);
	for (size_t i = 0; i < spec->seccomp.nrules; i++)
		free_vector(spec->seccomp.rules[i].names);
	free(spec->seccomp.rules);
	for (size_t i = 0; i < spec->nwarnings; i++)
		free(spec->warnings[i]);
	memset(spec, 0, sizeof(*spec));
}

const char *oci_spec_annotation(const struct oci_spec *spec, const char *key)
{
	for (size_t i = 0; i < spec->nannotations; i++)
		if (!strcmp(spec->annotations[i].key, key))
			return spec->annotations[i].value;
	return NULL;
}
