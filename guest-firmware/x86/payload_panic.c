/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * panic: report a kernel panic through the pvpanic port, as Linux's pvpanic
 * driver does, without finding the device in the DSDT first (the port is
 * fixed: X86_PVPANIC_PORT). The BSP reads the supported events, which must
 * be PANICKED | CRASH_LOADED, and writes one of them:
 *
 *   panic.event=panicked (default)  the VMM must end the VM as a guest
 *       crash; the RESULT line comes first, since nothing runs afterwards,
 *       and expect= tells a harness what must follow
 *   panic.event=crash-loaded  "kdump takes over": the VMM must let the
 *       guest run on, so the payload then powers off with ok=1
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "lib.h"
#include "payload.h"
#include "smp.h"
#include "x86.h"

#define PVPANIC_PANICKED 0x01
#define PVPANIC_CRASH_LOADED 0x02

static bool crash_loaded;
static uint8_t events_read;

static bool panic_setup(void)
{
	const char *event = cmdline_get("panic.event");

	if (!event || !strcmp(event, "panicked")) {
		crash_loaded = false;
	} else if (!strcmp(event, "crash-loaded")) {
		crash_loaded = true;
	} else {
		printk("panic: panic.event=%s, expected panicked or crash-loaded",
		       event);
		return false;
	}
	return true;
}

static void panic_run(struct cpu *cpu)
{
	if (cpu->nr != 0)
		return;
	events_read = inb(X86_PVPANIC_PORT);
	if (crash_loaded) {
		outb(X86_PVPANIC_PORT, PVPANIC_CRASH_LOADED);
		return; /* report() says whether we are still here */
	}
	if (events_read != (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED))
		return; /* report() fails it */
	printk("RESULT test=panic cpus=%u ok=1 events=0x%x expect=guest-panic",
	       smp_online_count(), events_read);
	outb(X86_PVPANIC_PORT, PVPANIC_PANICKED);
}

static bool panic_report(struct result *r)
{
	result_add(r, "events", "0x%x", events_read);
	result_add(r, "event", "%s",
		   crash_loaded ? "crash-loaded" : "panicked");
	if (events_read != (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED))
		return false;
	if (!crash_loaded) {
		printk("panic: still running after writing PANICKED");
		return false;
	}
	return true;
}

const struct payload payload_panic = {
	.name = "panic",
	.setup = panic_setup,
	.run = panic_run,
	.report = panic_report,
};
