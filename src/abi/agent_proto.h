/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest agent protocol, version 1 (docs/agent.md): the codec only.
 *
 * One file for both ends: libhintvm (hintvm exec, hvm_process_*) and the
 * guest agent (guest-firmware/agent) compile agent_proto.c, so the two
 * cannot disagree about the wire format. It needs nothing but libc: no
 * hvm_set_error, no json-c, no allocation except in the EXEC decoder.
 *
 * A frame is a 12-byte little-endian header (payload length, type,
 * reserved, request id) and a payload of attributes (type, length,
 * value). Every length read from the wire is bounded here, once: a
 * payload by AGENT_MAX_PAYLOAD, an attribute by the payload that holds
 * it, counts of repeated attributes by the limits below.
 */
#ifndef HVM_ABI_AGENT_PROTO_H
#define HVM_ABI_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_PROTO_VERSION 1
/* The vsock port the agent listens on (guest side). */
#define AGENT_VSOCK_PORT 1024
/* HELLO's SEED: what the agent mixes in; another length is ignored. */
#define AGENT_SEED_MIN 16
#define AGENT_SEED_MAX 256
/*
 * The host port the agent reports the main process's exit to before it
 * powers off (`hintvm run --agent` serves it).
 */
#define AGENT_STATUS_PORT 1025
/*
 * The main process's stdin, stdout and stderr, when the host serves them
 * (hvm_config_set_agent_stdio_fds()): one guest-to-host connection each,
 * bytes one way (host to guest on the first, guest to host on the others).
 */
#define AGENT_STDIN_PORT 1027
#define AGENT_STDOUT_PORT 1028
#define AGENT_STDERR_PORT 1029

#define AGENT_HDR_SIZE 12
/* Largest payload either side sends or accepts. */
#define AGENT_MAX_PAYLOAD (256u * 1024)
#define AGENT_MAX_ARGS 4096
#define AGENT_MAX_ENV 4096
/* Longest path (cwd) and name; longer ones are refused. */
#define AGENT_MAX_PATH 4095
/* Attributes nest (PROC in PROCS) at most this deep. */
#define AGENT_MAX_DEPTH 2

/* Frame types: requests (client -> agent) and replies/events. */
enum agent_msg_type {
	AGENT_MSG_HELLO = 1, /* both ways, first frame of every connection */
	AGENT_MSG_EXEC = 2,
	AGENT_MSG_ATTACH = 3,
	AGENT_MSG_SIGNAL = 4,
	AGENT_MSG_RESIZE = 5,
	AGENT_MSG_LIST = 6,
	AGENT_MSG_WAIT = 7,
	AGENT_MSG_EXIT_REPORT = 8, /* agent -> hintvm, on AGENT_STATUS_PORT */
	/*
	 * hintvm-runtime -> hintvm-oci-init: the container to run, a file in
	 * the container's initramfs (AGENT_CONTAINER_FILE), not a request
	 * on a connection.
	 */
	AGENT_MSG_CONTAINER = 9,
	/*
	 * The task's cgroup numbers in the guest (hvm_guest_stats()):
	 * answered with STATS_DATA, or ERROR ENOENT when the guest has no
	 * task cgroup (an agent not started by hintvm-oci-init).
	 */
	AGENT_MSG_STATS = 10,
	/*
	 * A pod container's cgroup limits changed (CRI
	 * UpdateContainerResources): CGROUP, MEMORY_MAX?, CPU_QUOTA? and
	 * CPU_PERIOD?; answered OK, or ERROR (ENOENT: no such cgroup).
	 */
	AGENT_MSG_CGROUP_SET = 11,
	AGENT_MSG_OK = 64,
	AGENT_MSG_ERROR = 65,
	AGENT_MSG_READY = 66,
	AGENT_MSG_STARTED = 67,
	AGENT_MSG_EXITED = 68,
	AGENT_MSG_PROCS = 69,
	AGENT_MSG_STATS_DATA = 70,
};

