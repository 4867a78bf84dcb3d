/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VM's events (core/events.h) as protocol v1 event objects: the ring
 * stores plain structs, and only the control plane knows their wire form.
 */
#ifndef HVM_CONTROL_EVENT_JSON_H
#define HVM_CONTROL_EVENT_JSON_H

#include "core/events.h"

struct json_object;

/* The wire name of KIND ("state", "commit", ...). */
const char *event_kind_name(enum vm_event_kind kind);

/* EV as a protocol v1 event object (abi/control_proto.h). */
struct json_object *event_to_json(const struct vm_event *ev);

#endif
