// SPDX-License-Identifier: LGPL-2.1-or-later
#include <json-c/json.h>
#include <string.h>

#include "abi/control_proto.h"
#include "control/event_json.h"

static const char *const kind_names[VM_EVENT_KIND_COUNT] = {
	[VM_EVENT_STATE] = "state",
	[VM_EVENT_COMMIT] = "commit",
	[VM_EVENT_HALT_POLL] = "halt-poll",
	[VM_EVENT_BOOST] = "boost",
	[VM_EVENT_EXIT] = "exit",
	[VM_EVENT_CONSOLE_DROPPED] = "console-dropped",
	[VM_EVENT_SET] = "set",
};

const char *event_kind_name(enum vm_event_kind kind)
{
	return (unsigned int)kind < VM_EVENT_KIND_COUNT ? kind_names[kind]
							: "unknown";
}

struct json_object *event_to_json(const struct vm_event *ev)
{
	struct json_object *obj =
		ctl_event_new(event_kind_name(ev->kind), ev->seq, ev->time_ns);

	if (!obj)
		return NULL;
	if (ev->vcpu >= 0)
		json_object_object_add(obj, "vcpu",
				       json_object_new_int(ev->vcpu));
	switch (ev->kind) {
	case VM_EVENT_STATE:
		json_object_object_add(obj, "state",
				       json_object_new_string(ev->text));
		break;
	case VM_EVENT_COMMIT:
		json_object_object_add(obj, "commit",
				       json_object_new_string(ev->text));
		break;
	case VM_EVENT_HALT_POLL:
		json_object_object_add(obj, "halt_poll_ns",
				       json_object_new_uint64(ev->a));
		break;
	case VM_EVENT_BOOST:
		json_object_object_add(obj, "cause",
				       json_object_new_string(ev->text));
		json_object_object_add(obj, "suppressed",
				       json_object_new_uint64(ev->a));
		break;
	case VM_EVENT_EXIT:
		json_object_object_add(obj, "reason",
				       json_object_new_string(ev->text));
		json_object_object_add(obj, "status",
				       json_object_new_uint64(ev->a));
		json_object_object_add(obj, "detail",
				       json_object_new_string(ev->detail));
		break;
	case VM_EVENT_CONSOLE_DROPPED:
		json_object_object_add(obj, "bytes",
				       json_object_new_uint64(ev->a));
		break;
	case VM_EVENT_SET: {
		const char *eq = strchr(ev->text, '=');

		json_object_object_add(
			obj, "key",
			json_object_new_string_len(ev->text,
						   eq ? (int)(eq - ev->text)
						      : (int)strlen(ev->text)));
		json_object_object_add(
			obj, "value", json_object_new_string(eq ? eq + 1 : ""));
		break;
	}
	default:
		break;
	}
	return obj;
}
