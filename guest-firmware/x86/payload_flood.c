/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flood: a hostile guest that never stops talking. The BSP writes, at CPL3
 * with `rep outsb` (one exit moves up to a page), in an endless loop:
 *
 *   flood.target=uart (default)  bytes to the COM1 transmitter: the host's
 *       reader of the console may stall, the VM must stay stoppable
 *   flood.target=pvpanic  CRASH_LOADED to the pvpanic port: every write is
 *       a host log line unless the VMM rate-limits them
 *
 * There is no RESULT line: the VM ends only when the host stops it, which
 * is the claim (tests/cli). "flood: start" is printed before the loop.
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "x86.h"

#define PVPANIC_CRASH_LOADED 0x02
#define FLOOD_CHUNK 4096

static uint16_t port;
static uint8_t chunk[FLOOD_CHUNK];

static bool flood_setup(void)
{
	const char *target = cmdline_get("flood.target");
	uint8_t fill = 'f';

	if (!target || !strcmp(target, "uart")) {
		port = X86_COM1_PORT;
	} else if (!strcmp(target, "pvpanic")) {
		port = X86_PVPANIC_PORT;
		fill = PVPANIC_CRASH_LOADED;
	} else {
		printk("flood: flood.target=%s, expected uart or pvpanic",
		       target);
		return false;
	}
	for (unsigned int i = 0; i < FLOOD_CHUNK; i++)
		chunk[i] = fill;
	if (port == X86_COM1_PORT)
		for (unsigned int i = 63; i < FLOOD_CHUNK; i += 64)
			chunk[i] = '\n';
	return true;
}

static uint64_t flood_loop(void *arg)
{
	for (;;) {
		const void *src = chunk;
		uint64_t n = FLOOD_CHUNK;

		__asm__ volatile("rep outsb"
				 : "+S"(src), "+c"(n)
				 : "d"(port)
				 : "memory");
	}
	return 0;
}

static void flood_run(struct cpu *cpu)
{
	if (cpu->nr != 0)
		return;
	printk("flood: start");
	run_at_cpl3(flood_loop, NULL);
}

static bool flood_report(struct result *r)
{
	return false; /* not reached */
}

const struct payload payload_flood = {
	.name = "flood",
	.setup = flood_setup,
	.run = flood_run,
	.report = flood_report,
};
