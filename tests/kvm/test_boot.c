// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The built-in test kernel on real /dev/kvm: every payload with 1, 2 and 4
 * vCPUs (more vCPUs than host CPUs is fine), and the ways a VM can end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kvm_test.h"

static void print_output_on_failure(const struct guest_run *run)
{
	const char *ok = result_field(run, "ok");

	if (run->exit.reason != HVM_EXIT_POWEROFF || !ok || strcmp(ok, "1"))
		printf("--- guest output ---\n%s\n--- exit: %s (%s) ---\n",
		       run->output ? run->output : "(none)",
		       hvm_exit_reason_name(run->exit.reason),
		       run->exit.detail);
}

/* Boot PAYLOAD on CPUS vCPUs and check it powered off with ok=1. */
static void boot_payload_ok(const char *payload, unsigned int cpus)
{
	struct guest_run run;
	char cmdline[64], want_cpus[16];

	snprintf(cmdline, sizeof(cmdline), "test=%s", payload);
	snprintf(want_cpus, sizeof(want_cpus), "%u", cpus);
	assert_int_equal(guest_boot(&run, NULL, cpus, cmdline, NULL), 0);
	print_output_on_failure(&run);
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_int_equal(hvm_exit_status(&run.exit), 0);
	assert_string_equal(result_field(&run, "test"), payload);
	assert_string_equal(result_field(&run, "ok"), "1");
	assert_string_equal(result_field(&run, "cpus"), want_cpus);
	if (!strcmp(payload, "hello")) {
		for (unsigned int i = 0; i < cpus; i++) {
			char line[32];

			snprintf(line, sizeof(line), "hello from cpu %u", i);
			assert_non_null(strstr(run.output, line));
		}
	}
	guest_run_free(&run);
}