/* Attribute types; each has one fixed kind (agent_attr_kind()). */
enum agent_attr_type {
	AGENT_ATTR_VERSION = 1, /* u32 */
	AGENT_ATTR_NAME = 2, /* string */
	AGENT_ATTR_ARG = 3, /* string, repeated, in order */
	AGENT_ATTR_ENV = 4, /* string "K=V", repeated */
	AGENT_ATTR_CWD = 5, /* string, absolute path */
	AGENT_ATTR_UID = 6, /* u32 */
	AGENT_ATTR_GID = 7, /* u32 */
	AGENT_ATTR_FLAGS = 8, /* u32, AGENT_EXEC_* */
	AGENT_ATTR_ROWS = 9, /* u32, 1..65535 */
	AGENT_ATTR_COLS = 10, /* u32, 1..65535 */
	AGENT_ATTR_SESSION = 11, /* u32 */
	AGENT_ATTR_TOKEN = 12, /* u64 */
	AGENT_ATTR_STREAM = 13, /* u32, enum agent_stream */
	AGENT_ATTR_PID = 14, /* u32 */
	AGENT_ATTR_SIGNAL = 15, /* u32, 1..64 */
	AGENT_ATTR_EXIT_CODE = 16, /* u32, 0..255 */
	AGENT_ATTR_TERM_SIGNAL = 17, /* u32, 1..64 */
	AGENT_ATTR_ERRNO = 18, /* u32 */
	AGENT_ATTR_MESSAGE = 19, /* string */
	AGENT_ATTR_PROC = 20, /* nested */
	AGENT_ATTR_MAX_PAYLOAD = 21, /* u32 */
	AGENT_ATTR_STATE = 22, /* u32, enum agent_proc_state */
	/* EXEC's process limits (with AGENT_EXEC_LIMITS): */
	AGENT_ATTR_RLIMIT = 23, /* bytes: le32 resource, le64 soft, hard */
	AGENT_ATTR_CAPS = 24, /* bytes: le64 x AGENT_CAP_SETS */
	AGENT_ATTR_NO_NEW_PRIVS = 25, /* u32, 0 or 1 */
	AGENT_ATTR_SECCOMP = 26, /* bytes: a classic BPF seccomp program */
	/* CONTAINER's container around the process: */
	AGENT_ATTR_HOSTNAME = 27, /* string */
	AGENT_ATTR_ROOT_READONLY = 28, /* u32, 0 or 1 */
	AGENT_ATTR_MOUNT =
		29, /* nested: MOUNT_DEST, _TYPE?, _SOURCE?, FLAGS? */
	AGENT_ATTR_MOUNT_DEST = 30, /* string, absolute path */
	AGENT_ATTR_MOUNT_TYPE = 31, /* string */
	AGENT_ATTR_MOUNT_SOURCE = 32, /* string */
	AGENT_ATTR_SYSCTL = 33, /* string "KEY=VALUE", KEY under /proc/sys */
	AGENT_ATTR_MASKED_PATH = 34, /* string, absolute path */
	AGENT_ATTR_READONLY_PATH = 35, /* string, absolute path */
	/* STATS_DATA: the task cgroup's numbers; absent: not known. */
	AGENT_ATTR_CPU_USAGE_NS = 36, /* u64, cpu.stat usage_usec x 1000 */
	AGENT_ATTR_CPU_USER_NS = 37, /* u64 */
	AGENT_ATTR_CPU_SYSTEM_NS = 38, /* u64 */
	AGENT_ATTR_MEM_USAGE = 39, /* u64 bytes, memory.current */
	AGENT_ATTR_MEM_LIMIT = 40, /* u64 bytes: memory.max, else guest RAM */
	AGENT_ATTR_PIDS_CURRENT = 41, /* u64 */
	AGENT_ATTR_PIDS_LIMIT = 42, /* u64, 0: no limit (pids.max "max") */
	AGENT_ATTR_OOM_KILLS = 43, /* u64, memory.events oom_kill */
	/* EXEC: the root to run the process in (a pod's container): */
	AGENT_ATTR_ROOT = 44, /* string, absolute path, no ".." */
	/*
	 * EXEC (with AGENT_EXEC_CGROUP) and STATS: a pod container's own
	 * cgroup in the guest, by name (agent_cgroup_name_valid()).
	 */
	AGENT_ATTR_CGROUP = 45, /* string */
	/* EXEC: that cgroup's memory.max, bytes (> 0); only with CGROUP. */
	AGENT_ATTR_MEMORY_MAX = 46, /* u64 */
	/* EXEC (with AGENT_EXEC_PIDNS and CGROUP): enum agent_pidns. */
	AGENT_ATTR_PIDNS = 47, /* u32 */
	/* CGROUP_SET: cpu.max, "QUOTA PERIOD" in microseconds; a quota
	 * of 0 is "max" (no limit). Both or neither. */
	AGENT_ATTR_CPU_QUOTA = 48, /* u64 */
	AGENT_ATTR_CPU_PERIOD = 49, /* u64, 1000..1000000 */
	/* HELLO: the host's randomness for the guest's CRNG (a clone's): */
	AGENT_ATTR_SEED = 50, /* bytes, AGENT_SEED_MIN..AGENT_SEED_MAX */
	AGENT_ATTR_COUNT
};

