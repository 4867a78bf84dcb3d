/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A payload is one claim the kernel checks about the machine it runs on;
 * the names and the RESULT line match the x86 test kernel. Adding one: a
 * payload_NAME.c defining `const struct payload payload_NAME`, one line in
 * payloads.c and one in meson.build.
 *
 *   setup(boot CPU)   after all CPUs are online; read parameters from the
 *                     command line; false fails the test (print why)
 *   run(every CPU)    concurrently at EL1 with IRQs masked; real work goes
 *                     to EL0 through run_user()
 *   report(boot CPU)  after every CPU returned: add key=value fields to
 *                     the RESULT line and return the verdict
 */
#ifndef TK_PAYLOAD_H
#define TK_PAYLOAD_H

#include "cpu.h"

struct result {
	char fields[160];
	size_t len;
};

void result_add(struct result *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* KEY=N from the command line, DEF when absent; false when malformed. */
bool cmdline_u64(const char *key, uint64_t def, uint64_t min, uint64_t max,
		 uint64_t *out);

struct payload {
	const char *name;
	bool (*setup)(void);
	void (*run)(struct cpu *cpu);
	bool (*report)(struct result *r);
};

extern const struct payload *const payloads[];

#endif
