// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm-gendoc: writes hintvm(1), libhintvm(3) and the bash completion
 * from the same tables `--help` prints (libhintvm's option table and the
 * subcommand table in commands.c), at build time, so none of them can
 * drift from the program. Not installed; meson installs what it writes.
 *
 *   hintvm-gendoc man1 > hintvm.1
 *   hintvm-gendoc man3 TEMPLATE > libhintvm.3   (@OPTIONS@, @VERSION@)
 *   hintvm-gendoc bash > hintvm                 (bash-completion)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/control_proto.h"
#include "cli.h"
#include "hintvm/hintvm.h"

/* Text for roff: backslashes and dashes escaped, no leading dot. */
static void roff(FILE *out, const char *s)
{
	bool line_start = true;

	for (; *s; s++) {
		if (line_start && (*s == '.' || *s == '\''))
			fputs("\\&", out);
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
		line_start = *s == '\n';
	}
}

static void option_item(FILE *out, char short_name, const char *name,
			const char *arg, const char *help)
{
	fputs(".TP\n", out);
	if (short_name)
		fprintf(out, "\\fB\\-%c\\fR, ", short_name);
	fputs("\\fB\\-\\-", out);
	roff(out, name);
	fputs("\\fR", out);
	if (arg) {
		fputs(" \\fI", out);
		roff(out, arg);
		fputs("\\fR", out);
	}
	fputs("\n", out);
	roff(out, help);
	fputs("\n", out);
}

static void run_options(FILE *out)
{
	const struct hvm_option_info *opts;
	size_t n;

	opts = hvm_options(&n);
	for (size_t i = 0; i < n; i++)
		option_item(out, opts[i].short_name, opts[i].name, opts[i].arg,
			    opts[i].help);
}

static void man1(FILE *out)
{
	fprintf(out,
		".TH HINTVM 1 \"\" \"hintvm %s\" \"User Commands\"\n"
		".SH NAME\n"
		"hintvm \\- a small KVM virtual machine monitor that manages vCPU scheduling\n"
		".SH SYNOPSIS\n",
		hvm_version());
	for (unsigned int i = 0; i < cli_nr_commands; i++) {
		fprintf(out, ".B hintvm %s\n", cli_commands[i].name);
		roff(out, cli_commands[i].synopsis);
		fputs("\n.br\n", out);
	}
	fputs(".B hintvm\n\\-\\-help | \\-\\-version\n"
	      ".SH DESCRIPTION\n"
	      "hintvm boots a Linux kernel (or its built-in test kernel) straight from\n"
	      "the command line on KVM, with no firmware, and manages how its vCPUs\n"
	      "are scheduled on the host: pinning, exit policy, halt polling, boosts\n"
	      "and paravirtual features follow whether the host is under- or\n"
	      "overcommitted. Every running VM has a name and a control socket\n"
	      "through which it can be listed, watched and steered.\n"
	      ".SH COMMANDS\n",
	      out);
	for (unsigned int i = 0; i < cli_nr_commands; i++) {
		const struct cli_command *c = &cli_commands[i];

		fprintf(out, ".SS hintvm %s\n", c->name);
		roff(out, c->description);
		fputs("\n", out);
		if (!strcmp(c->name, "run")) {
			run_options(out);
			option_item(out, 'h', "help", NULL, "show this help");
		}
		for (const struct cli_option *o = c->options; o && o->name; o++)
			option_item(out, 0, o->name, o->arg, o->help);
	}
	fputs(".SH CONTROL REQUESTS\n"
	      "Requests of \\fBhintvm ctl\\fR and the control socket (protocol v1,\n"
	      "one JSON object per line; docs/control-socket.md):\n",
	      out);
	for (unsigned int i = 0; i < CTL_CMD_COUNT; i++)
		fprintf(out, "%s\\fB%s\\fR", i ? ", " : "", ctl_cmd_name(i));
	fputs(".\n.B set\naccepts the keys ", out);
	for (unsigned int i = 0; ctl_set_keys[i]; i++) {
		fputs(i ? ", " : "", out);
		roff(out, ctl_set_keys[i]);
	}
	fputs(".\n"
	      ".SH FILES\n"
	      ".TP\n"
	      ".I $HINTVM_RUNTIME_DIR, /run/hintvm (root), $XDG_RUNTIME_DIR/hintvm, /tmp/hintvm\\-UID\n"
	      "The runtime directory (the first that applies): one\n"
	      ".IB NAME .sock\n"
	      "entry per running VM, its control socket or a link to it.\n"
	      ".SH EXIT STATUS\n"
	      "\\fBhintvm run\\fR: 0 the guest powered off, 2 bad usage or host setup,\n"
	      "4 the guest rebooted, 6 the guest crashed, 8 hintvm failed while\n"
	      "running, 10 stopped by a signal, Ctrl\\-A x or the control socket;\n"
	      "odd values (V << 1) | 1 when the guest wrote V to the debug\\-exit port\n"
	      "0xf4. \\fBhintvm ctl\\fR: 0 ok, 1 refused, 2 nobody answered.\n"
	      ".SH SEE ALSO\n"
	      ".BR libhintvm (3)\n",
	      out);
}

