/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef HVM_CLI_H
#define HVM_CLI_H

/* One subcommand of the hintvm command line (git/perf style). */
struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

int cmd_run(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
