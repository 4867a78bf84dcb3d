// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The flags containerd 1.6 passes its shims (runtime/v2/shim/shim.go),
 * parsed by the rules of Go's flag package, which containerd's own shims
 * use: containerd may write any of its spellings.
 */
#include <stdio.h>
#include <string.h>

#include "shim/shim.h"

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
