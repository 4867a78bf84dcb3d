// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness: the fuzzer's bytes are one request line on the control
 * socket (anyone with access to the socket can send anything). Whatever
 * the bytes, the parser must answer with a known code, keep its arguments
 * NUL-terminated and in bounds, and the reply built from the outcome must
 * be one line of valid JSON that says the same.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi/control_proto.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req;
	struct json_object *reply, *parsed, *ok;
	char msg[256];
	enum ctl_error e;
	size_t len;
	char *line;

	e = ctl_parse_request((const char *)data, size, &req, msg, sizeof(msg));
	check((unsigned int)e < CTL_E_COUNT);
	check(memchr(msg, '\0', sizeof(msg)));
	check(memchr(req.arg, '\0', sizeof(req.arg)));
	check(memchr(req.value, '\0', sizeof(req.value)));
	if (e == CTL_OK)
		check((unsigned int)req.cmd < CTL_CMD_COUNT);
	else
		check(msg[0]);
	reply = e == CTL_OK ? ctl_reply_ok(&req)
			    : ctl_reply_error(&req, e, msg);
	line = ctl_format_line(reply, &len);
	check(line);
	check(len && line[len - 1] == '\n');
	check(!memchr(line, '\n', len - 1));
	parsed = json_tokener_parse(line);
	check(parsed);
	check(json_object_object_get_ex(parsed, "ok", &ok));
	check(json_object_get_boolean(ok) == (e == CTL_OK));
	json_object_put(parsed);
	free(line);
	ctl_request_release(&req);
	return 0;
}