enum agent_attr_kind {
	AGENT_KIND_UNKNOWN, /* not in this version: skipped by readers */
	AGENT_KIND_U32,
	AGENT_KIND_U64,
	AGENT_KIND_STRING,
	AGENT_KIND_NESTED,
	AGENT_KIND_BYTES, /* sized by the reader of that attribute */
};

/* EXEC flags: which streams the client attaches, and how it runs. */
#define AGENT_EXEC_STDIN 0x1u
#define AGENT_EXEC_STDOUT 0x2u
#define AGENT_EXEC_STDERR 0x4u
#define AGENT_EXEC_TTY 0x8u /* one pty; only the TTY stream */
#define AGENT_EXEC_KEEP 0x10u /* outlives its control connection */
/*
 * The request carries process limits (RLIMIT, CAPS, NO_NEW_PRIVS,
 * SECCOMP): an agent that predates them refuses the unknown flag rather
 * than skip the attributes and run the process unconfined.
 */
#define AGENT_EXEC_LIMITS 0x20u
/*
 * The request names a cgroup to run the process in (CGROUP, MEMORY_MAX):
 * for the same reason a flag, so that an older agent refuses it rather
 * than run the process outside its container's memory limit.
 */
#define AGENT_EXEC_CGROUP 0x40u
/*
 * The request asks for a PID namespace (PIDNS): a flag for the same
 * reason, so that no agent runs a container's process among the VM's.
 */
#define AGENT_EXEC_PIDNS 0x80u
#define AGENT_EXEC_KNOWN_FLAGS 0xffu

/*
 * A pod container's PID namespace, named by its CGROUP: its own process
 * makes it (and is its PID 1), the execs into it join it.
 */
enum agent_pidns {
	AGENT_PIDNS_NEW = 1,
	AGENT_PIDNS_JOIN = 2,
};

/* A pod container's cgroup name: 1 to 64 of [A-Za-z0-9_.+-], not starting
 * with '.' (a container id, as the OCI runtime's ids are). */
#define AGENT_MAX_CGROUP_NAME 64
bool agent_cgroup_name_valid(const char *name, size_t len);

enum agent_stream {
	AGENT_STREAM_STDIN = 0,
	AGENT_STREAM_STDOUT = 1,
	AGENT_STREAM_STDERR = 2,
	AGENT_STREAM_TTY = 3,
	AGENT_STREAM_COUNT
};

enum agent_proc_state {
	AGENT_PROC_STARTING = 0, /* waiting for its streams */
	AGENT_PROC_RUNNING = 1,
	AGENT_PROC_EXITED = 2,
};

struct agent_hdr {
	uint32_t len; /* payload bytes, <= AGENT_MAX_PAYLOAD */
	uint16_t type;
	uint32_t id;
};

/*
 * Decode a frame header. Returns 0, or -EMSGSIZE when the announced
 * payload exceeds AGENT_MAX_PAYLOAD (the connection cannot be resynced:
 * close it).
 */
int agent_hdr_decode(const uint8_t *buf, struct agent_hdr *hdr);
void agent_hdr_encode(uint8_t *buf, const struct agent_hdr *hdr);

enum agent_attr_kind agent_attr_kind(uint16_t type);

/* ---- building a frame ------------------------------------------------ */

