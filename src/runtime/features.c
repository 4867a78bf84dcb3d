// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * features: what this runtime implements, as the runtime-spec's
 * features.md document (engines read it to decide what they may ask for).
 */
#include <json-c/json.h>
#include <stdio.h>

#include "hintvm/hintvm.h"
#include "runtime.h"

static struct json_object *string_array(const char *const *items)
{
	struct json_object *a = json_object_new_array();

	for (; *items; items++)
		json_object_array_add(a, json_object_new_string(*items));
	return a;
}

int cmd_features(int argc, char **argv)
{
	static const char *const mount_options[] = { "ro", "rw", "bind",
						     "rbind", NULL };
	static const char *const namespaces[] = { "network", "pid", "mount",
						  "ipc",     "uts", NULL };
	static const char *const none[] = { NULL };
	struct json_object *o = json_object_new_object();
	struct json_object *lx = json_object_new_object();
	struct json_object *cgroup = json_object_new_object();
	struct json_object *seccomp = json_object_new_object();
	struct json_object *ann = json_object_new_object();

	(void)argc;
	(void)argv;
	json_object_object_add(o, "ociVersionMin",
			       json_object_new_string("1.0.0"));
	json_object_object_add(o, "ociVersionMax",
			       json_object_new_string(RT_OCI_VERSION));
	json_object_object_add(o, "hooks", string_array(none));
	json_object_object_add(o, "mountOptions", string_array(mount_options));
	json_object_object_add(lx, "namespaces", string_array(namespaces));
	json_object_object_add(lx, "capabilities", string_array(none));
	json_object_object_add(cgroup, "v1", json_object_new_boolean(1));
	json_object_object_add(cgroup, "v2", json_object_new_boolean(1));
	json_object_object_add(cgroup, "systemd", json_object_new_boolean(0));
	json_object_object_add(cgroup, "systemdUser",
			       json_object_new_boolean(0));
	json_object_object_add(lx, "cgroup", cgroup);
	json_object_object_add(seccomp, "enabled", json_object_new_boolean(0));
	json_object_object_add(lx, "seccomp", seccomp);
	json_object_object_add(o, "linux", lx);
	json_object_object_add(ann, "io.hintvm.runtime",
			       json_object_new_string(hvm_version()));
	json_object_object_add(o, "annotations", ann);
	printf("%s\n", json_object_to_json_string_ext(
			       o, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}
