/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduling options of a VM (--pin, --halt-poll, --pv, --sched-hints,
 * --stats, --stats-interval, --stats-json): stored in struct hvm_config and
 * parsed here, called from the option table in core/config.c. Everything
 * that can be checked without the host is checked here, with messages
 * naming the option, the value and what was expected; what depends on the
 * host (CPUs outside the allowed set, PV bits KVM lacks) is checked when
 * the VM is created.
 */
#ifndef HVM_SCHED_SCHED_CONFIG_H
#define HVM_SCHED_SCHED_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/kernel_hints.h"
#include "sched/policy.h"
#include "sched/pv.h"

#define SCHED_STATS_PATH_MAX 4096
#define SCHED_STATS_INTERVAL_MIN_MS 100
#define SCHED_STATS_INTERVAL_MAX_MS 3600000

struct sched_options {
	struct sched_settings settings;
	struct pv_request pv;
	struct kernel_controls kvm_control; /* --kvm-control */
	bool stats; /* print the table at exit (and every interval) */
	uint32_t stats_interval_ms; /* 0: only at exit */
	char stats_json[SCHED_STATS_PATH_MAX]; /* "": none */
};

struct hvm_config;

void sched_options_defaults(struct sched_options *o);

int sched_parse_pin(struct hvm_config *cfg, const char *name,
		    const char *value);
int sched_parse_halt_poll(struct hvm_config *cfg, const char *name,
			  const char *value);
int sched_parse_pv(struct hvm_config *cfg, const char *name, const char *value);
int sched_parse_kvm_control(struct hvm_config *cfg, const char *name,
			    const char *value);
int sched_parse_hints(struct hvm_config *cfg, const char *name,
		      const char *value);
int sched_parse_stats(struct hvm_config *cfg, const char *name,
		      const char *value);
int sched_parse_stats_interval(struct hvm_config *cfg, const char *name,
			       const char *value);
int sched_parse_stats_json(struct hvm_config *cfg, const char *name,
			   const char *value);

#endif
