/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The statistics a VM reports (stats_report.c): what hvm_vm_stats() and
 * hvm_vm_stat() return and the control plane's "stats" and "stat"
 * requests answer, through hooks the builder fills.
 */
#ifndef HVM_SCHED_STATS_REPORT_H
#define HVM_SCHED_STATS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct sched_vm;

/* The --stats table (JSON false) or the --stats-json document, snprintf-like. */
int sched_format_stats(struct vm *vm, bool json, char *buf, size_t len);
/* One statistic by name (a vCPU statistic summed, vcpuN.NAME or vm.NAME). */
int sched_stat(struct vm *vm, const char *name, uint64_t *value);

/* Refresh every KVM statistics snapshot (caller holds s->lock). */
void stats_read_kvm(struct sched_vm *s);

#endif
