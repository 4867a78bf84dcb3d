// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Events to containerd: containerd.services.events.ttrpc.v1.Events/Forward
 * on TTRPC_ADDRESS, as containerd 1.6's RemoteEventsPublisher sends them
 * (runtime/v2/shim/publisher.go): an Envelope of (timestamp, namespace,
 * topic, event), the event an Any whose type URL is the message's full
 * protobuf name ("containerd.events.TaskExit"), which is what containerd's
 * typeurl registry maps those types to.
 *
 * One call at a time, 5 s each, on the shim's only thread: a containerd
 * that is away costs the shim that long per event, never a hang. A call
 * that fails on the way reconnects once and retries, as containerd's own
 * publisher does; after that the event is dropped with a log line (no
 * queue: containerd that comes back learns the state through State/Wait).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events_ttrpc.pb-c.h"
#include "pb_any.pb-c.h"
#include "pb_empty.pb-c.h"
#include "shim/shim.h"

#define EVENTS_SERVICE "containerd.services.events.ttrpc.v1.Events"
#define EVENTS_TIMEOUT_MS 5000

void shim_events_init(struct shim_events *ev, const char *ttrpc_address,
		      const char *ns)
{
	memset(ev, 0, sizeof(*ev));
	ev->client.fd = -1;
	if (ttrpc_address) {
		/* containerd may give it as unix://PATH or PATH. */
		if (!strncmp(ttrpc_address, "unix://", 7))
			ttrpc_address += 7;
		snprintf(ev->address, sizeof(ev->address), "%s", ttrpc_address);
	}
	snprintf(ev->ns, sizeof(ev->ns), "%s", ns);
}

void shim_events_close(struct shim_events *ev)
{
	if (ev->connected)
		ttrpc_client_close(&ev->client);
	ev->connected = false;
}

static int
forward(struct shim_events *ev,
	const Containerd__Services__Events__Ttrpc__V1__ForwardRequest *req,
	struct ttrpc_status *st)
{
	ProtobufCMessage *resp = NULL;
	int ret;

	if (!ev->connected) {
		ret = ttrpc_client_connect(&ev->client, ev->address,
					   EVENTS_TIMEOUT_MS);
		if (ret)
			return ret;
		ev->connected = true;
	}
	ret = ttrpc_client_call(&ev->client, EVENTS_SERVICE, "Forward",
				&req->base,
				&google__protobuf__empty__descriptor, &resp, st,
				EVENTS_TIMEOUT_MS);
	if (ret) /* the client closed the connection */
		ev->connected = false;
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	return ret;
}

int shim_events_publish(struct shim_events *ev, const char *topic,
			const ProtobufCMessage *event)
{
	Containerd__Services__Events__Ttrpc__V1__ForwardRequest req =
		CONTAINERD__SERVICES__EVENTS__TTRPC__V1__FORWARD_REQUEST__INIT;
	Containerd__Services__Events__Ttrpc__V1__Envelope env =
		CONTAINERD__SERVICES__EVENTS__TTRPC__V1__ENVELOPE__INIT;
	Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	struct ttrpc_status st = { 0 };
	struct timespec now;
	uint8_t *value;
	int ret;

	if (!ev->address[0])
		return 0;
	any.value.len = protobuf_c_message_get_packed_size(event);
	value = malloc(any.value.len ? any.value.len : 1);
	if (!value)
		return -ENOMEM;
	protobuf_c_message_pack(event, value);
	any.value.data = value;
	any.type_url = (char *)event->descriptor->name;
	clock_gettime(CLOCK_REALTIME, &now);
	ts.seconds = now.tv_sec;
	ts.nanos = (int32_t)now.tv_nsec;
	env.timestamp = &ts;
	env.namespace_ = ev->ns;
	env.topic = (char *)topic;
	env.event = &any;
	req.envelope = &env;

	ret = forward(ev, &req, &st);
	if (ret)
		ret = forward(ev, &req, &st);
	free(value);
	if (ret) {
		rt_error("event %s not sent to containerd at %s: %s", topic,
			 ev->address, strerror(-ret));
		return ret;
	}
	if (st.code != GOOGLE__RPC__CODE__OK) {
		rt_error("event %s refused by containerd: code %d: %s", topic,
			 (int)st.code, st.message);
		return -EPROTO;
	}
	rt_debug("event %s sent", topic);
	return 0;
}
