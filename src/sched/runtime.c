// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The brain's side of the control socket (reached through struct vm_hooks):
 * the settings that can change while the VM runs (`set KEY VALUE`,
 * hvm_vm_set) and the settings as they are now (`status`, `info`).
 *
 * A value is parsed by the same function as on the command line, into a
 * copy of the current options, and validated against the host as VM
 * creation would (a pin list inside the allowed CPUs); the policy picks it
 * up at its next interval, halt-poll off or fixed at once. --pv cannot
 * change: CPUID is fixed when the vCPUs are created.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "abi/control_proto.h"
#include "base/log.h"
#include "core/config.h"
#include "core/vm.h"
#include "sched/brain.h"
#include "sched/sched_vm.h"

/* Is KEY one of the settings that change at run time? */
static bool runtime_key(const char *key)
{
	for (unsigned int i = 0; ctl_set_keys[i]; i++)
		if (!strcmp(ctl_set_keys[i], key))
			return true;
	return false;
}

static bool cpu_allowed(const struct sched_vm *s, uint16_t cpu)
{
	for (unsigned int i = 0; i < s->nr_allowed; i++)
		if (s->allowed[i] == cpu)
			return true;
	return false;
}

/* What policy_vm_create() refuses at creation is refused here too. */
static int check_pin(const struct sched_vm *s, const struct sched_settings *set)
{
	if (set->pin == PIN_DEDICATED && s->nr_vcpus > s->nr_allowed)
		return hvm_set_error(
			-EINVAL,
			"pin dedicated: %u vCPUs but this process may use only %u host CPUs",
			s->nr_vcpus, s->nr_allowed);
	for (unsigned int i = 0; set->pin == PIN_LIST && i < set->nr_pin_cpus;
	     i++)
		if (!cpu_allowed(s, set->pin_cpus[i]))
			return hvm_set_error(
				-EINVAL,
				"pin: host CPU %u is not one this process may use (affinity and cpuset)",
				set->pin_cpus[i]);
	return 0;
}

int sched_set_option(struct vm *vm, const char *key, const char *value)
{
	struct sched_vm *s = vm->sched;
	struct sched_options opt;
	struct hvm_config scratch = { .sched = &opt };
	int r;

	if (!runtime_key(key))
		return -ENOENT; /* the caller says whether the key exists */
	if (!s)
		return hvm_set_error(-ENOENT,
				     "this VM has no scheduling management");
	pthread_mutex_lock(&s->boost_lock);
	pthread_mutex_lock(&s->lock);
	opt = s->opt;
	/* The option table's own parser, as for the command line. */
	r = hvm_config_set(&scratch, key, value);
	if (r == 0 && !strcmp(key, "pin"))
		r = check_pin(s, &opt.settings);
	if (r == 0) {
		s->opt.settings = opt.settings;
		s->opt.stats = opt.stats;
		s->opt.stats_interval_ms = opt.stats_interval_ms;
		/* Off or fixed polling is a decision already taken: apply it. */
		if (!strcmp(key, "halt-poll") &&
		    opt.settings.halt_poll != HALT_POLL_AUTO) {
			brain_set_halt_poll(s, opt.settings.halt_poll_ns);
			brain_reset_vcpu_halt_poll(s);
			s->state.halt_poll_ns = opt.settings.halt_poll_ns;
			s->state.halt_poll_set = true;
		}
		pthread_cond_signal(
			&s->cond); /* the interval may have changed */
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->boost_lock);
	return r;
}

int sched_describe(struct vm *vm, char *buf, size_t len)
{
	struct sched_vm *s = vm->sched;
	struct stat_text t = { buf, len, 0 };
	const struct sched_settings *set;
	char pv[256];

	if (len)
		buf[0] = '\0';
	if (!s)
		return -ENOENT;
	pthread_mutex_lock(&s->boost_lock);
	pthread_mutex_lock(&s->lock);
	set = &s->opt.settings;
	stat_put(&t, "{\"commit\":\"%s\",\"sched_hints\":%s,\"pin\":\"",
		 commit_state_name(s->state.commit),
		 set->hints ? "true" : "false");
	switch (set->pin) {
	case PIN_AUTO:
		stat_put(&t, "auto");
		break;
	case PIN_NONE:
		stat_put(&t, "none");
		break;
	case PIN_DEDICATED:
		stat_put(&t, "dedicated");
		break;
	case PIN_LIST:
		for (unsigned int i = 0; i < set->nr_pin_cpus; i++)
			stat_put(&t, "%s%u", i ? "," : "", set->pin_cpus[i]);
		break;
	}
	stat_put(&t, "\",\"pin_plan\":\"%s\",\"halt_poll\":\"",
		 pin_plan_name(s->state.pin));
	if (set->halt_poll == HALT_POLL_FIXED)
		stat_put(&t, "%u", set->halt_poll_ns);
	else
		stat_put(&t, "%s",
			 set->halt_poll == HALT_POLL_AUTO ? "auto" : "off");
	stat_put(&t, "\",\"halt_poll_ns\":");
	if (s->state.halt_poll_set)
		stat_put(&t, "%u", s->state.halt_poll_ns);
	else
		stat_put(&t, "null");
	stat_put(&t, ",\"pv\":\"%s\",\"stats\":%s,\"stats_interval_ms\":%u}",
		 pv_format(s->pv.enabled, pv, sizeof(pv)),
		 s->opt.stats ? "true" : "false", s->opt.stats_interval_ms);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->boost_lock);
	return (int)t.used;
}
