/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spinlock: an ebizzy-like workload on every vCPU, at CPL3, for `ms`
 * milliseconds. One record = pick a random chunk of sorted keys, copy it
 * into a private buffer, binary-search it for a random key, then take a
 * shared ticket lock around an allocator-like critical section (pop a
 * block off a shared free list, stamp it, push it back) the way ebizzy's
 * threads meet in malloc's arena lock. Reports records_per_s over all
 * vCPUs (the run lasts ms_to_tsc(ms) TSC ticks, also reported as
 * `cycles`, since the guest may only assume the TSC rate).
 *
 * A ticket lock is the worst case under overcommit: when the vCPU holding
 * (or next in line for) the lock is preempted on the host, every waiter
 * spins for a host time slice. With hint=1, and when the host offers the
 * scheduling-hint channel (docs/hint-channel.md), a waiter that has spun
 * longer than spin_us tells the host which vCPU it waits for
 * (HINT_KIND_SPIN_ON_HOLDER), once per spin_us of spinning; hintvm may
 * then park the waiter's vCPU until its turn comes, so the unlock tells it
 * (HINT_KIND_RELEASED, naming the next ticket's vCPU) when that vCPU has
 * flagged itself as waiting in hintvm, the way PV spinlocks kick a halted
 * waiter. The flag is set before the hint and the turn re-checked after
 * it (both sequentially consistent), so an unlock either sees the flag or
 * the waiter sees its turn and sends nothing.
 *
 * Verdict: every search found its key, and the count of critical sections
 * (a plain, unlocked increment inside the lock) equals the records done,
 * which would not hold if the lock ever let two vCPUs in.
 * Parameters: ms=N hint=0|1 spin_us=N.
 */
#include "arch/x86/platform.h"
#include "cmdline.h"
#include "console.h"
#include "payload.h"
#include "abi/hint_abi.h"
#include "smp.h"
#include "timing.h"
#include "x86.h"

#define NR_CHUNKS 64
#define CHUNK_RECORDS 512 /* 4 KiB of keys per chunk */
#define NR_BLOCKS 64
#define TICKET_SLOTS 64 /* >= MAX_CPUS: one waiter per CPU at most */

_Static_assert(TICKET_SLOTS >= MAX_CPUS, "a slot per possible waiter");

struct ticket_lock {
	volatile uint32_t next;
	volatile uint32_t serving;
	/* APIC ID of the vCPU that drew ticket T, at [T % TICKET_SLOTS]. */
	volatile uint32_t waiter[TICKET_SLOTS];
	/* Set while ticket T's waiter may be parked by the host. */
	volatile uint32_t in_host[TICKET_SLOTS];
};

struct block {
	struct block *next;
	uint64_t owner;
	uint64_t uses;
};

struct worker {
	unsigned int nr;
	uint32_t apic_id;
	uint64_t seed;
	uint64_t records;
	uint64_t misses;
	uint64_t hints;
	uint64_t releases;
	uint64_t buf[CHUNK_RECORDS];
} __attribute__((aligned(64)));

static uint64_t duration_ms, hint_enabled, spin_us;
static bool hint_channel_present;
static uint64_t spin_threshold; /* TSC ticks */
static uint64_t chunks[NR_CHUNKS][CHUNK_RECORDS];
static struct block blocks[NR_BLOCKS];
static struct block *free_list;
static uint64_t critical_sections; /* only touched under the lock */
static struct ticket_lock lock;
static struct worker workers[MAX_CPUS];
static volatile uint32_t ready_count;

static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static uint64_t key_of(unsigned int chunk, unsigned int record)
{
	return ((uint64_t)chunk << 32) | (2 * record + 1);
}

static void ticket_lock(struct worker *w)
{
	uint32_t ticket = __atomic_fetch_add(&lock.next, 1, __ATOMIC_RELAXED);
	uint64_t spin_start = 0;

	lock.waiter[ticket % TICKET_SLOTS] = w->apic_id;
	while (__atomic_load_n(&lock.serving, __ATOMIC_ACQUIRE) != ticket) {
		uint64_t now;

		cpu_relax();
		if (!hint_channel_present)
			continue;
		now = rdtsc();
		if (!spin_start) {
			spin_start = now;
		} else if (now - spin_start > spin_threshold) {
			uint32_t serving = lock.serving;
			uint32_t holder = lock.waiter[serving % TICKET_SLOTS];

			if (serving != ticket && holder != w->apic_id) {
				volatile uint32_t *flag =
					&lock.in_host[ticket % TICKET_SLOTS];

				__atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
				if (__atomic_load_n(&lock.serving,
						    __ATOMIC_SEQ_CST) !=
				    ticket) {
					outl(X86_HINT_PORT + HINT_REG_EVENT,
					     HINT_EVENT(
						     HINT_KIND_SPIN_ON_HOLDER,
						     holder));
					w->hints++;
				}
				__atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
			}
			spin_start = now;
		}
	}
}

static void ticket_unlock(struct worker *w)
{
	uint32_t next = lock.serving + 1;

	__atomic_store_n(&lock.serving, next, __ATOMIC_SEQ_CST);
	if (hint_channel_present &&
	    __atomic_load_n(&lock.in_host[next % TICKET_SLOTS],
			    __ATOMIC_SEQ_CST)) {
		uint32_t to = lock.waiter[next % TICKET_SLOTS];

		if (to != w->apic_id) {
			outl(X86_HINT_PORT + HINT_REG_EVENT,
			     HINT_EVENT(HINT_KIND_RELEASED, to));
			w->releases++;
		}
	}
}

/* The allocator-like critical section: take a block, use it, return it. */
static void allocate_and_free(struct worker *w)
{
	struct block *b;

	ticket_lock(w);
	b = free_list;
	free_list = b->next;
	b->owner = w->apic_id;
	b->uses++;
	critical_sections++;
	b->next = free_list;
	free_list = b;
	ticket_unlock(w);
}

static bool search(const uint64_t *records, uint64_t key)
{
	unsigned int lo = 0, hi = CHUNK_RECORDS;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (records[mid] == key)
			return true;
		if (records[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Runs at CPL3 on every CPU. */
static uint64_t spinlock_user(void *arg)
{
	struct worker *w = arg;
	unsigned int n = smp_online_count();
	uint64_t deadline;

	/* Each CPU fills its share of the chunks, then all start together. */
	for (unsigned int c = w->nr; c < NR_CHUNKS; c += n) {
		for (unsigned int i = 0; i < CHUNK_RECORDS; i++)
			chunks[c][i] = key_of(c, i);
	}
	__atomic_add_fetch(&ready_count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&ready_count, __ATOMIC_ACQUIRE) < n)
		cpu_relax();

	deadline = rdtsc() + ms_to_tsc(duration_ms);
	while (rdtsc() < deadline) {
		uint64_t r = next_random(&w->seed);
		unsigned int c = (unsigned int)(r % NR_CHUNKS);
		unsigned int i = (unsigned int)((r >> 16) % CHUNK_RECORDS);

		memcpy(w->buf, chunks[c], sizeof(w->buf));
		if (!search(w->buf, key_of(c, i)))
			w->misses++;
		allocate_and_free(w);
		w->records++;
	}
	return 0;
}

static bool spinlock_setup(void)
{
	if (!cmdline_get_u64("ms", 1000, 1, 600000, &duration_ms) ||
	    !cmdline_get_u64("hint", 0, 0, 1, &hint_enabled) ||
	    !cmdline_get_u64("spin_us", 50, 1, 1000000, &spin_us))
		return false;
	for (unsigned int b = 0; b < NR_BLOCKS; b++) {
		blocks[b].next = free_list;
		free_list = &blocks[b];
	}
	spin_threshold = ms_to_tsc(spin_us) / 1000;
	/* Without the channel (QEMU, --sched-hints off) a write would only
	 * cost an exit: detect it once, here at CPL0. */
	hint_channel_present =
		hint_enabled &&
		inl(X86_HINT_PORT + HINT_REG_EVENT) == HINT_MAGIC;
	return true;
}

static void spinlock_run(struct cpu *cpu)
{
	struct worker *w = &workers[cpu->nr];

	w->nr = cpu->nr;
	w->apic_id = cpu->apic_id;
	w->seed = 0x9e3779b97f4a7c15ULL * (cpu->nr + 1);
	run_at_cpl3(spinlock_user, w);
}

static bool spinlock_report(struct result *r)
{
	uint64_t records = 0, misses = 0, hints = 0, releases = 0;

	for (unsigned int i = 0; i < smp_online_count(); i++) {
		records += workers[i].records;
		misses += workers[i].misses;
		hints += workers[i].hints;
		releases += workers[i].releases;
	}
	result_add(r, "records_per_s", "%lu", records * 1000 / duration_ms);
	/* Exact span for a benchmark that knows the TSC rate better. */
	result_add(r, "records", "%lu", records);
	result_add(r, "cycles", "%lu", ms_to_tsc(duration_ms));
	result_add(r, "hint", "%d", hint_channel_present);
	result_add(r, "hints", "%lu", hints);
	result_add(r, "releases", "%lu", releases);
	if (misses)
		result_add(r, "misses", "%lu", misses);
	if (critical_sections != records)
		result_add(r, "lost", "%ld",
			   (long)(records - critical_sections));
	return !misses && critical_sections == records;
}

const struct payload payload_spinlock = {
	.name = "spinlock",
	.setup = spinlock_setup,
	.run = spinlock_run,
	.report = spinlock_report,
};
