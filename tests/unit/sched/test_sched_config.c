// SPDX-License-Identifier: LGPL-2.1-or-later
/* The scheduling options through the one option table (hvm_config_set). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "abi/kvm_hint_uapi.h"
#include "base/log.h"
#include "core/config.h"
#include "sched/sched_config.h"

static void test_defaults(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_int_equal(cfg->sched->settings.pin, PIN_AUTO);
	assert_int_equal(cfg->sched->settings.halt_poll, HALT_POLL_AUTO);
	assert_true(cfg->sched->settings.hints);
	assert_true(cfg->sched->pv.from_host);
	assert_false(cfg->sched->stats);
	assert_int_equal(cfg->sched->stats_interval_ms, 0);
	assert_string_equal(cfg->sched->stats_json, "");
	hvm_config_free(cfg);
}

static void test_pin(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct sched_settings *s = &cfg->sched->settings;

	assert_int_equal(hvm_config_set(cfg, "pin", "none"), 0);
	assert_int_equal(s->pin, PIN_NONE);
	assert_int_equal(hvm_config_set(cfg, "pin", "dedicated"), 0);
	assert_int_equal(s->pin, PIN_DEDICATED);
	assert_int_equal(hvm_config_set(cfg, "pin", "5,2-3"), 0);
	assert_int_equal(s->pin, PIN_LIST);
	assert_int_equal(s->nr_pin_cpus, 3);
	assert_int_equal(s->pin_cpus[0], 2);
	assert_int_equal(s->pin_cpus[1], 3);
	assert_int_equal(s->pin_cpus[2], 5);
	assert_int_equal(hvm_config_set(cfg, "pin", "auto"), 0);
	assert_int_equal(s->pin, PIN_AUTO);

	const char *bad[] = { "", "fast", "3-1", "1,", "-1", "2000" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(hvm_config_set(cfg, "pin", bad[i]), -EINVAL);
		assert_non_null(strstr(hvm_error_message(), "--pin"));
	}
	assert_int_equal(hvm_config_set(cfg, "pin", NULL), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "expected auto, none"));
	hvm_config_free(cfg);
}

static void test_kvm_control(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct kernel_controls *c = &cfg->sched->kvm_control;

	/* Nothing is set unless asked for. */
	assert_false(c->set_ple_window || c->set_wfi || c->set_wfe ||
		     c->no_yield);
	assert_int_equal(hvm_config_set(cfg, "kvm-control", "ple-window=0"), 0);
	assert_true(c->set_ple_window);
	assert_int_equal(c->ple_window, 0);
	assert_int_equal(hvm_config_set(cfg, "kvm-control",
					"wfi=trap,wfe=notrap,yield=off"),
			 0);
	assert_true(c->set_wfi && c->set_wfe && c->no_yield);
	assert_int_equal(c->wfi, HVM_KVM_ARM_WFX_TRAP);
	assert_int_equal(c->wfe, HVM_KVM_ARM_WFX_NOTRAP);
	/* "default" goes back to KVM's; 4096 is a window like any other. */
	assert_int_equal(hvm_config_set(cfg, "kvm-control", "ple-window=default"),
			 0);
	assert_int_equal(c->ple_window, UINT32_MAX);
	/* v2's spin policy is gone from the series: refused, and why. */
	assert_int_equal(hvm_config_set(cfg, "kvm-control",
					"spin-policy=no-boost"),
			 -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "ple-window=0"));
	assert_int_equal(hvm_config_set(cfg, "kvm-control", "ple-window=4096"),
			 0);
	assert_int_equal(c->ple_window, 4096);

	const char *bad[] = { "",
			      "ple-window",
			      "ple-window=-1",
			      "wfi=sometimes",
			      "yield=maybe",
			      "spin-policy=default",
			      "frob=1",
			      "ple-window=0," };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(hvm_config_set(cfg, "kvm-control", bad[i]),
				 -EINVAL);
		assert_non_null(strstr(hvm_error_message(), "--kvm-control"));
	}
	hvm_config_free(cfg);
}

