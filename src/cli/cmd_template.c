// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm template make|key|list|drop: the VM template store
 * (docs/template.md). make and key take hintvm run's options (the VM to
 * template, and --template-dir); list and drop take --dir. Clones start
 * with `hintvm run --template KEY|auto`.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hintvm/hintvm.h"

/* make's own option, taken out before the run options are parsed. */
static int take_ready_timeout(int *argc, char **argv, int *timeout_ms)
{
	for (int i = 1; i < *argc; i++) {
		const char *v = NULL;
		int used = 0;
		char *end;
		long s;

		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--ready-timeout")) {
			v = i + 1 < *argc ? argv[i + 1] : NULL;
			used = 2;
		} else if (!strncmp(argv[i], "--ready-timeout=", 16)) {
			v = argv[i] + 16;
			used = 1;
		} else {
			continue;
		}
		errno = 0;
		s = v ? strtol(v, &end, 10) : 0;
		if (!v || errno || *end || s < 1 || s > 3600) {
			fprintf(stderr,
				"hintvm template make: --ready-timeout '%s': expected whole seconds, 1 to 3600\n",
				v ? v : "");
			return -1;
		}
		*timeout_ms = (int)s * 1000;
		memmove(argv + i, argv + i + used,
			(size_t)(*argc - i - used + 1) * sizeof(*argv));
		*argc -= used;
		i--;
	}
	return 0;
}

/* make, key: the VM is described by run's options. */
static int make_or_key(bool make, int argc, char **argv)
{
	const char *who = make ? "hintvm template make" : "hintvm template key";
	struct hvm_config *cfg = hvm_config_new();
	int timeout_ms = 0, r;
	char key[65];

	if (!cfg) {
		fprintf(stderr, "%s: %s\n", who, hvm_last_error());
		return HVM_STATUS_USAGE;
	}
	if (make && take_ready_timeout(&argc, argv, &timeout_ms) < 0) {
		hvm_config_free(cfg);
		return HVM_STATUS_USAGE;
	}
	/* Started as root: the VM's threads are not (docs/sandbox.md). */
	hvm_config_set_default(cfg, "user", "auto");
	/* The template's boot output is nobody's: not shown. */
	hvm_config_set_console_fds(cfg, -1, -1);
	if (cli_parse_run_options(who, cfg, argc, argv) < 0) {
		hvm_config_free(cfg);
		return HVM_STATUS_USAGE;
	}
	r = make ? hvm_template_make(cfg, NULL, timeout_ms, key)
		 : hvm_template_key(cfg, key);
	hvm_config_free(cfg);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", who, hvm_last_error());
		return r == -EINVAL || r == -ENOENT ? HVM_STATUS_USAGE : 1;
	}
	printf("%s\n", key);
	return 0;
}

/* The main parts of a key, which `list` shows without -v. */
static const char *const brief[] = { "cmdline", "cpus", "mem", "agent", NULL };

/* TEXT's "name=value" lines, indented; with ONLY, those names alone. */
static void print_lines(const char *text, const char *const *only)
{
	for (const char *line = text, *eol; line && *line; line = eol + 1) {
		bool show = !only;

		eol = strchr(line, '\n');
		if (!eol)
			break;
		for (size_t i = 0; !show && only[i]; i++)
			show = !strncmp(line, only[i], strlen(only[i])) &&
			       line[strlen(only[i])] == '=';
		if (show)
			printf("  %.*s\n", (int)(eol - line), line);
	}
}

static void print_size(const char *label, uint64_t bytes)
{
	if (bytes >= (1ULL << 30))
		printf(" %s=%.1fG", label, (double)bytes / (1ULL << 30));
	else
		printf(" %s=%.1fM", label, (double)bytes / (1ULL << 20));
}

/* list, drop: --dir DIR, then their own arguments. */
static int store_args(const char *who, int argc, char **argv, const char **dir,
		      bool *all, bool *verbose)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "all", no_argument, NULL, 'a' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			*dir = optarg;
			break;
		case 'a':
			if (!all)
				goto bad;
			*all = true;
			break;
		case 'v':
			if (!verbose)
				goto bad;
			*verbose = true;
			break;
		case 'h':
			cli_usage(stdout, "template");
			exit(0);
		default:
			goto bad;
		}
	}
	return 0;
bad:
	fprintf(stderr,
		"%s: unknown option or missing value: '%s' (see hintvm template --help)\n",
		who, argv[optind - 1]);
	return -1;
}

static int list(int argc, char **argv)
{
	const char *dir = NULL;
	struct hvm_template *t;
	bool verbose = false;
	int status = 0;
	size_t n;

	if (store_args("hintvm template list", argc, argv, &dir, NULL,
		       &verbose) < 0)
		return HVM_STATUS_USAGE;
	if (optind < argc) {
		fprintf(stderr,
			"hintvm template list: unexpected argument '%s'\n",
			argv[optind]);
		return HVM_STATUS_USAGE;
	}
	if (hvm_template_list(dir, &t, &n) < 0) {
		fprintf(stderr, "hintvm template list: %s\n", hvm_last_error());
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (t[i].problem[0]) {
			fprintf(stderr, "hintvm template list: %s %s: %s\n",
				t[i].key, t[i].removed ? "removed" : "refused",
				t[i].problem);
			status |= !t[i].removed;
			continue;
		}
		printf("%s", t[i].key);
		print_size("disk", t[i].disk_bytes);
		print_size("mem", t[i].mem_bytes);
		printf("\n");
		/* Where it came from; with -v every part of its key too. */
		print_lines(t[i].origin, NULL);
		print_lines(t[i].parts, verbose ? NULL : brief);
	}
	hvm_template_list_free(t, n);
	return status;
}

static int drop(int argc, char **argv)
{
	const char *dir = NULL;
	bool all = false;
	int r;

	if (store_args("hintvm template drop", argc, argv, &dir, &all, NULL) <
	    0)
		return HVM_STATUS_USAGE;
	if (all == (optind < argc) || argc - optind > 1) {
		fprintf(stderr,
			"hintvm template drop: give one KEY or --all (see hintvm template --help)\n");
		return HVM_STATUS_USAGE;
	}
	r = hvm_template_drop(dir, all ? NULL : argv[optind]);
	if (r < 0) {
		fprintf(stderr, "hintvm template drop: %s\n", hvm_last_error());
		return r == -EINVAL ? HVM_STATUS_USAGE : 1;
	}
	return 0;
}

int cmd_template(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (!strcmp(sub, "make") || !strcmp(sub, "key"))
		return make_or_key(!strcmp(sub, "make"), argc - 1, argv + 1);
	if (!strcmp(sub, "list"))
		return list(argc - 1, argv + 1);
	if (!strcmp(sub, "drop"))
		return drop(argc - 1, argv + 1);
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		cli_usage(stdout, "template");
		return 0;
	}
	fprintf(stderr,
		"hintvm template: '%s': expected make, key, list or drop (see hintvm template --help)\n",
		sub);
	return HVM_STATUS_USAGE;
}
