// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdbool.h>

#include "base/clock.h"
#include "core/boot_trace.h"

static uint64_t process_start_ns;

/* As early as hintvm's code runs: before main(), after the loader. */
__attribute__((constructor)) static void boot_trace_init(void)
{
	process_start_ns = hvm_monotonic_ns();
}

uint64_t boot_trace_process_start_ns(void)
{
	return process_start_ns;
}

bool boot_trace_mark(struct boot_trace *t, enum boot_phase phase)
{
	uint64_t none = 0;

	return atomic_compare_exchange_strong(&t->at_ns[phase], &none,
					      hvm_monotonic_ns());
}

double boot_trace_ms(const struct boot_trace *t, enum boot_phase phase)
{
	uint64_t at = atomic_load(&t->at_ns[phase]);

	if (!at)
		return -1;
	return (double)(at - process_start_ns) / 1e6;
}

const char *boot_phase_name(enum boot_phase phase)
{
	static const char *const names[BOOT_PHASES] = {
		[BOOT_VM_CREATED] = "vm_created",
		[BOOT_FIRST_RUN] = "first_kvm_run",
		[BOOT_FIRST_CONSOLE] = "first_console_byte",
		[BOOT_GUEST_STOP] = "guest_stop",
		[BOOT_REPORT] = "vcpus_joined",
		[BOOT_TORN_DOWN] = "torn_down",
	};

	return phase < BOOT_PHASES ? names[phase] : "?";
}
