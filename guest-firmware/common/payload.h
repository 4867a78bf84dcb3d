/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A payload is one claim the kernel checks about the machine it runs on;
 * the names and the RESULT line are the same on every architecture.
 * Adding one: a payload_NAME.c that defines `const struct payload
 * payload_NAME`, plus one line in the arch's payloads.c and meson.build.
 *
 * Order of calls (the arch's main.c):
 *   setup(boot CPU)   after all CPUs are online; read parameters from the
 *                     command line; return false to fail (print why)
 *   run(every CPU)    concurrently, kernel mode, interrupts off; real work
 *                     goes to user mode (x86: run_at_cpl3(), CPL0 is
 *                     emulated slowly on the dev host; arm64: run_user())
 *   report(boot CPU)  after every CPU returned from run: append key=value
 *                     fields to the RESULT line, return the verdict
 */
#ifndef TK_PAYLOAD_H
#define TK_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu.h"

struct result {
	char fields[160];
	size_t len;
};

/* Append " KEY=VALUE" (VALUE formatted) to the RESULT line. */
void result_add(struct result *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct payload {
	const char *name;
	bool (*setup)(void); /* optional */
	void (*run)(struct cpu *cpu);
	bool (*report)(struct result *r);
};

/* NULL-terminated table (the arch's payloads.c). */
extern const struct payload *const payloads[];

/*
 * The payload named NAME. When there is none: prints the known names and
 * "RESULT test=NAME cpus=1 ok=0 error=unknown-test", ends the machine.
 */
const struct payload *payload_find(const char *name);

/* Print "RESULT test=TEST cpus=NR_CPUS ok=0 error=ERROR", end the machine. */
__attribute__((noreturn)) void
result_fail(const char *test, unsigned int nr_cpus, const char *error);

/* P's setup (if any); when it fails: result_fail with bad-parameter. */
void payload_setup(const struct payload *p, unsigned int nr_online);

/*
 * P's verdict into R: its report, then missing=N (and not ok) when fewer
 * than NR_CPUS of the machine's CPUs came online.
 */
bool payload_report(const struct payload *p, struct result *r,
		    unsigned int nr_online, unsigned int nr_cpus);

/* Print "RESULT test=NAME cpus=N ok=0|1 FIELDS..." and end the machine. */
__attribute__((noreturn)) void result_exit(const struct payload *p,
					   unsigned int nr_online, bool ok,
					   const struct result *r);

#endif