static void test_halt_poll(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct sched_settings *s = &cfg->sched->settings;

	assert_int_equal(hvm_config_set(cfg, "halt-poll", "off"), 0);
	assert_int_equal(s->halt_poll, HALT_POLL_OFF);
	assert_int_equal(hvm_config_set(cfg, "halt-poll", "150000"), 0);
	assert_int_equal(s->halt_poll, HALT_POLL_FIXED);
	assert_int_equal(s->halt_poll_ns, 150000);
	assert_int_equal(hvm_config_set(cfg, "halt-poll", "0"), 0);
	assert_int_equal(s->halt_poll, HALT_POLL_OFF);
	assert_int_equal(hvm_config_set(cfg, "halt-poll", "10000000"), 0);
	assert_int_equal(hvm_config_set(cfg, "halt-poll", "auto"), 0);
	assert_int_equal(s->halt_poll, HALT_POLL_AUTO);

	assert_int_equal(hvm_config_set(cfg, "halt-poll", "10000001"), -EINVAL);
	assert_non_null(strstr(hvm_error_message(), "10000001"));
	assert_non_null(strstr(hvm_error_message(), "0 to 10000000"));
	assert_int_equal(hvm_config_set(cfg, "halt-poll", "-5"), -EINVAL);
	assert_int_equal(hvm_config_set(cfg, "halt-poll", "1e5"), -EINVAL);
	hvm_config_free(cfg);
}

static void test_pv_hints_stats(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_int_equal(hvm_config_set(cfg, "pv", "none,steal-time"), 0);
	assert_false(cfg->sched->pv.from_host);
	assert_int_equal(cfg->sched->pv.add, 1u << 5);
	assert_int_equal(hvm_config_set(cfg, "pv", "turbo"), -EINVAL);

	assert_int_equal(hvm_config_set(cfg, "sched-hints", "off"), 0);
	assert_false(cfg->sched->settings.hints);
	assert_int_equal(hvm_config_set(cfg, "sched-hints", "on"), 0);
	assert_true(cfg->sched->settings.hints);
	assert_int_equal(hvm_config_set(cfg, "sched-hints", "maybe"), -EINVAL);

	assert_int_equal(hvm_config_set(cfg, "stats", NULL), 0);
	assert_true(cfg->sched->stats);
	assert_int_equal(hvm_config_set(cfg, "stats-json", "/tmp/x.json"), 0);
	assert_string_equal(cfg->sched->stats_json, "/tmp/x.json");
	assert_int_equal(hvm_config_set(cfg, "stats-json", ""), -EINVAL);
	hvm_config_free(cfg);
}

static void test_stats_interval(void **state)
{
	struct hvm_config *cfg = hvm_config_new();
	struct {
		const char *v;
		uint32_t ms;
	} good[] = { { "1", 1000 },    { "0.5", 500 },	    { "0.1", 100 },
		     { "2.25", 2250 }, { "3600", 3600000 }, { "1.001", 1001 } };
	const char *bad[] = { "0",  "0.05", "3601", "1.0001", "1.",
			      ".5", "-1",   "1s",   "",	      "99999999999" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(
			hvm_config_set(cfg, "stats-interval", good[i].v), 0);
		assert_int_equal(cfg->sched->stats_interval_ms, good[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(hvm_config_set(cfg, "stats-interval", bad[i]),
				 -EINVAL);
		assert_non_null(strstr(hvm_error_message(), "0.1 to 3600"));
	}
	hvm_config_free(cfg);
}

static void test_copy_keeps_sched_options(void **state)
{
	struct hvm_config *cfg = hvm_config_new(), *copy;

	assert_int_equal(hvm_config_set(cfg, "pin", "1,3"), 0);
	assert_int_equal(hvm_config_set(cfg, "stats-json", "out.json"), 0);
	copy = config_dup(cfg);
	assert_non_null(copy);
	assert_int_equal(copy->sched->settings.nr_pin_cpus, 2);
	assert_string_equal(copy->sched->stats_json, "out.json");
	/* A copy of its own: the original's changes do not reach it. */
	assert_ptr_not_equal(copy->sched, cfg->sched);
	assert_int_equal(hvm_config_set(cfg, "stats-json", "other.json"), 0);
	assert_string_equal(copy->sched->stats_json, "out.json");
	hvm_config_free(copy);
	hvm_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_halt_poll),
		cmocka_unit_test(test_pv_hints_stats),
		cmocka_unit_test(test_stats_interval),
		cmocka_unit_test(test_copy_keeps_sched_options),
		cmocka_unit_test(test_kvm_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
