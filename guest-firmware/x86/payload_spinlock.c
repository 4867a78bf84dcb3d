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
 * lock= picks the lock, for issue 35's guest-lock matrix (the best a
 * guest can do without hintvm's ABI, beside what the ABI gives):
 *   ticket  the FIFO ticket lock above (default; hint=1 only with it);
 *   tas     test-and-test-and-set, as Linux's virt_spin_lock() falls back
 *           to under a hypervisor: unfair, so a preempted waiter does not
 *           hold up the others;
 *   halt    the ticket lock whose waiter, after spin_us of spinning, flags
 *           itself and halts until the unlocker kicks it with an IPI (or
 *           HALT_BOUND_MS passes): paravirtual waiting as pv-qspinlock's
 *           pv_wait/pv_kick, with a plain IPI where Linux uses the
 *           KVM_HC_KICK_CPU hypercall, so it needs no ABI of hintvm's.
 *           Halting and kicking are CPL0 work: the CPL3 loop returns to
 *           CPL0 for them and resumes where it was (struct worker's phase).
 *
 * Verdict: every search found its key, and the count of critical sections
 * (a plain, unlocked increment inside the lock) equals the records done,
 * which would not hold if the lock ever let two vCPUs in.
 * Parameters: ms=N hint=0|1 spin_us=N lock=ticket|tas|halt.
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
/* A halted waiter looks again after this even without a kick. */
#define HALT_BOUND_MS 10

_Static_assert(TICKET_SLOTS >= MAX_CPUS, "a slot per possible waiter");

struct ticket_lock {
	volatile uint32_t next;
	volatile uint32_t serving;
	/* APIC ID of the vCPU that drew ticket T, at [T % TICKET_SLOTS]. */
	volatile uint32_t waiter[TICKET_SLOTS];
	/* Set while ticket T's waiter may be parked by the host. */
	volatile uint32_t in_host[TICKET_SLOTS];
	/* lock=halt: the CPU number of ticket T's waiter, and whether it is
	 * (about to be) halted and needs a kick. */
	volatile uint32_t waiter_nr[TICKET_SLOTS];
	volatile uint32_t halted[TICKET_SLOTS];
};

enum lock_kind { LOCK_TICKET, LOCK_TAS, LOCK_HALT };

/* Where the CPL3 loop is when it returns to CPL0 and resumes. */
enum phase {
	PHASE_START, /* fill the chunks, meet the others, start the clock */
	PHASE_WORK, /* search, then draw a ticket */
	PHASE_LOCK, /* waiting for w->ticket (lock=halt) */
	PHASE_COUNT, /* unlocked: count the record */
};

/* What the CPL3 loop asks CPL0 to do before resuming it. */
enum cpl0_op { OP_DONE, OP_HALT, OP_KICK };

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
	enum phase phase;
	uint64_t deadline;
	uint32_t ticket; /* lock=halt: the ticket being waited for */
	uint32_t kick_nr; /* OP_KICK: the CPU to wake */
	uint64_t halts, kicks, halt_timeouts;
	uint64_t buf[CHUNK_RECORDS];
} __attribute__((aligned(64)));

static uint64_t duration_ms, hint_enabled, spin_us;
static enum lock_kind lock_kind;
static bool hint_channel_present;
static uint64_t spin_threshold; /* TSC ticks */
static uint64_t chunks[NR_CHUNKS][CHUNK_RECORDS];
static struct block blocks[NR_BLOCKS];
static struct block *free_list;
static uint64_t critical_sections; /* only touched under the lock */
static struct ticket_lock lock;
static volatile uint32_t tas_locked;
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