/*
 * A frame under construction in a caller's buffer. A put that does not
 * fit sets error (-EMSGSIZE) and every later call does nothing, so a
 * builder checks once, in agent_build_end().
 */
struct agent_builder {
	uint8_t *buf;
	size_t cap;
	size_t len;
	size_t nest[AGENT_MAX_DEPTH]; /* offsets of open nested attributes */
	unsigned int depth;
	int error;
};

void agent_build_begin(struct agent_builder *b, uint8_t *buf, size_t cap,
		       uint16_t type, uint32_t id);
void agent_put_u32(struct agent_builder *b, uint16_t type, uint32_t value);
void agent_put_u64(struct agent_builder *b, uint16_t type, uint64_t value);
void agent_put_bytes(struct agent_builder *b, uint16_t type, const void *data,
		     size_t len);
void agent_put_str(struct agent_builder *b, uint16_t type, const char *s);
void agent_nest_begin(struct agent_builder *b, uint16_t type);
void agent_nest_end(struct agent_builder *b);
/* The whole frame's length (header included), or a negative errno. */
int agent_build_end(struct agent_builder *b);

/* ---- reading a payload ----------------------------------------------- */

struct agent_attr {
	uint16_t type;
	uint16_t len;
	const uint8_t *value;
};

struct agent_attr_iter {
	const uint8_t *pos;
	const uint8_t *end;
};

void agent_attr_iter_init(struct agent_attr_iter *it, const uint8_t *payload,
			  size_t len);
/*
 * The next attribute: 1 with *A filled, 0 at the end, -EPROTO when an
 * attribute overruns the payload or a known attribute has the wrong size
 * for its kind (a u32 that is not 4 bytes, a string with a NUL).
 */
int agent_attr_next(struct agent_attr_iter *it, struct agent_attr *a);

uint32_t agent_attr_u32(const struct agent_attr *a);
uint64_t agent_attr_u64(const struct agent_attr *a);

/*
 * Check that a payload is well formed (every attribute, nested ones
 * included, within bounds and of its kind's size) and that each
 * single-valued attribute appears at most once per level. 0 or -EPROTO.
 */
int agent_payload_validate(const uint8_t *payload, size_t len);

/*
 * The single u32/u64 attribute TYPE at the top level of a validated
 * payload: 0, or -ENOENT when absent.
 */
int agent_get_u32(const uint8_t *payload, size_t len, uint16_t type,
		  uint32_t *value);
int agent_get_u64(const uint8_t *payload, size_t len, uint16_t type,
		  uint64_t *value);
/* The single string attribute TYPE, copied NUL-terminated into BUF. */
int agent_get_str(const uint8_t *payload, size_t len, uint16_t type, char *buf,
		  size_t size);

/* ---- the EXEC request -------------------------------------------------- */

#define AGENT_MAX_RLIMITS 16
#define AGENT_RLIMIT_SIZE 20
/* BPF_MAXINSNS instructions of 8 bytes: the kernel's limit. */
#define AGENT_MAX_SECCOMP (4096 * 8)

/* Capability sets, in AGENT_ATTR_CAPS's order; bit N = capability N. */
enum agent_cap_set {
	AGENT_CAP_BOUNDING,
	AGENT_CAP_EFFECTIVE,
	AGENT_CAP_PERMITTED,
	AGENT_CAP_INHERITABLE,
	AGENT_CAP_AMBIENT,
	AGENT_CAP_SETS
};

struct agent_rlimit {
	uint32_t resource; /* RLIMIT_*, < 16 */
	uint64_t soft, hard; /* soft <= hard; ~0: unlimited */
};

/*
 * What a process is confined to before it execs (guest-firmware/agent/
 * limits.c applies it, for the agent's EXEC and for hintvm-runtime's
 * oci-init alike).
 */
struct agent_limits {
	struct agent_rlimit rlimits[AGENT_MAX_RLIMITS];
	size_t nrlimits;
	bool has_caps; /* false: keep what the process has */
	uint64_t caps[AGENT_CAP_SETS];
	bool no_new_privs;
	const void *seccomp; /* a BPF program of seccomp_len bytes, or NULL */
	size_t seccomp_len; /* a multiple of 8, <= AGENT_MAX_SECCOMP */
};

