// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/control_proto.h"

/* A request is a flat object: deeper nesting is refused while parsing. */
#define REQUEST_MAX_DEPTH 4

static const struct {
	const char *name;
	unsigned int nr_args; /* words after the command */
} commands[CTL_CMD_COUNT] = {
	[CTL_CMD_STATUS] = { "status", 0 },
	[CTL_CMD_INFO] = { "info", 0 },
	[CTL_CMD_STATS] = { "stats", 0 },
	[CTL_CMD_STAT] = { "stat", 1 },
	[CTL_CMD_PAUSE] = { "pause", 0 },
	[CTL_CMD_RESUME] = { "resume", 0 },
	[CTL_CMD_STOP] = { "stop", 0 },
	[CTL_CMD_SET] = { "set", 2 },
	[CTL_CMD_EVENTS] = { "events", 0 },
	[CTL_CMD_SNAPSHOT] = { "snapshot", 1 },
};

const char *const ctl_set_keys[] = {
	"halt-poll", "pin", "sched-hints", "stats", "stats-interval", NULL,
};

static const char *const error_names[CTL_E_COUNT] = {
	[CTL_OK] = "ok",
	[CTL_E_BAD_JSON] = "bad-json",
	[CTL_E_BAD_REQUEST] = "bad-request",
	[CTL_E_VERSION] = "unsupported-version",
	[CTL_E_UNKNOWN_REQUEST] = "unknown-request",
	[CTL_E_TOO_LONG] = "too-long",
	[CTL_E_UNKNOWN_STAT] = "unknown-stat",
	[CTL_E_UNKNOWN_KEY] = "unknown-key",
	[CTL_E_NOT_RUNTIME] = "not-at-runtime",
	[CTL_E_BAD_VALUE] = "bad-value",
	[CTL_E_STATE] = "wrong-state",
	[CTL_E_BUSY] = "busy",
	[CTL_E_INTERNAL] = "internal",
	[CTL_E_PERMISSION] = "permission-denied",
};

const char *ctl_cmd_name(enum ctl_cmd cmd)
{
	return (unsigned int)cmd < CTL_CMD_COUNT ? commands[cmd].name : "?";
}

const char *ctl_error_name(enum ctl_error code)
{
	return (unsigned int)code < CTL_E_COUNT ? error_names[code]
						: "internal";
}

char *ctl_set_keys_text(char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = 0;
	for (unsigned int i = 0; ctl_set_keys[i] && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
				 ctl_set_keys[i]);

		if (n < 0)
			break;
		at += (size_t)n;
	}
	return buf;
}

static enum ctl_error fail(enum ctl_error code, char *msg, size_t msg_len,
			   const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum ctl_error fail(enum ctl_error code, char *msg, size_t msg_len,
			   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msg_len, fmt, ap);
	va_end(ap);
	return code;
}

/* Up to 32 printable characters of S for an error message. */
static void shown(const char *s, size_t len, char *out, size_t out_len)
{
	size_t n = 0;

	for (; n < len && n < 32 && n + 1 < out_len; n++)
		out[n] = (s[n] >= 0x20 && s[n] < 0x7f && s[n] != '"' &&
			  s[n] != '\\')
				 ? s[n]
				 : '?';
	out[n] = '\0';
}

