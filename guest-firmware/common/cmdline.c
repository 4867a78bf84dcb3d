/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"

#include "lib.h"

#define CMDLINE_WORDS 32

/* The copy is split in place into NUL-terminated words. */
static char cmdline[CMDLINE_MAX];
static const char *keys[CMDLINE_WORDS];
static const char *values[CMDLINE_WORDS];
static unsigned int nr_words;

void cmdline_init(const char *src)
{
	size_t len = 0;

	nr_words = 0;
	if (!src)
		return;
	while (len < sizeof(cmdline) - 1 && src[len]) {
		cmdline[len] = src[len];
		len++;
	}
	cmdline[len] = '\0';
	for (char *p = cmdline; *p && nr_words < CMDLINE_WORDS;) {
		char *word, *eq = NULL;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			*p++ = '\0';
		if (!*p)
			break;
		word = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '=' && !eq)
				eq = p;
			p++;
		}
		if (*p)
			*p++ = '\0';
		if (!eq)
			continue;
		*eq = '\0';
		keys[nr_words] = word;
		values[nr_words] = eq + 1;
		nr_words++;
	}
}

const char *cmdline_get(const char *key)
{
	for (unsigned int i = nr_words; i-- > 0;) {
		if (!strcmp(keys[i], key))
			return values[i];
	}
	return NULL;
}

bool cmdline_get_u64(const char *key, uint64_t default_value, uint64_t min,
		     uint64_t max, uint64_t *value)
{
	const char *s = cmdline_get(key);

	if (!s) {
		*value = default_value;
		return true;
	}
	if (!parse_u64(s, value) || *value < min || *value > max) {
		printk("bad parameter %s=%s: expected a number in [%lu, %lu]",
		       key, s, min, max);
		return false;
	}
	return true;
}
