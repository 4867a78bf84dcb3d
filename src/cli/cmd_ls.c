// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm ls: one line per running VM of this runtime directory, from each
 * VM's own answer to `status` (so nothing can be out of date), or with
 * --json one array of those answers.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl_client.h"
#include "hintvm/hintvm.h"

#define STATUS_TIMEOUT_MS 2000

static void usage(FILE *out)
{
	cli_usage(out, "ls");
}

static const char *str(struct json_object *obj, const char *key)
{
	struct json_object *v = json_path(obj, key);

	return v ? json_object_get_string(v) : "-";
}

static void format_uptime(struct json_object *status, char *buf, size_t len)
{
	struct json_object *v = json_path(status, "uptime_ns");
	unsigned long long s;

	if (!v) {
		snprintf(buf, len, "-");
		return;
	}
	s = (unsigned long long)json_object_get_int64(v) / 1000000000ull;
	if (s >= 86400)
		snprintf(buf, len, "%llud%02lluh", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, len, "%lluh%02llum", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%llum%02llus", s / 60, s % 60);
}

int cmd_ls(int argc, char **argv)
{
	struct json_object *all;
	struct hvm_vm_entry *vms;
	bool json = false;
	size_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			fprintf(stderr,
				"hintvm ls: unexpected argument '%s' (see hintvm ls --help)\n",
				argv[i]);
			return 2;
		}
	}
	if (hvm_list_vms(&vms, &n) < 0) {
		fprintf(stderr, "hintvm ls: %s\n", hvm_last_error());
		return 2;
	}
	all = json_object_new_array();
	if (!json)
		printf("%-20s %8s %5s %8s %-9s %-11s %8s\n", "NAME", "PID",
		       "VCPUS", "MEM", "STATE", "COMMIT", "UPTIME");
	for (size_t i = 0; i < n; i++) {
		struct json_object *st =
			ctl_call(vms[i].socket, "status", STATUS_TIMEOUT_MS);
		char mem[24], uptime[24];

		if (!st) {
			/* Registered but silent: say so rather than hide it. */
			st = json_object_new_object();
			json_object_object_add(
				st, "state",
				json_object_new_string("no-answer"));
		}
		json_object_object_add(st, "name",
				       json_object_new_string(vms[i].name));
		json_object_object_add(st, "socket",
				       json_object_new_string(vms[i].socket));
		if (json) {
			json_object_array_add(all, st);
			continue;
		}
		snprintf(mem, sizeof(mem), "%sM", str(st, "mem_mib"));
		format_uptime(st, uptime, sizeof(uptime));
		printf("%-20s %8s %5s %8s %-9s %-11s %8s\n", vms[i].name,
		       str(st, "pid"), str(st, "vcpus"),
		       json_path(st, "mem_mib") ? mem : "-", str(st, "state"),
		       str(st, "commit"), uptime);
		json_object_put(st);
	}
	if (json)
		printf("%s\n",
		       json_object_to_json_string_ext(
			       all, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(all);
	free(vms);
	return 0;
}
