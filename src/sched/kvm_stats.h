/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader for KVM's binary statistics (KVM_GET_STATS_FD on a VM or a vCPU):
 * a header, an id string, a descriptor block (one struct kvm_stats_desc
 * plus a NUL-terminated name per statistic) and a data block of u64 values.
 *
 * The layout is parsed once (kvm_stats_open); afterwards each snapshot is a
 * single pread of the data block. The file is treated as untrusted input:
 * every offset, count and size is bounds-checked, a statistic of a type or
 * unit this reader does not know is skipped rather than misread, and a
 * truncated or absurd file is refused with -EINVAL/-EIO, never a crash.
 */
#ifndef HVM_SCHED_KVM_STATS_H
#define HVM_SCHED_KVM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits far above what KVM uses (about 50 stats, names of 48 bytes). */
#define KVM_STATS_MAX_DESCS 4096
#define KVM_STATS_MAX_NAME 256
#define KVM_STATS_MAX_DATA (1u << 20) /* bytes in the data block */

enum kvm_stat_type {
	KVM_STAT_CUMULATIVE, /* monotonic counter */
	KVM_STAT_INSTANT, /* current value */
	KVM_STAT_PEAK, /* highest value seen */
	KVM_STAT_LINEAR_HIST, /* buckets of bucket_size each */
	KVM_STAT_LOG_HIST, /* bucket 0: value 0; bucket i: [2^(i-1), 2^i) */
};

enum kvm_stat_unit {
	KVM_STAT_UNIT_NONE,
	KVM_STAT_UNIT_BYTES,
	KVM_STAT_UNIT_SECONDS, /* scaled by base^exponent, e.g. 10^-9: ns */
	KVM_STAT_UNIT_CYCLES,
	KVM_STAT_UNIT_BOOLEAN,
	KVM_STAT_UNIT_UNKNOWN, /* a unit newer than this reader */
};

struct kvm_stat_desc {
	char *name;
	enum kvm_stat_type type;
	enum kvm_stat_unit unit;
	bool base_pow2; /* scale is 2^exponent instead of 10^exponent */
	int16_t exponent;
	uint16_t size; /* number of u64 values (buckets for histograms) */
	uint32_t bucket_size; /* linear histograms only */
	uint32_t offset; /* byte offset of the first value in the data block */
	size_t index; /* index of the first value in a snapshot array */
};

struct kvm_stats {
	int fd; /* owned: closed by kvm_stats_close() */
	char *id; /* e.g. "kvm-1234/vcpu-0" */
	struct kvm_stat_desc *descs;
	size_t nr_descs; /* statistics this reader understood */
	size_t nr_skipped; /* statistics of unknown type, ignored */
	size_t nr_values; /* u64 slots in a snapshot */
	uint32_t data_offset; /* file offset of the data block */
	uint32_t data_size; /* bytes of the data block we read */
	uint64_t *raw; /* scratch: the data block as read */
};

/*
 * Parse the layout of the statistics file FD (ownership passes to STATS,
 * also on failure). Returns 0, -EINVAL for a malformed file, -EIO for a
 * short read, -ENOMEM.
 */
int kvm_stats_open(struct kvm_stats *stats, int fd);
void kvm_stats_close(struct kvm_stats *stats);

/* The statistic called NAME, or NULL. */
const struct kvm_stat_desc *kvm_stats_find(const struct kvm_stats *stats,
					   const char *name);

/*
 * Read all current values into VALUES (nr_values entries, in descriptor
 * order: desc->index is where each statistic starts). Returns 0 or -errno.
 */
int kvm_stats_read(struct kvm_stats *stats, uint64_t *values);

/*
 * What happened between snapshots OLD and NEW, into DELTA: cumulative
 * counters and histogram buckets become differences (0 where a value went
 * backwards, which only a reset can cause); instant and peak values are
 * taken from NEW.
 */
void kvm_stats_delta(const struct kvm_stats *stats, const uint64_t *old_values,
		     const uint64_t *new_values, uint64_t *delta);

/*
 * Convenience: value I of statistic NAME in VALUES, or DEFAULT_VALUE when
 * there is no such statistic or bucket.
 */
uint64_t kvm_stats_get(const struct kvm_stats *stats, const uint64_t *values,
		       const char *name, size_t i, uint64_t default_value);

/* "cumulative", "instant", ...; "ns"-style unit suffix for display. */
const char *kvm_stat_type_name(enum kvm_stat_type type);
const char *kvm_stat_unit_name(const struct kvm_stat_desc *desc);

#endif
