// SPDX-License-Identifier: LGPL-2.1-or-later
/* The subcommands, their options and help: one table for all uses. */
#include <string.h>

#include "cli.h"

static const struct cli_option ctl_options[] = {
	{ "count", "N", "with events: exit after N events" },
	{ "help", NULL, "show this help" },
	{ NULL, NULL, NULL },
};

static const struct cli_option ls_options[] = {
	{ "json", NULL, "print one JSON array of the VMs' status replies" },
	{ "help", NULL, "show this help" },
	{ NULL, NULL, NULL },
};

static const struct cli_option top_options[] = {
	{ "once", NULL, "print one frame after one interval and exit" },
	{ "json", NULL, "JSON instead of a table, one line per frame" },
	{ "interval", "SECONDS", "refresh interval, 0.1 to 3600 (default 1)" },
	{ "sort", "KEY",
	  "order VMs by name, cpu, steal or exits (keys n, c, s, e)" },
	{ "help", NULL, "show this help" },
	{ NULL, NULL, NULL },
};

static const struct cli_option exec_options[] = {
	{ "tty", NULL,
	  "-t: a terminal (raw mode, window size, Ctrl-C to the process)" },
	{ "env", "K=V", "-e: set an environment variable (repeatable)" },
	{ "workdir", "DIR", "-w: the working directory (absolute)" },
	{ "user", "UID[:GID]", "-u: run as this numeric user and group" },
	{ "help", NULL, "show this help" },
	{ NULL, NULL, NULL },
};

static const struct cli_option initramfs_options[] = {
	{ "kernel", "FILE",
	  "-k: the kernel whose /lib/modules/VERSION to pack" },
	{ "modules", "DIR",
	  "-M: the modules directory (an unpacked package's)" },
	{ "output", "FILE", "-o: write here instead of the cache" },
	{ "file", "SRC=DEST",
	  "-f: add a host file at DEST (with -o; repeatable)" },
	{ "no-modules", NULL, "pack the agent alone (with -o)" },
	{ "help", NULL, "show this help" },
	{ NULL, NULL, NULL },
};

static const struct cli_option template_options[] = {
	{ "dir", "DIR",
	  "list, drop: the store (default $HINTVM_TEMPLATE_DIR, else /var/cache/hintvm/templates for root, else ~/.cache/hintvm/templates)" },
	{ "all", NULL, "drop: every template" },
	{ "verbose", NULL, "-v, list: every part of each key" },
	{ "ready-timeout", "SECONDS",
	  "make: how long to wait for the agent (default 60)" },
	{ "help", NULL, "show this help" },
	{ NULL, NULL, NULL },
};

