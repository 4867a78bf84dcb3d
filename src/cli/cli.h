/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef HVM_CLI_H
#define HVM_CLI_H

#include <stdio.h>

struct hvm_config;

/* An option of a subcommand other than run (run's come from libhintvm). */
struct cli_option {
	const char *name; /* long name without "--" */
	const char *arg; /* placeholder, or NULL for a flag */
	const char *help;
};

/*
 * One subcommand of the hintvm command line (git/perf style). The table
 * (commands.c) is also what the man page and the shell completion are
 * generated from (gendoc.c), so they cannot drift from --help.
 */
struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	const char *synopsis; /* arguments after "hintvm NAME" */
	const char *description; /* paragraphs, '\n'-separated */
	const struct cli_option *options; /* NULL-terminated, or NULL */
};

extern const struct cli_command cli_commands[];
extern const unsigned int cli_nr_commands;

const struct cli_command *cli_command(const char *name);

/* "usage: hintvm NAME SYNOPSIS", the description and the options. */
void cli_usage(FILE *out, const char *name);

int cmd_run(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_initramfs(int argc, char **argv);
int cmd_template(int argc, char **argv);

/*
 * hintvm run's options (the library's table) and "-- ARGS" into CFG; WHO
 * ("hintvm run", "hintvm template make") prefixes the messages and picks
 * the help -h prints. 0, or -1 after a message on stderr.
 */
int cli_parse_run_options(const char *who, struct hvm_config *cfg, int argc,
			  char **argv);

#endif