/* Any limit set: AGENT_EXEC_LIMITS is due. */
bool agent_limits_any(const struct agent_limits *l);

struct agent_exec_req {
	char **argv; /* NULL-terminated, at least one entry */
	char **envp; /* NULL-terminated; NULL when the request had no ENV */
	char *cwd; /* NULL: "/" */
	/* NULL: the agent's root. Else the process gets a mount namespace
	 * of its own, /proc mounted on ROOT/proc, and ROOT as its root
	 * (chroot; cwd is then inside it). */
	char *root;
	/* NULL: the agent's cgroup. Else (AGENT_EXEC_CGROUP) the process
	 * runs in the guest's cgroup of that name, made on first use with
	 * MEMORY_MAX as its memory.max (0: none set), joined by later execs
	 * naming it (agent_cgroup_name_valid()). */
	char *cgroup;
	uint64_t memory_max;
	/* 0: the agent's PID namespace; else (AGENT_EXEC_PIDNS, with a
	 * CGROUP) enum agent_pidns for the namespace of that name. */
	uint32_t pidns;
	uint32_t uid, gid;
	bool has_uid, has_gid;
	uint32_t flags; /* AGENT_EXEC_* */
	uint16_t rows, cols; /* TTY only; 0 when not given */
	struct agent_limits limits; /* with AGENT_EXEC_LIMITS */
	void *storage; /* owns everything above */
};

/*
 * Decode and validate an EXEC payload: 1..AGENT_MAX_ARGS arguments,
 * at most AGENT_MAX_ENV environment entries each "K=V" with a non-empty
 * K, an absolute cwd of at most AGENT_MAX_PATH bytes, known flags only
 * (TTY excludes STDIN/STDOUT/STDERR), a window size only with TTY; limits
 * only with AGENT_EXEC_LIMITS, rlimits of known resources with soft <= hard
 * each at most once, a seccomp program of whole instructions.
 * Returns 0, -EPROTO (malformed), -EINVAL (well formed, bad values;
 * MSG says which) or -ENOMEM. Free with agent_exec_req_free() on success.
 */
int agent_exec_decode(const uint8_t *payload, size_t len,
		      struct agent_exec_req *req, char *msg, size_t msg_size);
void agent_exec_req_free(struct agent_exec_req *req);

/* Encode REQ as an EXEC frame with request ID into BUF. */
int agent_exec_encode(uint8_t *buf, size_t cap, uint32_t id,
		      const struct agent_exec_req *req);

/* ---- the CONTAINER frame ----------------------------------------------- */

/*
 * hintvm-runtime's console mode (docs/oci-runtime.md): the host parses the
 * bundle's config.json and writes what the guest init needs as one
 * CONTAINER frame, the file AGENT_CONTAINER_FILE of the container's
 * initramfs; hintvm-oci-init reads it with agent_container_decode() and
 * parses no JSON. The payload is VERSION, the container's process as an
 * EXEC request's attributes (process.terminal is FLAGS' TTY, its window
 * ROWS/COLS; its limits RLIMIT, CAPS, NO_NEW_PRIVS, SECCOMP with LIMITS),
 * and the container around it: HOSTNAME, ROOT_READONLY, MOUNT (every entry
 * of config.json's mounts, in order: the runtime names a bind mount's
 * share or copy by its index), SYSCTL, MASKED_PATH, READONLY_PATH.
 */
#define AGENT_CONTAINER_FILE "/hintvm/container"
#define AGENT_MAX_MOUNTS 256
#define AGENT_MAX_PATHS 256 /* MASKED_PATH, READONLY_PATH: each */
#define AGENT_MAX_SYSCTLS 1024

/* A MOUNT's FLAGS. */
#define AGENT_MOUNT_RO 0x1u /* "ro" among its options */
#define AGENT_MOUNT_BIND 0x2u /* type "bind", or "bind"/"rbind" options */
#define AGENT_MOUNT_KNOWN_FLAGS 0x3u

struct agent_mount {
	char *destination; /* absolute */
	char *type, *source; /* NULL when absent */
	uint32_t flags; /* AGENT_MOUNT_* */
};

struct agent_sysctl {
	char *key; /* relative to /proc/sys: no leading '/', no ".." */
	char *value;
};

