// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm-runtime: an OCI runtime with runc's command line, so that
 * containerd (runc shim, BinaryName) and podman (--runtime) run each
 * container in a hintvm VM. Global options first, then one command.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_config.h"
#include "hintvm/hintvm.h"
#include "runtime.h"

struct rt_globals rt = {
	.root = RT_DEFAULT_ROOT,
	.config_path = RT_DEFAULT_CONFIG,
};

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "create", cmd_create,
	  "create a container (boot its VM, not its process)" },
	{ "start", cmd_start, "start the process of a created container" },
	{ "run", cmd_run, "create and start a container" },
	{ "state", cmd_state, "print a container's state (runtime-spec JSON)" },
	{ "kill", cmd_kill,
	  "send a signal to a container (SIGKILL ends its VM)" },
	{ "delete", cmd_delete, "delete a stopped container (--force: any)" },
	{ "exec", cmd_exec, "run another process in a running container" },
	{ "ps", cmd_ps, "list a container's host processes" },
	{ "pause", cmd_pause, "pause every vCPU of a container's VM" },
	{ "resume", cmd_resume, "resume a paused container" },
	{ "list", cmd_list, "list containers under --root" },
	{ "update", cmd_update, "update resources (not supported)" },
	{ "features", cmd_features,
	  "print the features this runtime has (JSON)" },
	{ "spec", cmd_spec,
	  "write a starter config.json into the bundle (--bundle DIR)" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hintvm-runtime [GLOBAL OPTIONS] COMMAND [OPTIONS] ID\n\n"
		"An OCI runtime with runc's command line: every container runs in a\n"
		"hintvm VM. See docs/oci-runtime.md.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\nGlobal options:\n"
		"  --root DIR          state directory (default " RT_DEFAULT_ROOT
		")\n"
		"  --log FILE          append log entries to FILE\n"
		"  --log-format FMT    text (default) or json\n"
		"  --debug             log debug entries too\n"
		"  --systemd-cgroup    cgroupsPath is in systemd's slice:prefix:name form\n"
		"  --config FILE       runtime configuration (default " RT_DEFAULT_CONFIG
		")\n"
		"  -v, --version       print the version\n"
		"  -h, --help          this help\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "log", required_argument, NULL, 'l' },
		{ "log-format", required_argument, NULL, 'F' },
		{ "debug", no_argument, NULL, 'D' },
		{ "systemd-cgroup", no_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		/* runc's, accepted and meaningless here */
		{ "criu", required_argument, NULL, 'x' },
		{ "rootless", required_argument, NULL, 'x' },
		{ "version", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env_config = getenv("HINTVM_RUNTIME_CONFIG");
	int opt;

	if (env_config && *env_config)
		rt.config_path = env_config;
	while ((opt = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			rt.root = optarg;
			break;
		case 'l':
			rt.log_path = optarg;
			break;
		case 'F':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr,
					"hintvm-runtime: --log-format %s: use text or json\n",
					optarg);
				return 1;
			}
			rt.log_json = !strcmp(optarg, "json");
			break;
		case 'D':
			rt.debug = true;
			break;
		case 's':
			rt.systemd_cgroup = true;
			break;
		case 'c':
			rt.config_path = optarg;
			break;
		case 'x':
			break;
		case 'v':
			printf("hintvm-runtime version %s\nspec: " RT_OCI_VERSION
			       "\n",
			       hvm_version());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[optind], commands[i].name))
			return commands[i].fn(argc - optind, argv + optind);
	rt_error("unknown command \"%s\"", argv[optind]);
	return 1;
}