const struct cli_command cli_commands[] = {
	{ "run", "boot a virtual machine", cmd_run,
	  "[OPTIONS] [-- INIT_ARGS...]",
	  "Boot a virtual machine. Without --kernel, boots the built-in test kernel\n"
	  "(-p \"test=NAME\" picks its payload: hello, ipi, smp-count, fault, cpuid, hint).\n"
	  "The VM is registered under its --name with a control socket unless\n"
	  "--control none. Arguments after -- go to the guest's init; with\n"
	  "--agent they are the main process, whose exit status hintvm run\n"
	  "returns (docs/agent.md).",
	  NULL },
	{ "ctl", "query or steer a running VM through its control socket",
	  cmd_ctl, "[--count N] NAME|SOCKET REQUEST [ARGS]",
	  "Send REQUEST to the control socket of a running VM (its name, as\n"
	  "`hintvm ls` shows it, or a socket path containing a '/') and print\n"
	  "the VM's one-line JSON reply. Requests: status, info, stats,\n"
	  "stat NAME, pause, resume, stop, set KEY VALUE (a setting that\n"
	  "changes at run time, listed below), events (one line per event\n"
	  "until the VM ends), snapshot DIR [paused] (write the VM's\n"
	  "snapshot into DIR for `hintvm run --restore DIR`, docs/snapshot.md),\n"
	  "or a protocol v1 JSON object, sent as it is.\n"
	  "Exit status: 0 the VM answered ok, 1 it refused, 2 nobody answered.",
	  ctl_options },
	{ "ls", "list the running VMs", cmd_ls, "[--json]",
	  "List the running VMs of the runtime directory: name, pid, vCPUs,\n"
	  "memory, state, commit state and uptime, each from the VM itself.",
	  ls_options },
	{ "top", "watch every running VM's vCPUs live", cmd_top,
	  "[--once] [--json] [--interval SECONDS] [--sort KEY]",
	  "Show every running VM, refreshed every interval: per VM and per vCPU\n"
	  "the run/wait (steal) split, exits per second by kind, the halt-poll\n"
	  "window and its success rate, commit state, pinning and boosts.",
	  top_options },
	{ "exec", "run a command in a running VM through its guest agent",
	  cmd_exec,
	  "[-t] [-e K=V]... [-w DIR] [-u UID[:GID]] VM [--] CMD [ARG...]",
	  "Run CMD in the VM named VM (or whose vsock socket is the path VM)\n"
	  "through its guest agent (hintvm run --agent; docs/agent.md), with\n"
	  "stdin, stdout and stderr attached over vsock. Signals hintvm exec\n"
	  "gets (INT, TERM, HUP, QUIT, USR1, USR2) are passed on to CMD.\n"
	  "Exit status: CMD's, or 128+N when signal N ended it; 125 when\n"
	  "hintvm exec failed, 126 when CMD cannot run, 127 when not found.",
	  exec_options },
	{ "initramfs",
	  "pack the guest agent and its kernel modules into a cpio",
	  cmd_initramfs,
	  "[-k KERNEL | -M DIR | --no-modules] [-o OUT] [-f SRC=DEST]...",
	  "Write the guest agent's initramfs (a newc cpio): the agent as /init\n"
	  "and the kernel modules it needs with their dependencies\n"
	  "(modules.dep) from /lib/modules/VERSION of KERNEL or from DIR.\n"
	  "Without -o the archive goes to the cache hintvm run --agent uses\n"
	  "and its path is printed.",
	  initramfs_options },
	{ "template",
	  "make, list or drop VM templates: snapshots of a booted agent",
	  cmd_template,
	  "make|key [RUN OPTIONS] | list [-v] [--dir DIR] | drop [--dir DIR] KEY|--all",
	  "A template is a snapshot of a VM booted until its guest agent\n"
	  "answers, stored under its key: the SHA-256 of the kernel, initrd,\n"
	  "agent and agent initramfs contents, the options that shape the\n"
	  "guest, hintvm's snapshot formats and the host CPU (docs/template.md).\n"
	  "make boots the VM hintvm run's options describe (with --agent, or\n"
	  "--vsock and an agent of the guest's own), waits for the agent,\n"
	  "snapshots it into the store and prints the key; key prints the key\n"
	  "alone. list shows each template's key, size and main parts, and\n"
	  "removes those whose key can no longer match (another CPU or\n"
	  "snapshot format, a kernel, initrd or agent changed or gone); drop\n"
	  "removes one or all. Start clones with hintvm run --template KEY or\n"
	  "--template auto. The store and its templates must be owned by root\n"
	  "or the caller and writable by nobody else.",
	  template_options },
};

const unsigned int cli_nr_commands =
	sizeof(cli_commands) / sizeof(cli_commands[0]);

const struct cli_command *cli_command(const char *name)
{
	for (unsigned int i = 0; i < cli_nr_commands; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

void cli_usage(FILE *out, const char *name)
{
	const struct cli_command *c = cli_command(name);

	if (!c)
		return;
	fprintf(out, "usage: hintvm %s %s\n\n%s\n", c->name, c->synopsis,
		c->description);
	if (!c->options)
		return;
	fprintf(out, "\n");
	for (const struct cli_option *o = c->options; o->name; o++) {
		char left[48];

		snprintf(left, sizeof(left), "--%s%s%s", o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-20s %s\n", left, o->help);
	}
}
