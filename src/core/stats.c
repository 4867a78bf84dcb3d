// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/stats.h"

void stat_put(struct stat_text *t, const char *fmt, ...)
{
	size_t room = t->used < t->len ? t->len - t->used : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? t->buf + t->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n;
}

void stat_json_string(struct stat_text *t, const char *s)
{
	stat_put(t, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			stat_put(t, "\\%c", c);
		else if (c < 0x20)
			stat_put(t, "\\u%04x", c);
		else
			stat_put(t, "%c", c);
	}
	stat_put(t, "\"");
}

/* Every descriptor D of every table TAB, in order. */
#define for_each_desc(tabs, nr_tabs, tab, d)                                  \
	for (const struct stat_table *tab = (tabs); tab < (tabs) + (nr_tabs); \
	     tab++)                                                           \
		for (const struct stat_desc *d = tab->descs;                  \
		     d < tab->descs + tab->nr; d++)

void stat_text_header(struct stat_text *t, const struct stat_table *tabs,
		      size_t nr_tabs)
{
	for_each_desc(tabs, nr_tabs, tab, d)
	{
		if (d->column)
			stat_put(t, " %*s", d->width, d->column);
	}
}

void stat_text_row(struct stat_text *t, const struct stat_table *tabs,
		   size_t nr_tabs, unsigned int id)
{
	char cell[64];
	size_t used = 0;
	uint8_t width = 0;
	bool open = false;

	for_each_desc(tabs, nr_tabs, tab, d)
	{
		uint64_t v;
		int n;

		if (!d->column && !open)
			continue;
		v = d->get(tab->ctx, id);
		if (!open) {
			width = d->width;
			used = 0;
			cell[0] = '\0';
			open = true;
		}
		n = snprintf(cell + used, sizeof(cell) - used,
			     "%s%" PRIu64 "%s", used ? "/" : "",
			     v / (d->divisor ? d->divisor : 1),
			     d->suffix ? d->suffix : "");
		if (n > 0 && (size_t)n < sizeof(cell) - used)
			used += (size_t)n;
		if (d->join_next)
			continue;
		stat_put(t, " %*s", width, cell);
		open = false;
	}
}

static void json_value(struct stat_text *t, const struct stat_desc *d,
		       const void *ctx, unsigned int id)
{
	uint64_t v = d->get(ctx, id);
	char buf[256];

	switch (d->kind) {
	case STAT_COUNT:
		stat_put(t, "%" PRIu64, v);
		break;
	case STAT_FLAG:
		stat_put(t, "%s", v ? "true" : "false");
		break;
	case STAT_OPTIONAL:
		if (v == UINT64_MAX)
			stat_put(t, "null");
		else
			stat_put(t, "%" PRIu64, v);
		break;
	case STAT_NAME:
		stat_json_string(t, d->text(ctx, buf, sizeof(buf)));
		break;
	}
}

bool stat_json_members(struct stat_text *t, const struct stat_table *tabs,
		       size_t nr_tabs, unsigned int id, bool first)
{
	const char *group = NULL; /* the open nested object */
	size_t group_len = 0;
	bool wrote = false;

	for_each_desc(tabs, nr_tabs, tab, d)
	{
		const char *dot, *key;
		size_t len;

		if (!d->json)
			continue;
		dot = strchr(d->json, '.');
		len = dot ? (size_t)(dot - d->json) : 0;
		key = dot ? dot + 1 : d->json;
		if (group && (!dot || len != group_len ||
			      strncmp(group, d->json, len))) {
			stat_put(t, "}");
			group = NULL;
		}
		if (!first)
			stat_put(t, ",");
		first = false;
		if (dot && !group) {
			stat_put(t, "\"%.*s\":{", (int)len, d->json);
			group = d->json;
			group_len = len;
		}
		stat_put(t, "\"%s\":", key);
		json_value(t, d, tab->ctx, id);
		wrote = true;
	}
	if (group)
		stat_put(t, "}");
	return wrote;
}

bool stat_lookup(const struct stat_table *tabs, size_t nr_tabs,
		 const char *name, unsigned int id, uint64_t *value)
{
	for_each_desc(tabs, nr_tabs, tab, d)
	{
		if (d->name && !strcmp(d->name, name)) {
			*value = d->get(tab->ctx, id);
			return true;
		}
	}
	return false;
}