static void expected_commands(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < CTL_CMD_COUNT && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 commands[i].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static enum ctl_error find_command(const char *word, size_t len,
				   enum ctl_cmd *cmd, char *msg, size_t msg_len)
{
	char what[40], expected[128];

	for (unsigned int i = 0; i < CTL_CMD_COUNT; i++) {
		if (strlen(commands[i].name) == len &&
		    !memcmp(commands[i].name, word, len)) {
			*cmd = (enum ctl_cmd)i;
			return CTL_OK;
		}
	}
	shown(word, len, what, sizeof(what));
	expected_commands(expected, sizeof(expected));
	return fail(CTL_E_UNKNOWN_REQUEST, msg, msg_len,
		    "unknown request '%s'; expected %s", what, expected);
}

static enum ctl_error copy_arg(char *dst, const char *src, size_t len,
			       const char *what, char *msg, size_t msg_len)
{
	if (len == 0)
		return fail(CTL_E_BAD_REQUEST, msg, msg_len, "%s is empty",
			    what);
	if (len >= CTL_MAX_ARG)
		return fail(CTL_E_BAD_REQUEST, msg, msg_len,
			    "%s is longer than %d bytes", what,
			    CTL_MAX_ARG - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
	return CTL_OK;
}

static const char *const arg_names[CTL_CMD_COUNT][2] = {
	[CTL_CMD_STAT] = { "name", NULL },
	[CTL_CMD_SET] = { "key", "value" },
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* "set halt-poll 20000": the command, then up to two arguments. */
static enum ctl_error parse_words(const char *line, size_t len,
				  struct ctl_request *req, char *msg,
				  size_t msg_len)
{
	const char *word[4];
	size_t word_len[4], nr = 0, i = 0;
	enum ctl_error e;

	while (i < len) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len)
			break;
		if (nr == 4)
			return fail(
				CTL_E_BAD_REQUEST, msg, msg_len,
				"too many words; expected a request and at most two arguments");
		word[nr] = line + i;
		while (i < len && !is_blank(line[i]))
			i++;
		word_len[nr] = (size_t)(line + i - word[nr]);
		nr++;
	}
	if (nr == 0)
		return fail(
			CTL_E_BAD_REQUEST, msg, msg_len,
			"empty request; expected a JSON object or a word such as status");
	e = find_command(word[0], word_len[0], &req->cmd, msg, msg_len);
	if (e != CTL_OK)
		return e;
	if (nr - 1 != commands[req->cmd].nr_args) {
		static const char *const usage[CTL_CMD_COUNT] = {
			[CTL_CMD_STAT] = " NAME",
			[CTL_CMD_SET] = " KEY VALUE",
		};

		return fail(CTL_E_BAD_REQUEST, msg, msg_len, "expected '%s%s'",
			    commands[req->cmd].name,
			    usage[req->cmd] ? usage[req->cmd] : "");
	}
	if (nr > 1) {
		e = copy_arg(req->arg, word[1], word_len[1],
			     arg_names[req->cmd][0], msg, msg_len);
		if (e != CTL_OK)
			return e;
	}
	if (nr > 2)
		return copy_arg(req->value, word[2], word_len[2],
				arg_names[req->cmd][1], msg, msg_len);
	return CTL_OK;
}

/* A "value" may be given as a string, a number or a boolean. */
static enum ctl_error json_arg(struct json_object *obj, const char *field,
			       char *dst, char *msg, size_t msg_len)
{
	struct json_object *v;
	const char *s;
	char num[32];

	if (!json_object_object_get_ex(obj, field, &v) || !v)
		return fail(CTL_E_BAD_REQUEST, msg, msg_len,
			    "\"%s\" is missing", field);
	switch (json_object_get_type(v)) {
	case json_type_string:
		s = json_object_get_string(v);
		return copy_arg(dst, s, (size_t)json_object_get_string_len(v),
				field, msg, msg_len);
	case json_type_int:
		if (json_object_get_int64(v) < 0)
			snprintf(num, sizeof(num), "%lld",
				 (long long)json_object_get_int64(v));
		else
			snprintf(num, sizeof(num), "%llu",
				 (unsigned long long)json_object_get_uint64(v));
		return copy_arg(dst, num, strlen(num), field, msg, msg_len);
	case json_type_boolean:
		s = json_object_get_boolean(v) ? "on" : "off";
		return copy_arg(dst, s, strlen(s), field, msg, msg_len);
	default:
		return fail(CTL_E_BAD_REQUEST, msg, msg_len,
			    "\"%s\" must be a string, a number or a boolean",
			    field);
	}
}

static enum ctl_error parse_json(const char *line, size_t len,
				 struct ctl_request *req, char *msg,
				 size_t msg_len)
{
	struct json_tokener *tok = json_tokener_new_ex(REQUEST_MAX_DEPTH);
	struct json_object *obj, *v;
	enum ctl_error e = CTL_OK;
	size_t end;

	if (!tok)
		return fail(CTL_E_INTERNAL, msg, msg_len, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, line, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error err = json_tokener_get_error(tok);

		json_tokener_free(tok);
		json_object_put(obj);
		return fail(CTL_E_BAD_JSON, msg, msg_len,
			    "not a JSON object: %s",
			    err == json_tokener_continue
				    ? "unexpected end of line"
				    : json_tokener_error_desc(err));
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (end < len && is_blank(line[end]))
		end++;
	if (end != len) {
		json_object_put(obj);
		return fail(
			CTL_E_BAD_JSON, msg, msg_len,
			"text after the JSON object; send one object per line");
	}
	if (!json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		return fail(CTL_E_BAD_JSON, msg, msg_len,
			    "a request is a JSON object, not %s",
			    json_type_to_name(json_object_get_type(obj)));
	}
	/* The id first: even a refused request can be matched to it. */
	if (json_object_object_get_ex(obj, "id", &v)) {
		if (json_object_is_type(v, json_type_string) ||
		    json_object_is_type(v, json_type_int))
			req->id = json_object_get(v);
		else
			e = fail(CTL_E_BAD_REQUEST, msg, msg_len,
				 "\"id\" must be a string or an integer");
	}
	if (e == CTL_OK && json_object_object_get_ex(obj, "v", &v) &&
	    (!json_object_is_type(v, json_type_int) ||
	     json_object_get_int64(v) != CTL_PROTOCOL_VERSION))
		e = fail(
			CTL_E_VERSION, msg, msg_len,
			"protocol version %s is not served; this VM speaks \"v\":%d",
			json_object_to_json_string_ext(v,
						       JSON_C_TO_STRING_PLAIN),
			CTL_PROTOCOL_VERSION);
	if (e == CTL_OK && (!json_object_object_get_ex(obj, "cmd", &v) ||
			    !json_object_is_type(v, json_type_string)))
		e = fail(CTL_E_BAD_REQUEST, msg, msg_len,
			 "\"cmd\" is missing or not a string");
	if (e == CTL_OK)
		e = find_command(json_object_get_string(v),
				 (size_t)json_object_get_string_len(v),
				 &req->cmd, msg, msg_len);
	for (unsigned int i = 0; e == CTL_OK && i < 2; i++)
		if (arg_names[req->cmd][i])
			e = json_arg(obj, arg_names[req->cmd][i],
				     i ? req->value : req->arg, msg, msg_len);
	json_object_put(obj);
	return e;
}

enum ctl_error ctl_parse_request(const char *line, size_t len,
				 struct ctl_request *req, char *msg,
				 size_t msg_len)
{
	size_t start = 0;

	memset(req, 0, sizeof(*req));
	if (msg_len)
		msg[0] = '\0';
	if (len > CTL_MAX_REQUEST)
		return fail(CTL_E_TOO_LONG, msg, msg_len,
			    "request longer than %d bytes", CTL_MAX_REQUEST);
	if (memchr(line, '\0', len))
		return fail(CTL_E_BAD_REQUEST, msg, msg_len,
			    "request holds a NUL byte");
	while (start < len && is_blank(line[start]))
		start++;
	if (start < len && line[start] == '{') {
		req->json = true;
		return parse_json(line + start, len - start, req, msg, msg_len);
	}
	return parse_words(line + start, len - start, req, msg, msg_len);
}

void ctl_request_release(struct ctl_request *req)
{
	json_object_put(req->id);
	req->id = NULL;
}

static struct json_object *reply_head(const struct ctl_request *req, bool ok)
{
	struct json_object *obj = json_object_new_object();

	if (!obj)
		return NULL;
	json_object_object_add(obj, "v",
			       json_object_new_int(CTL_PROTOCOL_VERSION));
	if (req && req->id)
		json_object_object_add(obj, "id", json_object_get(req->id));
	json_object_object_add(obj, "ok", json_object_new_boolean(ok));
	return obj;
}

struct json_object *ctl_reply_ok(const struct ctl_request *req)
{
	return reply_head(req, true);
}

struct json_object *ctl_reply_error(const struct ctl_request *req,
				    enum ctl_error code, const char *msg)
{
	struct json_object *obj = reply_head(req, false);

	if (!obj)
		return NULL;
	json_object_object_add(obj, "code",
			       json_object_new_string(ctl_error_name(code)));
	json_object_object_add(obj, "error", json_object_new_string(msg));
	return obj;
}

struct json_object *ctl_event_new(const char *kind, uint64_t seq,
				  uint64_t time_ns)
{
	struct json_object *obj = json_object_new_object();

	if (!obj)
		return NULL;
	json_object_object_add(obj, "v",
			       json_object_new_int(CTL_PROTOCOL_VERSION));
	json_object_object_add(obj, "event", json_object_new_string(kind));
	json_object_object_add(obj, "seq", json_object_new_uint64(seq));
	json_object_object_add(obj, "time_ns", json_object_new_uint64(time_ns));
	return obj;
}

char *ctl_format_line(struct json_object *obj, size_t *len)
{
	const char *text;
	size_t n;
	char *line;

	if (!obj)
		return NULL;
	text = json_object_to_json_string_ext(
		obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	n = text ? strlen(text) : 0;
	line = text ? malloc(n + 2) : NULL;
	if (line) {
		memcpy(line, text, n);
		line[n] = '\n';
		line[n + 1] = '\0';
		*len = n + 1;
	}
	json_object_put(obj);
	return line;
}
