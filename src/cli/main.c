// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hintvm/hintvm.h"

static const struct cli_command commands[] = {
	{ "run", "boot a virtual machine", cmd_run },
	{ "ctl", "query or steer a running VM through its control socket",
	  cmd_ctl },
	{ "ls", "list the running VMs", cmd_ls },
	{ "top", "watch every running VM's vCPUs live", cmd_top },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: hintvm [--help] [--version] COMMAND [ARGS]\n\n"
		     "commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(out, "\nhintvm COMMAND --help describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return HVM_STATUS_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hintvm %s\n", hvm_version());
		return 0;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr,
		"hintvm: '%s' is not a command; expected one of:", argv[1]);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(stderr, " %s", commands[i].name);
	fprintf(stderr, " (see hintvm --help)\n");
	return HVM_STATUS_USAGE;
}
