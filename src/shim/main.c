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