static int man3(FILE *out, const char *template_path)
{
	FILE *in = fopen(template_path, "re");
	char line[1024];

	if (!in) {
		perror(template_path);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		char *at = strstr(line, "@VERSION@");

		if (!strcmp(line, "@OPTIONS@\n")) {
			run_options(out);
		} else if (at) {
			fwrite(line, 1, (size_t)(at - line), out);
			fputs(hvm_version(), out);
			fputs(at + strlen("@VERSION@"), out);
		} else {
			fputs(line, out);
		}
	}
	fclose(in);
	return 0;
}

static void word_list(FILE *out, const char *var, const struct cli_option *opts)
{
	fprintf(out, "\tlocal %s=\"", var);
	for (const struct cli_option *o = opts; o && o->name; o++)
		fprintf(out, "%s--%s", o == opts ? "" : " ", o->name);
	fputs("\"\n", out);
}

static void bash(FILE *out)
{
	const struct hvm_option_info *opts;
	size_t n;

	opts = hvm_options(&n);
	fputs("# bash completion for hintvm (generated by hintvm-gendoc from the option tables)\n"
	      "_hintvm_vm_names()\n"
	      "{\n"
	      "\tlocal dir\n"
	      "\tif [ -n \"$HINTVM_RUNTIME_DIR\" ]; then dir=$HINTVM_RUNTIME_DIR\n"
	      "\telif [ \"$(id -u)\" = 0 ]; then dir=/run/hintvm\n"
	      "\telif [ -n \"$XDG_RUNTIME_DIR\" ]; then dir=$XDG_RUNTIME_DIR/hintvm\n"
	      "\telse dir=/tmp/hintvm-$(id -u); fi\n"
	      "\tlocal f\n"
	      "\tfor f in \"$dir\"/*.sock; do\n"
	      "\t\t[ -e \"$f\" ] || [ -L \"$f\" ] || continue\n"
	      "\t\tf=${f##*/}\n"
	      "\t\techo \"${f%.sock}\"\n"
	      "\tdone\n"
	      "}\n\n"
	      "_hintvm()\n"
	      "{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal cmd=${COMP_WORDS[1]}\n"
	      "\tCOMPREPLY=()\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"",
	      out);
	for (unsigned int i = 0; i < cli_nr_commands; i++)
		fprintf(out, "%s ", cli_commands[i].name);
	fputs("--help --version\" -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase $cmd in\n"
	      "\trun)\n"
	      "\t\tcase $prev in\n",
	      out);
	/* Values with a fixed set of words, files for FILE/PATH arguments. */
	fputs("\t\t--console) COMPREPLY=($(compgen -W \"serial virtio none\" -- \"$cur\")); return ;;\n"
	      "\t\t--halt-poll) COMPREPLY=($(compgen -W \"auto off\" -- \"$cur\")); return ;;\n"
	      "\t\t--pin) COMPREPLY=($(compgen -W \"auto none dedicated\" -- \"$cur\")); return ;;\n"
	      "\t\t--sched-hints) COMPREPLY=($(compgen -W \"on off\" -- \"$cur\")); return ;;\n"
	      "\t\t--control) COMPREPLY=($(compgen -W \"none\" -- \"$cur\") $(compgen -f -- \"$cur\")); return ;;\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		if (!opts[i].arg || (!strstr(opts[i].arg, "FILE") &&
				     !strstr(opts[i].arg, "PATH")))
			continue;
		if (!strcmp(opts[i].name, "control"))
			continue;
		fprintf(out, "\t\t--%s", opts[i].name);
		if (opts[i].short_name)
			fprintf(out, "|-%c", opts[i].short_name);
		fputs(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n",
		      out);
	}
	fputs("\t\tesac\n\t\tCOMPREPLY=($(compgen -W \"", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "--%s ", opts[i].name);
	fputs("--help\" -- \"$cur\"))\n"
	      "\t\t;;\n"
	      "\tctl)\n",
	      out);
	word_list(out, "opts", cli_command("ctl")->options);
	fputs("\t\tlocal i=2 args=0\n"
	      "\t\twhile [ $i -lt $COMP_CWORD ]; do\n"
	      "\t\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t\t--count) i=$((i + 1)) ;;\n"
	      "\t\t\t--*) ;;\n"
	      "\t\t\t*) args=$((args + 1)) ;;\n"
	      "\t\t\tesac\n"
	      "\t\t\ti=$((i + 1))\n"
	      "\t\tdone\n"
	      "\t\t[ \"$prev\" = --count ] && return\n"
	      "\t\tcase $args in\n"
	      "\t\t0) COMPREPLY=($(compgen -W \"$opts $(_hintvm_vm_names)\" -- \"$cur\")) ;;\n"
	      "\t\t1) COMPREPLY=($(compgen -W \"",
	      out);
	for (unsigned int i = 0; i < CTL_CMD_COUNT; i++)
		fprintf(out, "%s%s", i ? " " : "", ctl_cmd_name(i));
	fputs("\" -- \"$cur\")) ;;\n"
	      "\t\t2) [ \"$prev\" = set ] && COMPREPLY=($(compgen -W \"",
	      out);
	for (unsigned int i = 0; ctl_set_keys[i]; i++)
		fprintf(out, "%s%s", i ? " " : "", ctl_set_keys[i]);
	fputs("\" -- \"$cur\")) ;;\n"
	      "\t\tesac\n"
	      "\t\t;;\n",
	      out);
	for (unsigned int i = 0; i < cli_nr_commands; i++) {
		const struct cli_command *c = &cli_commands[i];

		if (!strcmp(c->name, "run") || !strcmp(c->name, "ctl"))
			continue;
		fprintf(out, "\t%s)\n", c->name);
		word_list(out, "opts", c->options);
		if (!strcmp(c->name, "top"))
			fputs("\t\t[ \"$prev\" = --sort ] && { COMPREPLY=($(compgen -W \"name cpu steal exits\" -- \"$cur\")); return; }\n"
			      "\t\t[ \"$prev\" = --interval ] && return\n",
			      out);
		fputs("\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
		      "\t\t;;\n",
		      out);
	}
	fputs("\tesac\n"
	      "}\n"
	      "complete -F _hintvm hintvm\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "man1")) {
		man1(stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "man3"))
		return man3(stdout, argv[2]);
	if (argc == 2 && !strcmp(argv[1], "bash")) {
		bash(stdout);
		return 0;
	}
	fprintf(stderr, "usage: hintvm-gendoc man1 | man3 TEMPLATE | bash\n");
	return 2;
}

/* The subcommand table names the commands' entry points; never called. */
int cmd_run(int argc, char **argv)
{
	return 2;
}

int cmd_ctl(int argc, char **argv)
{
	return 2;
}

int cmd_ls(int argc, char **argv)
{
	return 2;
}

int cmd_top(int argc, char **argv)
{
	return 2;
}

int cmd_exec(int argc, char **argv)
{
	return 2;
}

int cmd_initramfs(int argc, char **argv)
{
	return 2;
}

int cmd_template(int argc, char **argv)
{
	return 2;
}
