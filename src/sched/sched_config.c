// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "core/config.h"
#include "sched/observe.h"
#include "sched/sched_config.h"

void sched_options_defaults(struct sched_options *o)
{
	memset(o, 0, sizeof(*o));
	o->settings.pin = PIN_AUTO;
	o->settings.halt_poll = HALT_POLL_AUTO;
	o->settings.hints = true;
	o->pv.from_host = true;
}

static const char *str(const char *value)
{
	return value ? value : "";
}

int sched_parse_pin(struct hvm_config *cfg, const char *name, const char *value)
{
	struct sched_settings *s = &cfg->sched->settings;
	cpu_set_t set;
	unsigned int n = 0;

	if (value && !strcmp(value, "auto")) {
		s->pin = PIN_AUTO;
		return 0;
	}
	if (value && !strcmp(value, "none")) {
		s->pin = PIN_NONE;
		return 0;
	}
	if (value && !strcmp(value, "dedicated")) {
		s->pin = PIN_DEDICATED;
		return 0;
	}
	if (!value || !isdigit((unsigned char)value[0]) ||
	    observe_parse_cpulist(value, &set) < 0 || CPU_COUNT(&set) == 0)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a pinning mode; expected auto, none, dedicated or a host CPU list such as 2,3 or 0-3",
			name, str(value));
	if (CPU_COUNT(&set) > POLICY_MAX_VCPUS)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' names %d host CPUs; at most %d can be used",
			name, value, CPU_COUNT(&set), POLICY_MAX_VCPUS);
	/* vCPU i goes to the i-th CPU of the list, in ascending order. */
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			s->pin_cpus[n++] = (uint16_t)cpu;
	s->nr_pin_cpus = n;
	s->pin = PIN_LIST;
	return 0;
}

int sched_parse_halt_poll(struct hvm_config *cfg, const char *name,
			  const char *value)
{
	struct sched_settings *s = &cfg->sched->settings;
	uint64_t ns;

	if (value && !strcmp(value, "auto")) {
		s->halt_poll = HALT_POLL_AUTO;
		return 0;
	}
	if (value && !strcmp(value, "off")) {
		s->halt_poll = HALT_POLL_OFF;
		s->halt_poll_ns = 0;
		return 0;
	}
	if (parse_uint(value, 0, POLICY_HALT_POLL_LIMIT_NS, &ns) < 0)
		return hvm_set_error(
			-EINVAL,
			"--%s: '%s' is not a halt-poll setting; expected auto, off or a time in ns from 0 to %u",
			name, str(value), POLICY_HALT_POLL_LIMIT_NS);
	s->halt_poll = ns ? HALT_POLL_FIXED : HALT_POLL_OFF;
	s->halt_poll_ns = (uint32_t)ns;
	return 0;
}

int sched_parse_pv(struct hvm_config *cfg, const char *name, const char *value)
{
	return pv_parse(value, &cfg->sched->pv);
}

int sched_parse_kvm_control(struct hvm_config *cfg, const char *name,
			    const char *value)
{
	return kernel_controls_parse(name, value, &cfg->sched->kvm_control);
}

int sched_parse_hints(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	return parse_switch(&cfg->sched->settings.hints, name, value);
}

int sched_parse_stats(struct hvm_config *cfg, const char *name,
		      const char *value)
{
	return parse_switch(&cfg->sched->stats, name, value);
}

/* "2", "0.5", "1.25": seconds with at most millisecond precision. */
int sched_parse_stats_interval(struct hvm_config *cfg, const char *name,
			       const char *value)
{
	const char *p = value;
	uint64_t ms = 0;
	int frac = 0;

	if (!p || !isdigit((unsigned char)*p))
		goto bad;
	while (isdigit((unsigned char)*p)) {
		ms = ms * 10 + (uint64_t)(*p++ - '0');
		if (ms > SCHED_STATS_INTERVAL_MAX_MS)
			goto bad;
	}
	ms *= 1000;
	if (*p == '.') {
		p++;
		for (int scale = 100; isdigit((unsigned char)*p); scale /= 10) {
			if (scale == 0)
				goto bad; /* finer than 1 ms */
			ms += (uint64_t)(*p++ - '0') * (uint64_t)scale;
			frac++;
		}
		if (!frac)
			goto bad;
	}
	if (*p || ms < SCHED_STATS_INTERVAL_MIN_MS ||
	    ms > SCHED_STATS_INTERVAL_MAX_MS)
		goto bad;
	cfg->sched->stats_interval_ms = (uint32_t)ms;
	return 0;
bad:
	return hvm_set_error(
		-EINVAL,
		"--%s: '%s' is not a statistics interval; expected seconds from 0.1 to 3600, e.g. 1 or 0.5",
		name, str(value));
}

int sched_parse_stats_json(struct hvm_config *cfg, const char *name,
			   const char *value)
{
	if (!value || !*value)
		return hvm_set_error(-EINVAL, "--%s needs a file name", name);
	if (strlen(value) >= sizeof(cfg->sched->stats_json))
		return hvm_set_error(-ENAMETOOLONG,
				     "--%s: file name longer than %zu bytes",
				     name, sizeof(cfg->sched->stats_json) - 1);
	snprintf(cfg->sched->stats_json, sizeof(cfg->sched->stats_json), "%s",
		 value);
	return 0;
}
