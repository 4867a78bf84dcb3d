// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One statistics table, three readers: what the --stats table, the JSON
 * document and the lookup by name make of the same descriptors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/stats.h"

static const uint64_t values[][4] = { { 7, 2, 3, 5000000 },
				      { 70, 20, 30, 1000000 } };

static uint64_t get0(const void *ctx, unsigned int id)
{
	return values[id][0];
}

static uint64_t get1(const void *ctx, unsigned int id)
{
	return values[id][1];
}

static uint64_t get2(const void *ctx, unsigned int id)
{
	return values[id][2];
}

static uint64_t get3(const void *ctx, unsigned int id)
{
	return values[id][3];
}

static uint64_t get_none(const void *ctx, unsigned int id)
{
	return UINT64_MAX;
}

static const char *text_ctx(const void *ctx, char *buf, size_t len)
{
	return ctx;
}

static const struct stat_desc descs[] = {
	{ .name = "total",
	  .json = "exits.total",
	  .column = "exits",
	  .width = 6,
	  .get = get0 },
	{ .name = "ok",
	  .json = "polls.ok",
	  .column = "ok/try",
	  .width = 7,
	  .join_next = true,
	  .get = get1 },
	{ .name = "tried", .json = "polls.tried", .get = get2 },
	{ .name = "wait_ns",
	  .json = "wait_ns",
	  .column = "wait",
	  .width = 6,
	  .divisor = 1000000,
	  .suffix = "ms",
	  .get = get3 },
	{ .name = "limit",
	  .json = "limit",
	  .kind = STAT_OPTIONAL,
	  .get = get_none },
	{ .json = "who", .kind = STAT_NAME, .get = get0, .text = text_ctx },
};

static const struct stat_table table = { descs, 6, "a \"b\"" };

static void text_columns_join_divide_and_align(void **state)
{
	char buf[256];
	struct stat_text t = { buf, sizeof(buf), 0 };

	stat_text_header(&t, &table, 1);
	stat_put(&t, "|");
	stat_text_row(&t, &table, 1, 0);
	stat_put(&t, "|");
	stat_text_row(&t, &table, 1, 1);
	assert_string_equal(buf,
			    "  exits  ok/try   wait|      7     2/3    5ms|"
			    "     70   20/30    1ms");
}

static void json_nests_groups_and_quotes_names(void **state)
{
	char buf[512];
	struct stat_text t = { buf, sizeof(buf), 0 };

	stat_put(&t, "{");
	assert_true(stat_json_members(&t, &table, 1, 0, true));
	stat_put(&t, "}");
	assert_string_equal(
		buf,
		"{\"exits\":{\"total\":7},\"polls\":{\"ok\":2,\"tried\":3},"
		"\"wait_ns\":5000000,\"limit\":null,\"who\":\"a \\\"b\\\"\"}");
}

static void lookup_finds_names_only(void **state)
{
	uint64_t v = 0;

	assert_true(stat_lookup(&table, 1, "tried", 1, &v));
	assert_int_equal(v, 30);
	assert_false(stat_lookup(&table, 1, "who", 0, &v));
	assert_false(stat_lookup(&table, 1, "exits.total", 0, &v));
}

/* Like snprintf: a short buffer still reports the whole length. */
static void a_short_buffer_counts_the_whole_text(void **state)
{
	char buf[4];
	struct stat_text t = { buf, sizeof(buf), 0 };

	stat_text_row(&t, &table, 1, 0);
	assert_int_equal(t.used, strlen("      7     2/3    5ms"));
	assert_string_equal(buf, "   ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_columns_join_divide_and_align),
		cmocka_unit_test(json_nests_groups_and_quotes_names),
		cmocka_unit_test(lookup_finds_names_only),
		cmocka_unit_test(a_short_buffer_counts_the_whole_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
