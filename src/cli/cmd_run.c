// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm run: options come from the library's option table, so the command
 * line, --config files and embedders accept exactly the same settings.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hintvm/hintvm.h"

static struct hvm_vm *running_vm;

static void stop_on_signal(int sig)
{
	hvm_vm_stop(running_vm);
}

static void print_help(void)
{
	const struct hvm_option_info *opts;
	size_t n;

	opts = hvm_options(&n);
	printf("usage: hintvm run [OPTIONS]\n\n%s\n\n",
	       cli_command("run")->description);
	for (size_t i = 0; i < n; i++) {
		char left[48];

		snprintf(left, sizeof(left), "%c%c%s--%s%s%s",
			 opts[i].short_name ? '-' : ' ',
			 opts[i].short_name ? opts[i].short_name : ' ',
			 opts[i].short_name ? ", " : "  ", opts[i].name,
			 opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		printf("  %-30s %s\n", left, opts[i].help);
	}
	printf("  %-30s %s\n", "-h, --help", "show this help");
	printf("\nExit status: 0 guest powered off, 2 bad usage or host setup, 4 guest\n"
	       "rebooted, 6 guest crashed, 8 hintvm failed while running, 10 stopped by\n"
	       "a signal or Ctrl-A x; odd values (V << 1) | 1 when the guest wrote V to\n"
	       "the debug-exit port 0xf4.\n");
}

/* Build the getopt tables from the library's option table. */
static int build_getopt(struct option **longopts, char *shortopts,
			size_t shortlen)
{
	const struct hvm_option_info *opts;
	size_t n, s = 0;
	struct option *lo;

	opts = hvm_options(&n);
	lo = calloc(n + 2, sizeof(*lo));
	if (!lo)
		return -1;
	for (size_t i = 0; i < n; i++) {
		lo[i] = (struct option){
			.name = opts[i].name,
			.has_arg = opts[i].arg ? required_argument
					       : optional_argument,
			.val = 256 + (int)i,
		};
		if (opts[i].short_name && s + 3 < shortlen) {
			shortopts[s++] = opts[i].short_name;
			if (opts[i].arg)
				shortopts[s++] = ':';
		}
	}
	lo[n] = (struct option){ .name = "help", .val = 'h' };
	shortopts[s++] = 'h';
	shortopts[s] = '\0';
	*longopts = lo;
	return 0;
}

static const struct hvm_option_info *option_by_short(int c)
{
	const struct hvm_option_info *opts;
	size_t n;

	opts = hvm_options(&n);
	for (size_t i = 0; i < n; i++) {
		if (opts[i].short_name == c)
			return &opts[i];
	}
	return NULL;
}

static int parse_args(struct hvm_config *cfg, int argc, char **argv)
{
	const struct hvm_option_info *opts;
	struct option *longopts;
	char shortopts[64];
	int verbosity = 0, c;
	size_t n;

	opts = hvm_options(&n);
	if (build_getopt(&longopts, shortopts, sizeof(shortopts)) < 0)
		return -1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct hvm_option_info *opt = NULL;
		const char *value = optarg;
		char level[12];

		if (c == 'h') {
			print_help();
			free(longopts);
			exit(0);
		}
		if (c == '?' || c == ':') {
			if (optopt && optopt < 256)
				fprintf(stderr,
					"hintvm run: option -%c %s (see hintvm run --help)\n",
					optopt,
					option_by_short(optopt)
						? "needs a value"
						: "is unknown");
			else
				fprintf(stderr,
					"hintvm run: unknown option or missing value: '%s' (see hintvm run --help)\n",
					argv[optind - 1]);
			free(longopts);
			return -1;
		}
		opt = c >= 256 ? &opts[c - 256] : option_by_short(c);
		if (!strcmp(opt->name, "verbose") && !value) {
			snprintf(level, sizeof(level), "%d",
				 ++verbosity > 3 ? 3 : verbosity);
			value = level;
		}
		if (hvm_config_set(cfg, opt->name, value) < 0) {
			fprintf(stderr, "hintvm run: %s\n", hvm_last_error());
			free(longopts);
			return -1;
		}
	}
	free(longopts);
	if (optind < argc) {
		fprintf(stderr,
			"hintvm run: unexpected argument '%s' (options start with --; see hintvm run --help)\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

static void report_exit(const struct hvm_exit *exit)
{
	switch (exit->reason) {
	case HVM_EXIT_POWEROFF:
	case HVM_EXIT_DEBUG:
		break;
	default:
		fprintf(stderr, "hintvm: guest %s: %s\n",
			hvm_exit_reason_name(exit->reason), exit->detail);
		break;
	}
}

int cmd_run(int argc, char **argv)
{
	struct hvm_config *cfg = hvm_config_new();
	struct sigaction sa = { .sa_handler = stop_on_signal };
	struct hvm_exit exit;
	struct hvm_vm *vm;

	if (!cfg) {
		fprintf(stderr, "hintvm: %s\n", hvm_last_error());
		return HVM_STATUS_USAGE;
	}
	if (parse_args(cfg, argc, argv) < 0) {
		hvm_config_free(cfg);
		return HVM_STATUS_USAGE;
	}
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!vm) {
		fprintf(stderr, "hintvm: %s\n", hvm_last_error());
		return HVM_STATUS_USAGE;
	}

	running_vm = vm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A VM that fails to start never ran guest code: a setup error. */
	if (hvm_vm_start(vm) < 0) {
		fprintf(stderr, "hintvm: %s\n", hvm_last_error());
		hvm_vm_destroy(vm);
		return HVM_STATUS_USAGE;
	}
	if (hvm_vm_wait(vm, &exit) < 0) {
		fprintf(stderr, "hintvm: %s\n", hvm_last_error());
		hvm_vm_destroy(vm);
		return HVM_STATUS_HOST_ERROR;
	}
	hvm_vm_destroy(vm);
	report_exit(&exit);
	return hvm_exit_status(&exit);
}
