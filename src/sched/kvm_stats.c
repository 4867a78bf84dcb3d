// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "sched/kvm_stats.h"

/* pread all of [OFFSET, OFFSET + LEN) or fail: a stats fd may be anything. */
static int pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)offset);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* truncated file */
		p += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

static bool decode_type(uint32_t flags, enum kvm_stat_type *type)
{
	switch (flags & KVM_STATS_TYPE_MASK) {
	case KVM_STATS_TYPE_CUMULATIVE:
		*type = KVM_STAT_CUMULATIVE;
		return true;
	case KVM_STATS_TYPE_INSTANT:
		*type = KVM_STAT_INSTANT;
		return true;
	case KVM_STATS_TYPE_PEAK:
		*type = KVM_STAT_PEAK;
		return true;
	case KVM_STATS_TYPE_LINEAR_HIST:
		*type = KVM_STAT_LINEAR_HIST;
		return true;
	case KVM_STATS_TYPE_LOG_HIST:
		*type = KVM_STAT_LOG_HIST;
		return true;
	}
	return false;
}

static enum kvm_stat_unit decode_unit(uint32_t flags)
{
	switch (flags & KVM_STATS_UNIT_MASK) {
	case KVM_STATS_UNIT_NONE:
		return KVM_STAT_UNIT_NONE;
	case KVM_STATS_UNIT_BYTES:
		return KVM_STAT_UNIT_BYTES;
	case KVM_STATS_UNIT_SECONDS:
		return KVM_STAT_UNIT_SECONDS;
	case KVM_STATS_UNIT_CYCLES:
		return KVM_STAT_UNIT_CYCLES;
	case KVM_STATS_UNIT_BOOLEAN:
		return KVM_STAT_UNIT_BOOLEAN;
	}
	return KVM_STAT_UNIT_UNKNOWN;
}

/* A name must be non-empty, NUL-terminated inside its field, printable. */
static bool valid_name(const char *name, size_t field)
{
	size_t len = strnlen(name, field);

	if (len == 0 || len == field)
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] <= ' ' || name[i] > '~')
			return false;
	return true;
}

static int read_id(struct kvm_stats *stats, const struct kvm_stats_header *hdr)
{
	char buf[KVM_STATS_MAX_NAME];
	int ret;

	/* The id field is name_size bytes long, like the names. */
	ret = pread_full(stats->fd, buf, hdr->name_size, hdr->id_offset);
	if (ret)
		return ret;
	if (!valid_name(buf, hdr->name_size))
		return -EINVAL;
	stats->id = strdup(buf);
	return stats->id ? 0 : -ENOMEM;
}

static int parse_desc(struct kvm_stats *stats, const uint8_t *raw,
		      uint32_t name_size, uint64_t *data_end)
{
	struct kvm_stats_desc d;
	struct kvm_stat_desc *out;
	enum kvm_stat_type type;
	const char *name = (const char *)raw + sizeof(d);
	uint64_t end;

	memcpy(&d, raw, sizeof(d));
	if (!valid_name(name, name_size))
		return -EINVAL;
	if (!decode_type(d.flags, &type)) {
		/* A newer kernel's kind of statistic: skip, do not misread. */
		stats->nr_skipped++;
		return 0;
	}
	if (d.size == 0 || (type <= KVM_STAT_PEAK && d.size != 1))
		return -EINVAL;
	end = (uint64_t)d.offset + (uint64_t)d.size * sizeof(uint64_t);
	if (end > KVM_STATS_MAX_DATA)
		return -EINVAL;

	out = &stats->descs[stats->nr_descs];
	*out = (struct kvm_stat_desc){
		.name = strdup(name),
		.type = type,
		.unit = decode_unit(d.flags),
		.base_pow2 =
			(d.flags & KVM_STATS_BASE_MASK) == KVM_STATS_BASE_POW2,
		.exponent = d.exponent,
		.size = d.size,
		.bucket_size = d.bucket_size,
		.offset = d.offset,
		.index = stats->nr_values,
	};
	if (!out->name)
		return -ENOMEM;
	stats->nr_descs++;
	stats->nr_values += d.size;
	if (end > *data_end)
		*data_end = end;
	return 0;
}

