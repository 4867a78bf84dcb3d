/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * smp-count: every CPU drops to CPL3 and hashes its own buffer
 * `iterations` times (h = h * M + word, sequentially), then checks the
 * result at CPL0 against a second computation that composes the one-pass
 * hash by doubling (O(log iterations)), so the claim "CPL3 ran the loop
 * correctly on every CPU" costs little emulated kernel time.
 * Parameter: iterations=N.
 */
#include "cmdline.h"
#include "console.h"
#include "payload.h"
#include "smp.h"
#include "x86.h"

#define COUNT_WORDS 256
#define HASH_MULTIPLIER 0x100000001b3ULL /* odd: a bijection mod 2^64 */

struct count_job {
	uint64_t *buf;
	uint64_t passes;
	uint64_t seed;
};

static uint64_t iterations;
static uint64_t buffers[MAX_CPUS][COUNT_WORDS];
static uint64_t checksums[MAX_CPUS];
static uint64_t cycles[MAX_CPUS];
static volatile uint32_t mismatches;

/* Runs at CPL3. */
static uint64_t count_user(void *arg)
{
	const struct count_job *job = arg;
	uint64_t h = 0;

	for (unsigned int i = 0; i < COUNT_WORDS; i++)
		job->buf[i] = job->seed + i;
	for (uint64_t p = 0; p < job->passes; p++) {
		for (unsigned int i = 0; i < COUNT_WORDS; i++)
			h = h * HASH_MULTIPLIER + job->buf[i];
	}
	return h;
}

/* Hash of a word sequence as (h, M^len); concatenation is associative. */
struct hash_block {
	uint64_t h;
	uint64_t m;
};

static struct hash_block concat(struct hash_block a, struct hash_block b)
{
	return (struct hash_block){ a.h * b.m + b.h, a.m * b.m };
}

static uint64_t expected_checksum(uint64_t seed, uint64_t passes)
{
	struct hash_block pass = { 0, 1 }, total = { 0, 1 };

	for (unsigned int i = 0; i < COUNT_WORDS; i++)
		pass = concat(pass,
			      (struct hash_block){ seed + i, HASH_MULTIPLIER });
	for (; passes; passes >>= 1) {
		if (passes & 1)
			total = concat(total, pass);
		pass = concat(pass, pass);
	}
	return total.h;
}

static bool count_setup(void)
{
	return cmdline_get_u64("iterations", 10000, 1, UINT64_MAX, &iterations);
}

static void count_run(struct cpu *cpu)
{
	struct count_job job = {
		.buf = buffers[cpu->nr],
		.passes = iterations,
		.seed = 0x9e3779b97f4a7c15ULL * (cpu->nr + 1),
	};
	uint64_t start = rdtsc();
	uint64_t sum = run_at_cpl3(count_user, &job);

	cycles[cpu->nr] = rdtsc() - start;
	checksums[cpu->nr] = sum;
	if (sum != expected_checksum(job.seed, job.passes)) {
		printk("smp-count: cpu %u checksum 0x%lx, expected 0x%lx",
		       cpu->nr, sum, expected_checksum(job.seed, job.passes));
		__atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);
	}
}

static bool count_report(struct result *r)
{
	uint64_t combined = 0, max_cycles = 0;

	for (unsigned int i = 0; i < smp_online_count(); i++) {
		combined ^= checksums[i];
		if (cycles[i] > max_cycles)
			max_cycles = cycles[i];
	}
	result_add(r, "iterations", "%lu", iterations);
	result_add(r, "checksum", "0x%016lx", combined);
	result_add(r, "max_cycles", "%lu", max_cycles);
	if (mismatches)
		result_add(r, "mismatches", "%u", mismatches);
	return !mismatches;
}

const struct payload payload_smp_count = {
	.name = "smp-count",
	.setup = count_setup,
	.run = count_run,
	.report = count_report,
};
