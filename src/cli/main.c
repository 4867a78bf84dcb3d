// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hintvm/hintvm.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: hintvm [--help] [--version] COMMAND [ARGS]\n\n"
		     "commands:\n");
	for (unsigned int i = 0; i < cli_nr_commands; i++)
		fprintf(out, "  %-8s %s\n", cli_commands[i].name,
			cli_commands[i].summary);
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
	for (unsigned int i = 0; i < cli_nr_commands; i++) {
		if (!strcmp(argv[1], cli_commands[i].name))
			return cli_commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr,
		"hintvm: '%s' is not a command; expected one of:", argv[1]);
	for (unsigned int i = 0; i < cli_nr_commands; i++)
		fprintf(stderr, " %s", cli_commands[i].name);
	fprintf(stderr, " (see hintvm --help)\n");
	return HVM_STATUS_USAGE;
}
