/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An OCI bundle's config.json (runtime-spec 1.x) as hintvm-runtime uses it:
 * parsed with json-c, every field type-checked and bounded, and every field
 * hintvm does not honour named in a warning, so that nothing is silently
 * wrong. The parser knows nothing of VMs: resources.c and create turn the
 * spec into hintvm options.
 */
#ifndef HVM_RUNTIME_SPEC_H
#define HVM_RUNTIME_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what a config.json may hold (hostile input). */
#define OCI_MAX_ARGS 4096
#define OCI_MAX_ENV 4096
#define OCI_MAX_MOUNTS 256
#define OCI_MAX_ANNOTATIONS 1024
#define OCI_MAX_WARNINGS 64
#define OCI_MAX_STRING 65536
#define OCI_MAX_CONFIG (4u << 20) /* bytes of config.json */
#define OCI_MAX_RLIMITS 16 /* one per resource, RLIM_NLIMITS */
#define OCI_MAX_PATHS 256 /* maskedPaths, readonlyPaths: each */
#define OCI_MAX_SYSCTLS 1024
#define OCI_MAX_SYSCTL_VALUE 4096
#define OCI_MAX_SECCOMP_RULES 1024 /* linux.seccomp.syscalls entries */
#define OCI_MAX_SECCOMP_NAMES 1024 /* names in one entry */
/* names in all entries: each is a libseccomp rule to build at create */
#define OCI_MAX_SECCOMP_TOTAL_NAMES 8192
#define OCI_MAX_SECCOMP_ARGS 16 /* conditions in one entry */
#define OCI_MAX_SECCOMP_ARCHS 24
#define OCI_MAX_CAP 63 /* capability numbers are bits of a u64 */

struct oci_mount {
	char *destination;
	char *type; /* may be NULL */
	char *source; /* may be NULL */
	char **options; /* NULL-terminated */
	bool readonly; /* "ro" among the options */
	bool bind; /* "bind"/"rbind" among the options, or type "bind" */
};

struct oci_annotation {
	char *key;
	char *value;
};

/* process.rlimits[]: RESOURCE is RLIMIT_* of <sys/resource.h>. */
struct oci_rlimit {
	int resource;
	uint64_t soft, hard;
};

/* process.capabilities: one bit mask per set, bit N = capability N. */
enum oci_cap_set {
	OCI_CAP_BOUNDING,
	OCI_CAP_EFFECTIVE,
	OCI_CAP_PERMITTED,
	OCI_CAP_INHERITABLE,
	OCI_CAP_AMBIENT,
	OCI_CAP_SETS
};

struct oci_process {
	char **args; /* NULL-terminated; nargs may be 0 */
	size_t nargs;
	char **env; /* NULL-terminated */
	size_t nenv;
	char *cwd;
	uint32_t uid, gid;
	bool terminal;
	bool no_new_privileges;
	uint16_t console_rows, console_cols; /* consoleSize, 0 when absent */
	struct oci_rlimit rlimits[OCI_MAX_RLIMITS];
	size_t nrlimits;
	bool has_capabilities; /* absent: the process keeps what it has */
	uint64_t caps[OCI_CAP_SETS];
};

/* linux.seccomp: the profile as runc reads it, names checked. */
enum oci_seccomp_action {
	OCI_SCMP_KILL_THREAD, /* SCMP_ACT_KILL, SCMP_ACT_KILL_THREAD */
	OCI_SCMP_KILL_PROCESS,
	OCI_SCMP_TRAP,
	OCI_SCMP_ERRNO,
	OCI_SCMP_TRACE,
	OCI_SCMP_ALLOW,
	OCI_SCMP_LOG,
};

enum oci_seccomp_op {
	OCI_SCMP_CMP_NE,
	OCI_SCMP_CMP_LT,
	OCI_SCMP_CMP_LE,
	OCI_SCMP_CMP_EQ,
	OCI_SCMP_CMP_GE,
	OCI_SCMP_CMP_GT,
	OCI_SCMP_CMP_MASKED_EQ,
};

struct oci_seccomp_arg {
	unsigned int index; /* 0..5 */
	uint64_t value, value_two;
	enum oci_seccomp_op op;
};

struct oci_seccomp_rule {
	char **names; /* NULL-terminated, nnames >= 1 */
	size_t nnames;
	enum oci_seccomp_action action;
	uint32_t errno_ret; /* ERRNO/TRACE: errnoRet, or EPERM (ERRNO) */
	struct oci_seccomp_arg args[OCI_MAX_SECCOMP_ARGS];
	size_t nargs;
};

struct oci_seccomp {
	bool present;
	enum oci_seccomp_action default_action;
	uint32_t default_errno; /* defaultErrnoRet, or EPERM */
	/* "x86_64", "aarch64", ...: libseccomp's names, lower case */
	const char *archs[OCI_MAX_SECCOMP_ARCHS];
	size_t narchs;
	struct oci_seccomp_rule *rules;
	size_t nrules;
};

struct oci_sysctl {
	char *key; /* relative to /proc/sys, '/'-separated */
	char *value;
};

struct oci_resources {
	int64_t cpu_quota; /* <= 0: none */
	uint64_t cpu_period; /* 0: none */
	char *cpuset_cpus; /* NULL: none */
	int64_t memory_limit; /* <= 0: none */
};

struct oci_spec {
	char *oci_version;
	bool has_process;
	struct oci_process process;
	char *root_path; /* relative to the bundle, or absolute */
	bool root_readonly;
	char *hostname;
	struct oci_mount *mounts;
	size_t nmounts;
	struct oci_annotation *annotations;
	size_t nannotations;
	struct oci_resources resources;
	char *cgroups_path;
	bool has_netns; /* a network namespace is listed */
	char *netns_path; /* its path: join it; NULL: a new one */
	char **masked_paths; /* NULL-terminated; absolute, no ".." */
	size_t nmasked_paths;
	char **readonly_paths; /* NULL-terminated; absolute, no ".." */
	size_t nreadonly_paths;
	struct oci_sysctl *sysctls;
	size_t nsysctls;
	struct oci_seccomp seccomp;
	/* What config.json asked for that hintvm does not do. */
	char *warnings[OCI_MAX_WARNINGS];
	size_t nwarnings;
	size_t warnings_dropped;
};

/*
 * Parse config.json text (LEN bytes, need not be NUL-terminated) into SPEC.
 * Returns 0, or a negative errno with a message in ERR (ERRLEN bytes).
 * SPEC must be freed with oci_spec_free() in both cases.
 */
int oci_spec_parse(const char *text, size_t len, struct oci_spec *spec,
		   char *err, size_t errlen);

/* Parse a process.json (`exec --process`): the "process" object alone. */
int oci_process_parse(const char *text, size_t len, struct oci_spec *spec,
		      char *err, size_t errlen);

void oci_spec_free(struct oci_spec *spec);

/* "CAP_CHOWN" for 0 ...; NULL for a number without a name. */
const char *oci_cap_name(unsigned int cap);

/* The value of annotation KEY, or NULL. */
const char *oci_spec_annotation(const struct oci_spec *spec, const char *key);

#endif
