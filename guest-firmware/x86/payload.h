/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A payload is one claim the kernel checks about the machine it runs on.
 * Adding one: a payload_NAME.c that defines `const struct payload
 * payload_NAME`, plus one line in payloads.c and one in meson.build.
 *
 * Order of calls (main.c):
 *   setup(BSP)        after all CPUs are online; read parameters from the
 *                     command line; return false to fail (print why)
 *   run(every CPU)    concurrently, kernel mode, interrupts off; use
 *                     run_at_cpl3() for real work (CPL0 is emulated slowly
 *                     on the dev host)
 *   report(BSP)       after every CPU returned from run: append key=value
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

/* NULL-terminated table (payloads.c). */
extern const struct payload *const payloads[];

#endif
