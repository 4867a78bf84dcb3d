/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Protocol v1 of the control socket (docs/control-socket.md), the codec
 * only: request lines in, reply and event lines out, built with json-c.
 * No VM state here, so every rule of the wire format is unit-tested and
 * fuzzed on its own (tests/unit/abi/test_control_proto.c,
 * tests/fuzz/fuzz_control_request.c).
 *
 * A request is one line: a JSON object {"v":1,"id":ID,"cmd":"stat",
 * "name":"exits"} or, for people typing at a socket, the same as plain
 * words ("stat exits", "set halt-poll 20000"). Every reply is one JSON
 * object on one line with "v":1, the request's "id" when it had one, and
 * "ok"; a refusal adds "code" (one of the stable names below) and "error"
 * (a sentence for people).
 */
#ifndef HVM_ABI_CONTROL_PROTO_H
#define HVM_ABI_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define CTL_PROTOCOL_VERSION 1
/* Longest request line (without the newline) a server accepts. */
#define CTL_MAX_REQUEST 1024
/* Longest argument (a stat name, a key, a value). */
#define CTL_MAX_ARG 256

/*
 * `snapshot` carries two open, writable files as SCM_RIGHTS with its
 * line, in this order: DIR/state and DIR/memory (src/snapshot/format.h
 * names them the same), which the client creates mode 0600. The VM thus
 * writes a snapshot without any access to the file system of its own.
 */
#define CTL_SNAPSHOT_FDS 2
#define CTL_SNAPSHOT_STATE "state"
#define CTL_SNAPSHOT_MEMORY "memory"

enum ctl_cmd {
	CTL_CMD_STATUS,
	CTL_CMD_INFO,
	CTL_CMD_STATS,
	CTL_CMD_STAT,
	CTL_CMD_PAUSE,
	CTL_CMD_RESUME,
	CTL_CMD_STOP,
	CTL_CMD_SET,
	CTL_CMD_EVENTS,
	CTL_CMD_SNAPSHOT, /* "snapshot run|paused", with two fds (below) */
	CTL_CMD_COUNT
};

/* Stable error codes: their names are part of the protocol. */
enum ctl_error {
	CTL_OK,
	CTL_E_BAD_JSON, /* "bad-json": not JSON, or not an object */
	CTL_E_BAD_REQUEST, /* "bad-request": missing/mistyped field */
	CTL_E_VERSION, /* "unsupported-version" */
	CTL_E_UNKNOWN_REQUEST, /* "unknown-request" */
	CTL_E_TOO_LONG, /* "too-long": a line over CTL_MAX_REQUEST */
	CTL_E_UNKNOWN_STAT, /* "unknown-stat" */
	CTL_E_UNKNOWN_KEY, /* "unknown-key": set of an unknown option */
	CTL_E_NOT_RUNTIME, /* "not-at-runtime": fixed once the VM exists */
	CTL_E_BAD_VALUE, /* "bad-value" */
	CTL_E_STATE, /* "wrong-state": e.g. pause while paused */
	CTL_E_BUSY, /* "busy": no room for another subscriber */
	CTL_E_INTERNAL, /* "internal": hintvm failed (out of memory...) */
	CTL_E_PERMISSION, /* "permission-denied": not the VM's user or root */
	CTL_E_COUNT
};

struct ctl_request {
	enum ctl_cmd cmd;
	bool json; /* arrived as a JSON object (else as words) */
	struct json_object *id; /* echoed in the reply; NULL: none */
	char arg[CTL_MAX_ARG]; /* stat: NAME; set: KEY */
	char value[CTL_MAX_ARG]; /* set: VALUE */
};

const char *ctl_cmd_name(enum ctl_cmd cmd);
const char *ctl_error_name(enum ctl_error code);

/*
 * The keys `set` takes (NULL-terminated, sorted): the options that
 * can change while the VM runs, with their command-line values. The one
 * list: sched picks the parser by it, the control plane's unknown-key and
 * not-at-runtime errors, `hintvm ctl --help`, the man pages and the
 * completion print it, and the docs test holds docs/control-socket.md to
 * it.
 */
extern const char *const ctl_set_keys[];

/* ctl_set_keys as "a, b, c" into BUF (cut to LEN); returns BUF. */
char *ctl_set_keys_text(char *buf, size_t len);

/*
 * Parse one request line of LEN bytes (no newline; it may hold NULs,
 * which are refused). Returns CTL_OK with REQ filled, or an error code
 * with a sentence in MSG; REQ->id is set whenever the line had an id, so
 * that even a refusal can be matched to its request. Release REQ with
 * ctl_request_release() either way.
 */
enum ctl_error ctl_parse_request(const char *line, size_t len,
				 struct ctl_request *req, char *msg,
				 size_t msg_len);
void ctl_request_release(struct ctl_request *req);

/* {"v":1[,"id":ID],"ok":true}: add the result's fields, then format. */
struct json_object *ctl_reply_ok(const struct ctl_request *req);

/* {"v":1[,"id":ID],"ok":false,"code":"...","error":"MSG"} */
struct json_object *ctl_reply_error(const struct ctl_request *req,
				    enum ctl_error code, const char *msg);

/* {"v":1,"event":"KIND","seq":SEQ,"time_ns":T}: add the details. */
struct json_object *ctl_event_new(const char *kind, uint64_t seq,
				  uint64_t time_ns);

/*
 * The object as one line with its '\n', malloc'ed (*LEN bytes, without
 * the NUL); drops the reference to OBJ. NULL on ENOMEM.
 */
char *ctl_format_line(struct json_object *obj, size_t *len);

#endif
