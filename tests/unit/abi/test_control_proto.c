// SPDX-License-Identifier: LGPL-2.1-or-later
/* Protocol v1 of the control socket: what a client may send, what it gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "abi/control_proto.h"

static enum ctl_error parse(const char *line, struct ctl_request *req,
			    char *msg, size_t len)
{
	return ctl_parse_request(line, strlen(line), req, msg, len);
}

static void test_words(void **state)
{
	struct ctl_request req;
	char msg[256];

	assert_int_equal(parse("status", &req, msg, sizeof(msg)), CTL_OK);
	assert_int_equal(req.cmd, CTL_CMD_STATUS);
	assert_false(req.json);
	ctl_request_release(&req);
	assert_int_equal(parse("  stat  exits ", &req, msg, sizeof(msg)),
			 CTL_OK);
	assert_int_equal(req.cmd, CTL_CMD_STAT);
	assert_string_equal(req.arg, "exits");
	ctl_request_release(&req);
	assert_int_equal(parse("set halt-poll 20000", &req, msg, sizeof(msg)),
			 CTL_OK);
	assert_string_equal(req.arg, "halt-poll");
	assert_string_equal(req.value, "20000");
	ctl_request_release(&req);

	assert_int_equal(parse("reboot-now", &req, msg, sizeof(msg)),
			 CTL_E_UNKNOWN_REQUEST);
	assert_non_null(
		strstr(msg, "unknown request 'reboot-now'; expected status"));
	ctl_request_release(&req);
	assert_int_equal(parse("stat", &req, msg, sizeof(msg)),
			 CTL_E_BAD_REQUEST);
	assert_non_null(strstr(msg, "expected 'stat NAME'"));
	ctl_request_release(&req);
	assert_int_equal(parse("status now", &req, msg, sizeof(msg)),
			 CTL_E_BAD_REQUEST);
	ctl_request_release(&req);
	assert_int_equal(parse("", &req, msg, sizeof(msg)), CTL_E_BAD_REQUEST);
	ctl_request_release(&req);
	assert_int_equal(parse("a b c d e", &req, msg, sizeof(msg)),
			 CTL_E_BAD_REQUEST);
	ctl_request_release(&req);
}

static void test_json(void **state)
{
	struct ctl_request req;
	char msg[256];

	assert_int_equal(
		parse("{\"v\":1,\"id\":7,\"cmd\":\"stat\",\"name\":\"exits\"}",
		      &req, msg, sizeof(msg)),
		CTL_OK);
	assert_true(req.json);
	assert_int_equal(req.cmd, CTL_CMD_STAT);
	assert_string_equal(req.arg, "exits");
	assert_int_equal(json_object_get_int(req.id), 7);
	ctl_request_release(&req);

	/* Values may be numbers or booleans; no "v" means v1. */
	assert_int_equal(
		parse("{\"cmd\":\"set\",\"key\":\"halt-poll\",\"value\":20000}",
		      &req, msg, sizeof(msg)),
		CTL_OK);
	assert_string_equal(req.value, "20000");
	ctl_request_release(&req);
	assert_int_equal(
		parse("{\"cmd\":\"set\",\"key\":\"sched-hints\",\"value\":false}",
		      &req, msg, sizeof(msg)),
		CTL_OK);
	assert_string_equal(req.value, "off");
	ctl_request_release(&req);
	/* Fields a later version adds are ignored. */
	assert_int_equal(parse("{\"cmd\":\"status\",\"future\":[1,2]}", &req,
			       msg, sizeof(msg)),
			 CTL_OK);
	ctl_request_release(&req);
}