#define PAYLOAD_TESTS(name)                       \
	static void test_##name##_1(void **state) \
	{                                         \
		boot_payload_ok(#name, 1);        \
	}                                         \
	static void test_##name##_2(void **state) \
	{                                         \
		boot_payload_ok(#name, 2);        \
	}                                         \
	static void test_##name##_4(void **state) \
	{                                         \
		boot_payload_ok(#name, 4);        \
	}

PAYLOAD_TESTS(hello)
PAYLOAD_TESTS(ipi)
PAYLOAD_TESTS(cpuid)

static void test_smp_count(unsigned int cpus)
{
	boot_payload_ok("smp-count", cpus);
}

static void test_smp_count_1(void **state)
{
	test_smp_count(1);
}

static void test_smp_count_2(void **state)
{
	test_smp_count(2);
}

static void test_smp_count_4(void **state)
{
	test_smp_count(4);
}

static void test_default_payload_is_hello(void **state)
{
	struct guest_run run;

	assert_int_equal(guest_boot(&run, NULL, 2, "", NULL), 0);
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_string_equal(result_field(&run, "test"), "hello");
	guest_run_free(&run);
}

/* The test kernel in an ELF32 container boots like the ELF64 original. */
static void test_elf32_pvh_kernel_boots(void **state)
{
	const char *kernel = getenv("KVM_TEST_ELF32_KERNEL");
	struct guest_run run;

	if (!kernel || !*kernel) {
		printf("SKIP: KVM_TEST_ELF32_KERNEL not set (meson sets it)\n");
		skip();
	}
	assert_int_equal(guest_boot(&run, kernel, 2, "test=hello", NULL), 0);
	print_output_on_failure(&run);
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_string_equal(result_field(&run, "ok"), "1");
	assert_string_equal(result_field(&run, "cpus"), "2");
	guest_run_free(&run);
}

/*
 * An interrupt through an I/O APIC pin: the rr partner answers through an
 * irqfd on pin 23, which the guest programs in the I/O APIC. With the
 * split irqchip (the default) the pin's message reaches KVM as an MSI
 * route mirrored from hintvm's redirection table; with KVM_TEST_IRQCHIP=
 * kernel, KVM's own I/O APIC delivers it. Every answer must arrive.
 */
static void test_ioapic_pin_delivers_irqfd_answers(void **state)
{
	const char *const extra[] = { "rr-partner", NULL };
	struct guest_run run;

	assert_int_equal(guest_boot(&run, NULL, 1, "test=rr txns=200", extra),
			 0);
	print_output_on_failure(&run);
	assert_int_equal(run.exit.reason, HVM_EXIT_POWEROFF);
	assert_string_equal(result_field(&run, "ok"), "1");
	assert_string_equal(result_field(&run, "txns"), "200");
	guest_run_free(&run);
}

/*
 * The rr payload's bimodal idle mix (long_us, long_pct): the share of long
 * transactions follows long_pct, all of them at 100, and every answer
 * still arrives while the guest switches the partner's service time
 * between transactions; a share above 100% is refused.
 */
static void test_rr_bimodal_mix_draws_long_transactions(void **state)
{
	static const struct {
		const char *pct;
		unsigned long lo, hi; /* bounds on longs of 100 txns */
	} cases[] = { { "100", 100, 100 }, { "30", 5, 60 } };
	const char *const extra[] = { "rr-partner", NULL };
	struct guest_run run;
	char cmdline[96];

	for (unsigned int i = 0; i < 2; i++) {
		snprintf(cmdline, sizeof(cmdline),
			 "test=rr txns=100 service_us=1 long_us=20 long_pct=%s",
			 cases[i].pct);
		assert_int_equal(guest_boot(&run, NULL, 1, cmdline, extra), 0);
		print_output_on_failure(&run);
		assert_string_equal(result_field(&run, "ok"), "1");
		assert_string_equal(result_field(&run, "long_pct"),
				    cases[i].pct);
		assert_string_equal(result_field(&run, "long_us"), "20");
		unsigned long longs =
			strtoul(result_field(&run, "longs"), NULL, 10);
		assert_in_range(longs, cases[i].lo, cases[i].hi);
		guest_run_free(&run);
	}
	/* Without long_pct the RESULT says nothing of a mix. */
	assert_int_equal(
		guest_boot(&run, NULL, 1, "test=rr txns=50 long_us=20", extra),
		0);
	assert_string_equal(result_field(&run, "ok"), "1");
	assert_null(result_field(&run, "longs"));
	guest_run_free(&run);
	/* A share above 100% is refused, naming the parameter. */
	assert_int_equal(guest_boot(&run, NULL, 1,
				    "test=rr txns=50 long_pct=101", extra),
			 0);
	assert_string_equal(result_field(&run, "ok"), "0");
	assert_string_equal(result_field(&run, "error"), "bad-parameter");
	assert_non_null(strstr(run.output, "long_pct=101"));
	guest_run_free(&run);
}

static void test_triple_fault_is_a_crash(void **state)
{
	for (unsigned int cpus = 1; cpus <= 2; cpus++) {
		struct guest_run run;

		assert_int_equal(
			guest_boot(&run, NULL, cpus, "test=fault", NULL), 0);
		assert_int_equal(run.exit.reason, HVM_EXIT_CRASH);
		assert_int_equal(hvm_exit_status(&run.exit), HVM_STATUS_CRASH);
		assert_non_null(strstr(run.exit.detail, "triple fault"));
		guest_run_free(&run);
	}
}

static void test_debug_exit_passes_the_code_through(void **state)
{
	struct guest_run run;

	/* An unknown payload fails through the debug-exit port. */
	assert_int_equal(
		guest_boot(&run, NULL, 1, "test=no-such-payload", NULL), 0);
	assert_int_equal(run.exit.reason, HVM_EXIT_DEBUG);
	assert_int_not_equal(run.exit.debug_code, 0);
	assert_int_equal(hvm_exit_status(&run.exit),
			 (int)(((run.exit.debug_code << 1) | 1) & 0xff));
	assert_string_equal(result_field(&run, "ok"), "0");
	guest_run_free(&run);
}

static void test_cpuid_marks_a_kvm_guest(void **state)
{
	struct guest_run run;

	assert_int_equal(guest_boot(&run, NULL, 1, "test=cpuid", NULL), 0);
	assert_string_equal(result_field(&run, "hypervisor"), "1");
	assert_string_equal(result_field(&run, "signature"), "KVMKVMKVM");
	guest_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_1),
		cmocka_unit_test(test_hello_2),
		cmocka_unit_test(test_hello_4),
		cmocka_unit_test(test_ipi_1),
		cmocka_unit_test(test_ipi_2),
		cmocka_unit_test(test_ipi_4),
		cmocka_unit_test(test_smp_count_1),
		cmocka_unit_test(test_smp_count_2),
		cmocka_unit_test(test_smp_count_4),
		cmocka_unit_test(test_cpuid_1),
		cmocka_unit_test(test_cpuid_2),
		cmocka_unit_test(test_cpuid_4),
		cmocka_unit_test(test_default_payload_is_hello),
		cmocka_unit_test(test_elf32_pvh_kernel_boots),
		cmocka_unit_test(test_ioapic_pin_delivers_irqfd_answers),
		cmocka_unit_test(test_rr_bimodal_mix_draws_long_transactions),
		cmocka_unit_test(test_triple_fault_is_a_crash),
		cmocka_unit_test(test_debug_exit_passes_the_code_through),
		cmocka_unit_test(test_cpuid_marks_a_kvm_guest),
	};

	kvm_test_require_kvm();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