int kvm_stats_open(struct kvm_stats *stats, int fd)
{
	struct kvm_stats_header hdr;
	uint64_t desc_bytes, desc_stride, data_end = 0;
	uint8_t *block = NULL;
	int ret;

	*stats = (struct kvm_stats){ .fd = fd };
	ret = pread_full(fd, &hdr, sizeof(hdr), 0);
	if (ret)
		goto fail;
	ret = -EINVAL;
	if (hdr.name_size == 0 || hdr.name_size > KVM_STATS_MAX_NAME ||
	    hdr.num_desc > KVM_STATS_MAX_DESCS)
		goto fail;
	desc_stride = sizeof(struct kvm_stats_desc) + hdr.name_size;
	desc_bytes = desc_stride * hdr.num_desc; /* < 2^21: no overflow */

	ret = read_id(stats, &hdr);
	if (ret)
		goto fail;

	ret = -ENOMEM;
	stats->descs =
		calloc(hdr.num_desc ? hdr.num_desc : 1, sizeof(*stats->descs));
	block = malloc(desc_bytes ? desc_bytes : 1);
	if (!stats->descs || !block)
		goto fail;
	ret = pread_full(fd, block, desc_bytes, hdr.desc_offset);
	if (ret)
		goto fail;
	for (uint32_t i = 0; i < hdr.num_desc; i++) {
		ret = parse_desc(stats, block + i * desc_stride, hdr.name_size,
				 &data_end);
		if (ret)
			goto fail;
	}
	free(block);
	block = NULL;

	stats->data_offset = hdr.data_offset;
	stats->data_size = (uint32_t)data_end;
	stats->raw = malloc(data_end ? data_end : 1);
	if (!stats->raw) {
		ret = -ENOMEM;
		goto fail;
	}
	/* Prove the data block is really there before anyone relies on it. */
	ret = pread_full(fd, stats->raw, stats->data_size, stats->data_offset);
	if (ret)
		goto fail;
	return 0;

fail:
	free(block);
	kvm_stats_close(stats);
	return ret;
}

void kvm_stats_close(struct kvm_stats *stats)
{
	for (size_t i = 0; i < stats->nr_descs; i++)
		free(stats->descs[i].name);
	free(stats->descs);
	free(stats->id);
	free(stats->raw);
	if (stats->fd >= 0)
		close(stats->fd);
	*stats = (struct kvm_stats){ .fd = -1 };
}

const struct kvm_stat_desc *kvm_stats_find(const struct kvm_stats *stats,
					   const char *name)
{
	for (size_t i = 0; i < stats->nr_descs; i++)
		if (strcmp(stats->descs[i].name, name) == 0)
			return &stats->descs[i];
	return NULL;
}

int kvm_stats_read(struct kvm_stats *stats, uint64_t *values)
{
	const uint8_t *raw = (const uint8_t *)stats->raw;
	int ret;

	ret = pread_full(stats->fd, stats->raw, stats->data_size,
			 stats->data_offset);
	if (ret)
		return ret;
	/* Offsets were checked against data_size in kvm_stats_open(). */
	for (size_t i = 0; i < stats->nr_descs; i++) {
		const struct kvm_stat_desc *d = &stats->descs[i];

		memcpy(&values[d->index], raw + d->offset,
		       d->size * sizeof(uint64_t));
	}
	return 0;
}

void kvm_stats_delta(const struct kvm_stats *stats, const uint64_t *old_values,
		     const uint64_t *new_values, uint64_t *delta)
{
	for (size_t i = 0; i < stats->nr_descs; i++) {
		const struct kvm_stat_desc *d = &stats->descs[i];

		for (size_t j = d->index; j < d->index + d->size; j++) {
			if (d->type == KVM_STAT_INSTANT ||
			    d->type == KVM_STAT_PEAK)
				delta[j] = new_values[j];
			else if (new_values[j] >= old_values[j])
				delta[j] = new_values[j] - old_values[j];
			else
				delta[j] = 0;
		}
	}
}

uint64_t kvm_stats_get(const struct kvm_stats *stats, const uint64_t *values,
		       const char *name, size_t i, uint64_t default_value)
{
	const struct kvm_stat_desc *d = kvm_stats_find(stats, name);

	if (!d || i >= d->size)
		return default_value;
	return values[d->index + i];
}

const char *kvm_stat_type_name(enum kvm_stat_type type)
{
	static const char *const names[] = {
		[KVM_STAT_CUMULATIVE] = "cumulative",
		[KVM_STAT_INSTANT] = "instant",
		[KVM_STAT_PEAK] = "peak",
		[KVM_STAT_LINEAR_HIST] = "linear-hist",
		[KVM_STAT_LOG_HIST] = "log-hist",
	};

	if ((unsigned int)type >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[type];
}

const char *kvm_stat_unit_name(const struct kvm_stat_desc *desc)
{
	switch (desc->unit) {
	case KVM_STAT_UNIT_NONE:
		return "";
	case KVM_STAT_UNIT_BYTES:
		if (desc->base_pow2 && desc->exponent == 10)
			return "KiB";
		if (desc->base_pow2 && desc->exponent == 20)
			return "MiB";
		return "B";
	case KVM_STAT_UNIT_SECONDS:
		if (desc->base_pow2)
			return "s*2^e";
		switch (desc->exponent) {
		case -9:
			return "ns";
		case -6:
			return "us";
		case -3:
			return "ms";
		case 0:
			return "s";
		}
		return "s*10^e";
	case KVM_STAT_UNIT_CYCLES:
		return "cycles";
	case KVM_STAT_UNIT_BOOLEAN:
		return "bool";
	case KVM_STAT_UNIT_UNKNOWN:
		break;
	}
	return "?";
}
