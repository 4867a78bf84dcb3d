// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm initramfs: pack the guest agent and the kernel modules it needs
 * into a cpio (docs/agent.md, "The initramfs"). With -o the archive goes
 * there; without, into the cache `hintvm run --agent` uses, and its path
 * is printed.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hintvm/hintvm.h"

#define MAX_FILES 64

int cmd_initramfs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "modules", required_argument, NULL, 'M' },
		{ "output", required_argument, NULL, 'o' },
		{ "file", required_argument, NULL, 'f' },
		{ "no-modules", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kernel = NULL, *modules = NULL, *out = NULL;
	const char *files[MAX_FILES + 1];
	unsigned int nr_files = 0;
	char dir[4096], path[4096], version[128];
	bool no_modules = false;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:M:o:f:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'k':
			kernel = optarg;
			break;
		case 'M':
			modules = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			if (nr_files >= MAX_FILES) {
				fprintf(stderr,
					"hintvm initramfs: more than %d --file\n",
					MAX_FILES);
				return 2;
			}
			files[nr_files++] = optarg;
			break;
		case 'N':
			no_modules = true;
			break;
		case 'h':
			cli_usage(stdout, "initramfs");
			return 0;
		default:
			fprintf(stderr,
				"hintvm initramfs: unknown option or missing value: '%s' (see hintvm initramfs --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	files[nr_files] = NULL;
	if (optind < argc) {
		fprintf(stderr, "hintvm initramfs: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!out) {
		if (nr_files || no_modules || (!kernel && !modules)) {
			fprintf(stderr,
				"hintvm initramfs: the cache holds agent + modules for a kernel: give -k or --modules, or -o for anything else\n");
			return 2;
		}
		if (hvm_initramfs_cached(kernel, modules, path, sizeof(path)) <
		    0) {
			fprintf(stderr, "hintvm initramfs: %s\n",
				hvm_last_error());
			return 1;
		}
		printf("%s\n", path);
		return 0;
	}
	if (!modules && kernel && !no_modules) {
		if (hvm_kernel_version(kernel, version, sizeof(version)) < 0) {
			fprintf(stderr, "hintvm initramfs: %s\n",
				hvm_last_error());
			return 1;
		}
		snprintf(dir, sizeof(dir), "/lib/modules/%s", version);
		modules = dir;
	}
	if (!modules && !no_modules) {
		fprintf(stderr,
			"hintvm initramfs: which modules? give -k KERNEL, --modules DIR or --no-modules\n");
		return 2;
	}
	if (hvm_initramfs_build(no_modules ? NULL : modules, files, out) < 0) {
		fprintf(stderr, "hintvm initramfs: %s\n", hvm_last_error());
		return 1;
	}
	return 0;
}