struct agent_container {
	struct agent_exec_req process;
	char *hostname; /* NULL: the kernel's */
	bool root_readonly;
	struct agent_mount *mounts;
	size_t nmounts;
	struct agent_sysctl *sysctls;
	size_t nsysctls;
	char **masked_paths; /* NULL-terminated (decoded); absolute */
	size_t nmasked_paths;
	char **readonly_paths; /* NULL-terminated (decoded); absolute */
	size_t nreadonly_paths;
	void *storage; /* owns everything above but PROCESS (decoded) */
};

/*
 * Encode C as a whole CONTAINER frame (header included) into BUF: its
 * length, or -EMSGSIZE when it does not fit CAP or AGENT_MAX_PAYLOAD.
 */
int agent_container_encode(uint8_t *buf, size_t cap,
			   const struct agent_container *c);

/*
 * Decode a whole CONTAINER frame of LEN bytes (the file): a header of
 * that type announcing exactly the rest, VERSION 1, the process as
 * agent_exec_decode() takes it, at most the AGENT_MAX_* mounts, sysctls
 * and paths above, each mount with an absolute destination and known
 * FLAGS, each path absolute without a ".." component, each sysctl
 * "KEY=VALUE" with a KEY below /proc/sys. Returns 0, -EPROTO
 * (malformed), -EPROTONOSUPPORT (another version), -EINVAL (bad values)
 * or -ENOMEM, with MSG saying which; free with agent_container_free() on
 * success.
 */
int agent_container_decode(const uint8_t *frame, size_t len,
			   struct agent_container *c, char *msg,
			   size_t msg_size);
void agent_container_free(struct agent_container *c);

/* The streams a client attaches for FLAGS (bit N: enum agent_stream N). */
unsigned int agent_exec_streams(uint32_t flags);

/*
 * A shell's view of an exit: the code, or 128 + signal. Used by
 * `hintvm exec`, hvm_process_status() and `hintvm run --agent`.
 */
int agent_shell_status(bool signaled, uint32_t code_or_signal);

/*
 * STATS_DATA's numbers: value[i] is attribute AGENT_ATTR_CPU_USAGE_NS + i,
 * AGENT_STATS_UNKNOWN where the guest could not read it (and the
 * attribute is left out on the wire).
 */
#define AGENT_STATS_COUNT (AGENT_ATTR_OOM_KILLS - AGENT_ATTR_CPU_USAGE_NS + 1)
#define AGENT_STATS_UNKNOWN UINT64_MAX
/* The index of attribute ATTR in struct agent_stats's value[]. */
#define AGENT_STAT(attr) ((attr)-AGENT_ATTR_CPU_USAGE_NS)
struct agent_stats {
	uint64_t value[AGENT_STATS_COUNT];
};

/* ---- CGROUP_SET ----------------------------------------------------- */

struct agent_cgroup_set {
	char cgroup[AGENT_MAX_CGROUP_NAME + 1];
	uint64_t memory_max; /* 0: unchanged */
	bool set_cpu;
	uint64_t cpu_quota; /* 0: no limit ("max") */
	uint64_t cpu_period;
};

/* The CGROUP_SET frame for C with request ID: its length or -errno. */
int agent_cgroup_set_encode(uint8_t *buf, size_t cap, uint32_t id,
			    const struct agent_cgroup_set *c);
/*
 * A CGROUP_SET payload into C: well formed (-EPROTO), a valid CGROUP, a
 * MEMORY_MAX above 0 if any, CPU_QUOTA and CPU_PERIOD together with a
 * period of 1000..1000000 us, and something to set. 0, -EPROTO or
 * -EINVAL with MSG.
 */
int agent_cgroup_set_decode(const uint8_t *payload, size_t len,
			    struct agent_cgroup_set *c, char *msg,
			    size_t msg_size);

/* The STATS_DATA frame for S, answering request ID: its length or -errno. */
int agent_stats_encode(uint8_t *buf, size_t cap, uint32_t id,
		       const struct agent_stats *s);
/* A validated STATS_DATA payload into S; unknown attributes are skipped. */
void agent_stats_decode(const uint8_t *payload, size_t len,
			struct agent_stats *s);

#endif
