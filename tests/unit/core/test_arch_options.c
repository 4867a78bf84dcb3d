// SPDX-License-Identifier: LGPL-2.1-or-later
/* The arm64 options: --cpu-features and --dtb-dump, through the option table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/log.h"
#include "core/config.h"

static void test_cpu_features(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_non_null(cfg);
	assert_int_equal(cfg->arch.cpu_features, 0);
	assert_int_equal(hvm_config_set(cfg, "cpu-features", "sve"), 0);
	assert_int_equal(cfg->arch.cpu_features, CPU_FEATURE_SVE);
	assert_int_equal(hvm_config_set(cfg, "cpu-features", "pmu,pauth,sve"),
			 0);
	assert_int_equal(cfg->arch.cpu_features,
			 CPU_FEATURE_PMU | CPU_FEATURE_SVE | CPU_FEATURE_PAUTH);
	assert_int_equal(hvm_config_set(cfg, "cpu-features", "none"), 0);
	assert_int_equal(cfg->arch.cpu_features, 0);
	hvm_config_free(cfg);
}

static void test_cpu_features_refused(void **state)
{
	static const char *const bad[] = { "",	       "sme", "sve,",
					   "sve,,pmu", "SVE", "pmu,sve2" };
	struct hvm_config *cfg = hvm_config_new();

	assert_non_null(cfg);
	assert_int_equal(hvm_config_set(cfg, "cpu-features", "pmu"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(hvm_config_set(cfg, "cpu-features", bad[i]),
				 -EINVAL);
		/* A refused value leaves the previous one alone. */
		assert_int_equal(cfg->arch.cpu_features, CPU_FEATURE_PMU);
	}
	assert_non_null(strstr(hvm_error_message(), "'sve2'"));
	hvm_config_free(cfg);
}

static void test_dtb_dump(void **state)
{
	struct hvm_config *cfg = hvm_config_new();

	assert_non_null(cfg);
	assert_int_equal(hvm_config_set(cfg, "dtb-dump", ""), -EINVAL);
	assert_null(cfg->arch.dtb_dump);
	assert_int_equal(hvm_config_set(cfg, "dtb-dump", "/tmp/vm.dtb"), 0);
	assert_string_equal(cfg->arch.dtb_dump, "/tmp/vm.dtb");
	hvm_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_features),
		cmocka_unit_test(test_cpu_features_refused),
		cmocka_unit_test(test_dtb_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
