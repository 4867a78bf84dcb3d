// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/parse.h"

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned int shift = 20; /* no suffix: MiB, as kvmtool */
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'B':
			shift = 0;
			break;
		case 'K':
			shift = 10;
			break;
		case 'M':
			shift = 20;
			break;
		case 'G':
			shift = 30;
			break;
		case 'T':
			shift = 40;
			break;
		default:
			return -EINVAL;
		}
		end++;
		/* Accept K, KB, KiB and friends, nothing else. */
		if (shift && (!strcasecmp(end, "iB") || !strcasecmp(end, "B")))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int parse_bool(const char *s, bool *out)
{
	static const char *const on[] = { "on", "yes", "true", "1" };
	static const char *const off[] = { "off", "no", "false", "0" };

	if (!s) {
		*out = true;
		return 0;
	}
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, on[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, off[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_switch(bool *field, const char *name, const char *value)
{
	if (parse_bool(value, field) < 0)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a switch value; expected on or off",
			name, value);
	return 0;
}

int parse_rate(const char *s, uint64_t *bytes_per_s)
{
	char buf[32];
	size_t len;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	len = strlen(s);
	if (len > 2 && !strcmp(s + len - 2, "/s"))
		len -= 2;
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	/* A bare number is bytes here, not parse_size's MiB. */
	if (strspn(buf, "0123456789") == len)
		r = parse_uint(buf, 1, UINT64_MAX, &v);
	else
		r = parse_size(buf, &v);
	if (r < 0 || !v)
		return -EINVAL;
	*bytes_per_s = v;
	return 0;
}