/* virt_spin_lock()'s shape: read until free, then try to take it. */
static void tas_lock(void)
{
	while (__atomic_load_n(&tas_locked, __ATOMIC_RELAXED) ||
	       __atomic_exchange_n(&tas_locked, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static void tas_unlock(void)
{
	__atomic_store_n(&tas_locked, 0, __ATOMIC_RELEASE);
}

/*
 * lock=halt, CPL3: spin for w->ticket up to spin_us; true once it is
 * ours. Otherwise flag the slot as halted and look once more (both
 * sequentially consistent, as the unlock's store and load are), so that
 * either the unlock sees the flag and kicks, or we see our turn; false:
 * CPL0 is to halt until our turn (halt_for_turn).
 */
static bool halt_lock_try(struct worker *w)
{
	uint32_t slot = w->ticket % TICKET_SLOTS;
	uint64_t start = rdtsc();

	while (__atomic_load_n(&lock.serving, __ATOMIC_ACQUIRE) != w->ticket) {
		cpu_relax();
		if (rdtsc() - start < spin_threshold)
			continue;
		__atomic_store_n(&lock.halted[slot], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&lock.serving, __ATOMIC_SEQ_CST) !=
		    w->ticket)
			return false;
		__atomic_store_n(&lock.halted[slot], 0, __ATOMIC_SEQ_CST);
	}
	return true;
}

/* lock=halt, CPL3: hand over; true when the next waiter needs a kick. */
static bool halt_unlock(struct worker *w)
{
	uint32_t next = lock.serving + 1;
	uint32_t slot = next % TICKET_SLOTS;

	__atomic_store_n(&lock.serving, next, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&lock.halted[slot], __ATOMIC_SEQ_CST))
		return false;
	w->kick_nr = lock.waiter_nr[slot];
	return w->kick_nr != w->nr;
}

static bool my_turn(void *arg)
{
	const struct worker *w = arg;

	return __atomic_load_n(&lock.serving, __ATOMIC_ACQUIRE) == w->ticket;
}

/* lock=halt, CPL0: sleep until the unlock's kick (or the bound). */
static void halt_for_turn(struct worker *w)
{
	w->halts++;
	if (!wait_halted(my_turn, w, rdtsc() + ms_to_tsc(HALT_BOUND_MS)))
		w->halt_timeouts++;
	__atomic_store_n(&lock.halted[w->ticket % TICKET_SLOTS], 0,
			 __ATOMIC_SEQ_CST);
}

/* The allocator-like critical section: take a block, use it, return it. */
static void critical_section(struct worker *w)
{
	struct block *b = free_list;

	free_list = b->next;
	b->owner = w->apic_id;
	b->uses++;
	critical_sections++;
	b->next = free_list;
	free_list = b;
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

/* Once per CPU, before the clock starts. */
static void start_together(struct worker *w)
{
	unsigned int n = smp_online_count();

	/* Each CPU fills its share of the chunks, then all start together. */
	for (unsigned int c = w->nr; c < NR_CHUNKS; c += n) {
		for (unsigned int i = 0; i < CHUNK_RECORDS; i++)
			chunks[c][i] = key_of(c, i);
	}
	__atomic_add_fetch(&ready_count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&ready_count, __ATOMIC_ACQUIRE) < n)
		cpu_relax();
	w->deadline = rdtsc() + ms_to_tsc(duration_ms);
}

static void search_one(struct worker *w)
{
	uint64_t r = next_random(&w->seed);
	unsigned int c = (unsigned int)(r % NR_CHUNKS);
	unsigned int i = (unsigned int)((r >> 16) % CHUNK_RECORDS);

	memcpy(w->buf, chunks[c], sizeof(w->buf));
	if (!search(w->buf, key_of(c, i)))
		w->misses++;
}

/*
 * Runs at CPL3 on every CPU: records until the deadline, returning to CPL0
 * only when lock=halt has to halt or kick (enum cpl0_op), then resumed at
 * w->phase. A ticket drawn before the deadline is always served, or the
 * waiters behind it would wait forever.
 */
static uint64_t spinlock_user(void *arg)
{
	struct worker *w = arg;

	if (w->phase == PHASE_START) {
		start_together(w);
		w->phase = PHASE_WORK;
	}
	while (w->phase != PHASE_WORK || rdtsc() < w->deadline) {
		if (w->phase == PHASE_WORK) {
			search_one(w);
			if (lock_kind != LOCK_HALT) {
				if (lock_kind == LOCK_TAS)
					tas_lock();
				else
					ticket_lock(w);
				critical_section(w);
				if (lock_kind == LOCK_TAS)
					tas_unlock();
				else
					ticket_unlock(w);
				w->records++;
				continue;
			}
			w->ticket = __atomic_fetch_add(&lock.next, 1,
						       __ATOMIC_RELAXED);
			lock.waiter_nr[w->ticket % TICKET_SLOTS] = w->nr;
			w->phase = PHASE_LOCK;
		}
		if (w->phase == PHASE_LOCK) {
			if (!halt_lock_try(w))
				return OP_HALT; /* resumed in PHASE_LOCK */
			critical_section(w);
			w->phase = PHASE_COUNT;
			if (halt_unlock(w))
				return OP_KICK; /* resumed in PHASE_COUNT */
		}
		w->records++;
		w->phase = PHASE_WORK;
	}
	return OP_DONE;
}

static bool spinlock_setup(void)
{
	const char *kind = cmdline_get("lock");

	if (!cmdline_get_u64("ms", 1000, 1, 600000, &duration_ms) ||
	    !cmdline_get_u64("hint", 0, 0, 1, &hint_enabled) ||
	    !cmdline_get_u64("spin_us", 50, 1, 1000000, &spin_us))
		return false;
	if (!kind || !strcmp(kind, "ticket")) {
		lock_kind = LOCK_TICKET;
	} else if (!strcmp(kind, "tas")) {
		lock_kind = LOCK_TAS;
	} else if (!strcmp(kind, "halt")) {
		lock_kind = LOCK_HALT;
	} else {
		printk("spinlock: lock=%s, expected ticket, tas or halt", kind);
		return false;
	}
	/* The hint ABI's park is its own lock of the matrix: not mixed. */
	if (hint_enabled && lock_kind != LOCK_TICKET) {
		printk("spinlock: hint=1 needs lock=ticket");
		return false;
	}
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
	for (;;) {
		uint64_t op = run_at_cpl3(spinlock_user, w);

		if (op == OP_HALT) {
			halt_for_turn(w);
		} else if (op == OP_KICK) {
			smp_wake(smp_cpu(w->kick_nr));
			w->kicks++;
		} else {
			break;
		}
	}
}

static const char *lock_name(void)
{
	switch (lock_kind) {
	case LOCK_TAS:
		return "tas";
	case LOCK_HALT:
		return "halt";
	case LOCK_TICKET:
		break;
	}
	return "ticket";
}

static bool spinlock_report(struct result *r)
{
	uint64_t records = 0, misses = 0, hints = 0, releases = 0;
	uint64_t halts = 0, kicks = 0, halt_timeouts = 0;

	for (unsigned int i = 0; i < smp_online_count(); i++) {
		records += workers[i].records;
		misses += workers[i].misses;
		hints += workers[i].hints;
		releases += workers[i].releases;
		halts += workers[i].halts;
		kicks += workers[i].kicks;
		halt_timeouts += workers[i].halt_timeouts;
	}
	result_add(r, "records_per_s", "%lu", records * 1000 / duration_ms);
	/* Exact span for a benchmark that knows the TSC rate better. */
	result_add(r, "records", "%lu", records);
	result_add(r, "cycles", "%lu", ms_to_tsc(duration_ms));
	result_add(r, "hint", "%d", hint_channel_present);
	result_add(r, "hints", "%lu", hints);
	result_add(r, "releases", "%lu", releases);
	result_add(r, "lock", "%s", lock_name());
	if (lock_kind == LOCK_HALT) {
		result_add(r, "halts", "%lu", halts);
		result_add(r, "kicks", "%lu", kicks);
		result_add(r, "halt_timeouts", "%lu", halt_timeouts);
	}
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
