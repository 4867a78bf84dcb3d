/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Statistics as data: each scope (the VM, a vCPU) lists its values once in
 * a table of descriptors, and the --stats table, the --stats-json document
 * and hvm_vm_stat()'s lookup by name all walk that table. A value added to
 * a table appears in all three; a name cannot drift between them.
 *
 * Each layer describes its own counters (core: vCPU exits, vcpu.c; sched:
 * everything the brain keeps, sched/stats_report.c); a report walks
 * several tables, each with the context its getters expect.
 */
#ifndef HVM_CORE_STATS_H
#define HVM_CORE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stat_kind {
	STAT_COUNT, /* a number */
	STAT_FLAG, /* 0 or 1; JSON true/false */
	STAT_OPTIONAL, /* a number, or UINT64_MAX for none (JSON null) */
	STAT_NAME, /* a number by name; JSON has ->text instead */
};

struct stat_desc {
	const char *name; /* hvm_vm_stat() name; NULL: not looked up */
	const char *json; /* JSON key, "group.key" nests; NULL: not in JSON */
	const char *column; /* --stats table header; NULL: not a column */
	uint8_t width; /* table column width */
	bool join_next; /* table: shares a column with the next, "a/b" */
	uint32_t divisor; /* table shows value / divisor (0 means 1) */
	const char *suffix; /* table: unit written after the value */
	enum stat_kind kind;
	uint64_t (*get)(const void *ctx, unsigned int id);
	/* STAT_NAME: the value as JSON shows it (a string). */
	const char *(*text)(const void *ctx, char *buf, size_t len);
};

/* One table and the context its getters take (a struct vm, ...). */
struct stat_table {
	const struct stat_desc *descs;
	size_t nr;
	const void *ctx;
};

/* snprintf-style text building: counts what would have been written. */
struct stat_text {
	char *buf;
	size_t len;
	size_t used;
};

void stat_put(struct stat_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* S as a JSON string, quoted and escaped. */
void stat_json_string(struct stat_text *t, const char *s);

/* The table header (" %*s" per column) and the row of ID. */
void stat_text_header(struct stat_text *t, const struct stat_table *tabs,
		      size_t nr_tabs);
void stat_text_row(struct stat_text *t, const struct stat_table *tabs,
		   size_t nr_tabs, unsigned int id);

/*
 * The JSON members of ID ("key":value, ..., groups as nested objects),
 * without the enclosing braces. Entries of one group must be adjacent.
 * FIRST says whether nothing precedes them in the object; returns whether
 * anything was written.
 */
bool stat_json_members(struct stat_text *t, const struct stat_table *tabs,
		       size_t nr_tabs, unsigned int id, bool first);

/* The value called NAME for ID; false when no table has the name. */
bool stat_lookup(const struct stat_table *tabs, size_t nr_tabs,
		 const char *name, unsigned int id, uint64_t *value);

#endif
