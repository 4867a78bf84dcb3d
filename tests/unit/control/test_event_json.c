// SPDX-License-Identifier: LGPL-2.1-or-later
/* A VM's events in their wire form: what `hintvm ctl NAME events` prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/control_proto.h"
#include "control/event_json.h"

static void test_json(void **state)
{
	struct vm_event ev = { .seq = 3,
			       .time_ns = 5,
			       .kind = VM_EVENT_EXIT,
			       .vcpu = -1,
			       .a = 0,
			       .text = "poweroff",
			       .detail = "the guest powered off" };
	char *line;
	size_t len;

	line = ctl_format_line(event_to_json(&ev), &len);
	assert_string_equal(
		line,
		"{\"v\":1,\"event\":\"exit\",\"seq\":3,\"time_ns\":5,\"reason\":\"poweroff\",\"status\":0,\"detail\":\"the guest powered off\"}\n");
	free(line);
	ev = (struct vm_event){ .kind = VM_EVENT_SET,
				.vcpu = -1,
				.text = "halt-poll=20000" };
	line = ctl_format_line(event_to_json(&ev), &len);
	assert_non_null(
		strstr(line, "\"key\":\"halt-poll\",\"value\":\"20000\""));
	free(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
