// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * containerd-shim-hintvm-v2: the flags containerd 1.6 passes, then one of
 * its binary commands (start, delete) or, without one, the long-lived
 * shim serving the Task service (docs/shim.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hintvm/hintvm.h"
#include "runtime/guest_config.h"
#include "shim/shim.h"

/* The runtime library's globals: the shim is its only command line. */
struct rt_globals rt = {
	.root = SHIM_STATE_ROOT,
	.config_path = RT_DEFAULT_CONFIG,
};

static const char *const string_flags[] = {
	"namespace", "id", "address", "publish-binary", "bundle", "socket",
};

static const char **string_flag(struct shim_flags *f, const char *name)
{
	const char **slots[] = { &f->namespace,	     &f->id,	 &f->address,
				 &f->publish_binary, &f->bundle, &f->socket };

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if (!strcmp(name, string_flags[i]))
			return slots[i];
	return NULL;
}

/*
 * Go's flag package: "-name value", "-name=value", "--name" alike, and
 * booleans without a value; the first argument that is no flag is the
 * action and ends the flags.
 */
int shim_parse_flags(int argc, char **argv, struct shim_flags *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		const char **slot;
		char name[32];
		size_t len;

		if (a[0] != '-' || !strcmp(a, "-") || !strcmp(a, "--")) {
			if (!strcmp(a, "--"))
				i++;
			f->action = i < argc ? argv[i] : NULL;
			return 0;
		}
		a += a[1] == '-' ? 2 : 1;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		if (len >= sizeof(name)) {
			fprintf(stderr, SHIM_NAME ": unknown flag %s\n",
				argv[i]);
			return -1;
		}
		memcpy(name, a, len);
		name[len] = '\0';
		if (!strcmp(name, "debug") || !strcmp(name, "v")) {
			bool on = !eq || !strcmp(eq + 1, "true");

			if (eq && strcmp(eq + 1, "true") &&
			    strcmp(eq + 1, "false")) {
				fprintf(stderr,
					SHIM_NAME
					": -%s=%s: expected true or false\n",
					name, eq + 1);
				return -1;
			}
			*(name[0] == 'd' ? &f->debug : &f->version) = on;
			continue;
		}
		slot = string_flag(f, name);
		if (!slot) {
			fprintf(stderr, SHIM_NAME ": unknown flag -%s\n", name);
			return -1;
		}
		if (eq) {
			*slot = eq + 1;
		} else if (i + 1 < argc) {
			*slot = argv[++i];
		} else {
			fprintf(stderr, SHIM_NAME ": flag -%s needs a value\n",
				name);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *env_config = getenv("HINTVM_RUNTIME_CONFIG");
	struct shim_flags f;

	if (shim_parse_flags(argc, argv, &f))
		return 1;
	if (f.version) {
		printf("%s:\n  Version:  %s\n  Runtime:  hintvm (one VM per task)\n",
		       argv[0], hvm_version());
		return 0;
	}
	if (env_config && *env_config)
		rt.config_path = env_config;
	if (!f.namespace || !*f.namespace) {
		fprintf(stderr, SHIM_NAME ": shim namespace cannot be empty\n");
		return 1;
	}
	if (shim_set_state_root(f.namespace))
		return 1;
	rt.debug = f.debug;
	if (!f.action)
		return shim_serve(&f) ? 1 : 0;
	if (!strcmp(f.action, "start"))
		return shim_cmd_start(&f, argv[0]) ? 1 : 0;
	if (!strcmp(f.action, "delete"))
		return shim_cmd_delete(&f) ? 1 : 0;
	fprintf(stderr,
		SHIM_NAME
		": unknown command \"%s\": expected start, delete or none\n",
		f.action);
	return 1;
}