static void test_json_errors(void **state)
{
	static const struct {
		const char *line;
		enum ctl_error code;
		const char *msg;
	} cases[] = {
		{ "{\"cmd\":", CTL_E_BAD_JSON, "unexpected end" },
		{ "{\"cmd\":\"status\"} x", CTL_E_BAD_JSON, "not a JSON" },
		{ "{'cmd':'status'}", CTL_E_BAD_JSON, "not a JSON object" },
		{ "{\"v\":2,\"cmd\":\"status\"}", CTL_E_VERSION, "version 2" },
		{ "{\"v\":\"1\",\"cmd\":\"status\"}", CTL_E_VERSION, "" },
		{ "{\"id\":1}", CTL_E_BAD_REQUEST, "\"cmd\" is missing" },
		{ "{\"cmd\":5}", CTL_E_BAD_REQUEST, "not a string" },
		{ "{\"cmd\":\"fly\"}", CTL_E_UNKNOWN_REQUEST, "'fly'" },
		{ "{\"cmd\":\"stat\"}", CTL_E_BAD_REQUEST,
		  "\"name\" is missing" },
		{ "{\"cmd\":\"set\",\"key\":\"pin\"}", CTL_E_BAD_REQUEST,
		  "\"value\" is missing" },
		{ "{\"cmd\":\"set\",\"key\":\"pin\",\"value\":[1]}",
		  CTL_E_BAD_REQUEST, "string, a number or a boolean" },
		{ "{\"cmd\":\"stat\",\"name\":\"\"}", CTL_E_BAD_REQUEST,
		  "empty" },
		{ "{\"cmd\":\"status\",\"id\":[1]}", CTL_E_BAD_REQUEST,
		  "\"id\" must be" },
		{ "{\"a\":{\"b\":{\"c\":{\"d\":{}}}}}", CTL_E_BAD_JSON, "" },
	};
	struct ctl_request req;
	char msg[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum ctl_error e = parse(cases[i].line, &req, msg, sizeof(msg));

		if (e != cases[i].code || !strstr(msg, cases[i].msg))
			fail_msg("%s: got %s '%s'", cases[i].line,
				 ctl_error_name(e), msg);
		ctl_request_release(&req);
	}
}

static void test_limits(void **state)
{
	char line[CTL_MAX_REQUEST + 2];
	struct ctl_request req;
	char msg[256];

	memset(line, 'y', sizeof(line));
	assert_int_equal(
		ctl_parse_request(line, sizeof(line), &req, msg, sizeof(msg)),
		CTL_E_TOO_LONG);
	ctl_request_release(&req);
	assert_int_equal(
		ctl_parse_request("stat\0x", 6, &req, msg, sizeof(msg)),
		CTL_E_BAD_REQUEST);
	assert_non_null(strstr(msg, "NUL"));
	ctl_request_release(&req);
	/* An argument longer than CTL_MAX_ARG. */
	memcpy(line, "stat ", 5);
	line[600] = '\0';
	assert_int_equal(parse(line, &req, msg, sizeof(msg)),
			 CTL_E_BAD_REQUEST);
	ctl_request_release(&req);
}

static void test_replies(void **state)
{
	struct ctl_request req;
	char msg[256], *line;
	size_t len;

	assert_int_equal(parse("{\"id\":\"a\\\"b\",\"cmd\":\"status\"}", &req,
			       msg, sizeof(msg)),
			 CTL_OK);
	line = ctl_format_line(ctl_reply_ok(&req), &len);
	assert_string_equal(line, "{\"v\":1,\"id\":\"a\\\"b\",\"ok\":true}\n");
	assert_int_equal(len, strlen(line));
	free(line);
	line = ctl_format_line(
		ctl_reply_error(&req, CTL_E_STATE, "the VM is \"paused\"/x"),
		&len);
	assert_string_equal(
		line,
		"{\"v\":1,\"id\":\"a\\\"b\",\"ok\":false,\"code\":\"wrong-state\",\"error\":\"the VM is \\\"paused\\\"/x\"}\n");
	free(line);
	ctl_request_release(&req);
	/* Every code has a distinct, stable name. */
	for (int i = 0; i < CTL_E_COUNT; i++)
		for (int j = 0; j < i; j++)
			assert_string_not_equal(ctl_error_name(i),
						ctl_error_name(j));
	assert_string_equal(ctl_error_name(CTL_E_UNKNOWN_REQUEST),
			    "unknown-request");
}

/* The keys of `set` as error texts and --help print them, cut to fit. */
static void test_set_keys_text(void **state)
{
	char buf[128], small[8];

	assert_string_equal(
		ctl_set_keys_text(buf, sizeof(buf)),
		"halt-poll, pin, sched-hints, stats, stats-interval");
	assert_string_equal(ctl_set_keys_text(small, sizeof(small)), "halt-po");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_set_keys_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
