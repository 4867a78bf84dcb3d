/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tlbflush: every vCPU keeps changing a mapping that all vCPUs read, and
 * shoots down the others' TLB entries the way Linux's flush_tlb_multi
 * does, for `ms` milliseconds. Reports records_per_s (one record = one
 * completed remap + shootdown) and how many flush IPIs PV TLB flush saved.
 *
 * Design: per-CPU shared pages, no global lock. CPU i owns the virtual
 * page TLB_VA(i) (a 4 KiB mapping in the kernel's own page tables, above
 * the 4 GiB identity map) and NR_FRAMES physical frames. One operation of
 * CPU i, generation g:
 *   CPL0  write g into frame g % NR_FRAMES, point TLB_VA(i) at it, invlpg
 *         locally; then for every other online CPU t: with PV, if t's
 *         steal-time record says KVM_VCPU_PREEMPTED, cmpxchg its
 *         `preempted` byte to PREEMPTED | KVM_VCPU_FLUSH_TLB and skip t
 *         (KVM flushes t's TLB before t runs again: kvm_flush_tlb_multi);
 *         otherwise send t an IPI on vector IPI_VECTOR_BASE + i, whose
 *         handler does invlpg TLB_VA(i) and acknowledges.
 *   CPL3  wait for every acknowledgement (interrupts on, so this CPU
 *         keeps serving the others' shootdowns meanwhile), then publish g
 *         as CPU i's completed generation.
 * Since each CPU flushes only its own page, shootdowns of different CPUs
 * run concurrently, like flushes of different mms; the owner is the only
 * writer of its page table entry, so no lock is needed.
 *
 * Correctness is checked: between operations every CPU reads every CPU's
 * page through its virtual address. A frame holds the generation that
 * mapped it, so a read older than the generation that CPU had published
 * before the read is a stale TLB entry (counted as `stale`). A stale
 * entry is caught as long as its frame has not been reused, i.e. within
 * NR_FRAMES - 1 generations. ok=1 needs stale=0 and every shootdown
 * acknowledged within ACK_TIMEOUT_MS (each CPU does at least one).
 *
 * Waiting is done at CPL3 (kernel mode is emulated at ~1 MIPS on the dev
 * host); privileged work (page table, invlpg, ICR, steal-time MSR) at
 * CPL0, one run_at_cpl3 round trip per operation.
 *
 * Parameters: ms=N (1000), pv=auto|0|1 (auto: PV when CPUID 0x40000001
 * offers both KVM_FEATURE_STEAL_TIME and KVM_FEATURE_PV_TLB_FLUSH; pv=1
 * without them is a bad parameter), flush=1|0 (0: skip the remote
 * shootdown, a check of the checker: under QEMU TCG, whose software TLB
 * keeps entries until invlpg, it must report stale reads and ok=0; the dev
 * host's shadow MMU happens to hide them).
 */
#include "cmdline.h"
#include "console.h"
#include "lapic.h"
#include "layout.h"
#include "lib.h"
#include "payload.h"
#include "smp.h"
#include "timing.h"
#include "trap.h"
#include "x86.h"

/* KVM's paravirt interface (arch/x86/include/uapi/asm/kvm_para.h). */
#define KVM_SIGNATURE_LEAF 0x40000000
#define KVM_FEATURES_LEAF 0x40000001
#define KVM_FEATURE_STEAL_TIME 5
#define KVM_FEATURE_PV_TLB_FLUSH 9
#define MSR_KVM_STEAL_TIME 0x4b564d03
#define KVM_MSR_ENABLED 1
#define KVM_VCPU_PREEMPTED (1 << 0)
#define KVM_VCPU_FLUSH_TLB (1 << 1)
#define CPUID1_ECX_HYPERVISOR (1u << 31)

struct kvm_steal_time {
	uint64_t steal;
	uint32_t version;
	uint32_t flags;
	uint8_t preempted;
	uint8_t u8_pad[3];
	uint32_t pad[11];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct kvm_steal_time) == 64, "KVM's 64-byte record");

/* Page table flags and the shared window: PML4 slot 1 (512 GiB). */
#define PTE_PRESENT 0x1ULL
#define PTE_WRITE 0x2ULL
#define PTE_USER 0x4ULL
#define PTE_TABLE (PTE_PRESENT | PTE_WRITE | PTE_USER)
#define PAGE_SIZE 4096
#define TLB_PML4_SLOT 1
#define TLB_VA_BASE ((uint64_t)TLB_PML4_SLOT << 39)
#define TLB_VA(cpu) (TLB_VA_BASE + (uint64_t)(cpu)*PAGE_SIZE)
#define NR_FRAMES 4 /* per CPU; see the staleness window above */

_Static_assert(MAX_CPUS <= 512, "one page table covers every CPU's page");

#define ACK_TIMEOUT_MS 10000 /* a lost IPI ends the run, not the test host */

struct frame {
	volatile uint64_t generation;
	uint8_t rest[PAGE_SIZE - sizeof(uint64_t)];
};

struct worker {
	unsigned int nr;
	bool started;
	uint64_t deadline;
	uint64_t generation; /* of the operation in flight or last done */
	bool in_flight;
	uint64_t records;
	uint64_t ipis_sent;
	uint64_t ipis_saved;
	uint64_t stale;
	uint64_t timeouts;
	/* Acknowledgements still missing for this CPU's shootdown. */
	volatile uint32_t acks_pending;
	/* Generation whose shootdown has completed: readers check this. */
	volatile uint64_t published;
} __attribute__((aligned(64)));

extern uint64_t boot_pml4[512];

static uint64_t tlb_pdpt[512] __attribute__((aligned(PAGE_SIZE)));
static uint64_t tlb_pd[512] __attribute__((aligned(PAGE_SIZE)));
static volatile uint64_t tlb_pt[512] __attribute__((aligned(PAGE_SIZE)));
static struct frame frames[MAX_CPUS][NR_FRAMES]
	__attribute__((aligned(PAGE_SIZE)));
static struct kvm_steal_time steal_time[MAX_CPUS];
static struct worker workers[MAX_CPUS];
static uint64_t duration_ms, remote_flush;
static bool use_pv;
static uint32_t kvm_features;
static volatile uint32_t ready_count, done_count;

static inline void invlpg(uint64_t va)
{
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

/* CPUID 0x40000001 EAX when the hypervisor is KVM, else 0 (CPL0). */
static uint32_t read_kvm_features(void)
{
	struct cpuid_regs r;
	char sig[13];

	if (!(cpuid(1, 0).ecx & CPUID1_ECX_HYPERVISOR))
		return 0;
	r = cpuid(KVM_SIGNATURE_LEAF, 0);
	memcpy(sig, &r.ebx, 4);
	memcpy(sig + 4, &r.ecx, 4);
	memcpy(sig + 8, &r.edx, 4);
	sig[12] = '\0';
	if (strcmp(sig, "KVMKVMKVM") || r.eax < KVM_FEATURES_LEAF)
		return 0;
	return cpuid(KVM_FEATURES_LEAF, 0).eax;
}

/* The shootdown IPI of CPU `sender`: drop its page, acknowledge. */
static void flush_ipi(unsigned int vector)
{
	unsigned int sender = vector - IPI_VECTOR_BASE;

	if (sender >= MAX_CPUS)
		return;
	invlpg(TLB_VA(sender));
	__atomic_sub_fetch(&workers[sender].acks_pending, 1, __ATOMIC_RELEASE);
}

/*
 * kvm_flush_tlb_multi's test: if T's vCPU is preempted, ask KVM to flush
 * its TLB when it next runs instead of interrupting it. The cmpxchg fails
 * when KVM has cleared `preempted` in between (T is running again): then
 * T needs the IPI.
 */
static bool defer_flush(unsigned int t)
{
	uint8_t *state = &steal_time[t].preempted;
	uint8_t seen = __atomic_load_n(state, __ATOMIC_RELAXED);

	if (!(seen & KVM_VCPU_PREEMPTED))
		return false;
	return __atomic_compare_exchange_n(state, &seen,
					   seen | KVM_VCPU_FLUSH_TLB, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* CPL0: remap this CPU's page to a new frame and start the shootdown. */
static void remap_and_shoot_down(struct worker *w)
{
	unsigned int n = smp_online_count();
	uint64_t g = ++w->generation;
	struct frame *f = &frames[w->nr][g % NR_FRAMES];

	f->generation = g;
	tlb_pt[w->nr] = (uint64_t)(uintptr_t)f | PTE_TABLE;
	invlpg(TLB_VA(w->nr));
	for (unsigned int t = 0; t < n; t++) {
		if (t == w->nr || !remote_flush)
			continue;
		if (use_pv && defer_flush(t)) {
			w->ipis_saved++;
			continue;
		}
		__atomic_add_fetch(&w->acks_pending, 1, __ATOMIC_ACQ_REL);
		lapic_send_ipi(smp_cpu(t)->apic_id,
			       (uint8_t)(IPI_VECTOR_BASE + w->nr));
		w->ipis_sent++;
	}
	w->in_flight = true;
}

/* CPL3: read every CPU's page; count reads older than what was published. */
static void check_mappings(struct worker *w)
{
	unsigned int n = smp_online_count();

	for (unsigned int c = 0; c < n; c++) {
		uint64_t published = __atomic_load_n(&workers[c].published,
						     __ATOMIC_ACQUIRE);
		uint64_t seen = *(volatile uint64_t *)TLB_VA(c);

		if (seen < published)
			w->stale++;
	}
}

/*
 * CPL3, once per operation: finish the one in flight, check, and return
 * 1 to ask for the next remap, 0 when the run is over (after every CPU is
 * done: until then this CPU must keep acknowledging shootdowns).
 */
static uint64_t tlbflush_user(void *arg)
{
	struct worker *w = arg;
	unsigned int n = smp_online_count();

	if (!w->started) {
		w->started = true;
		__atomic_add_fetch(&ready_count, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&ready_count, __ATOMIC_ACQUIRE) < n)
			cpu_relax();
		w->deadline = rdtsc() + ms_to_tsc(duration_ms);
	}
	if (w->in_flight) {
		uint64_t give_up = rdtsc() + ms_to_tsc(ACK_TIMEOUT_MS);

		while (__atomic_load_n(&w->acks_pending, __ATOMIC_ACQUIRE)) {
			if (rdtsc() > give_up) {
				w->timeouts++;
				break;
			}
			cpu_relax();
		}
		__atomic_store_n(&w->published, w->generation,
				 __ATOMIC_RELEASE);
		w->in_flight = false;
		w->records++;
	}
	check_mappings(w);
	/* At least one operation each, however late this vCPU got here. */
	if ((rdtsc() < w->deadline || !w->records) && !w->timeouts)
		return 1;
	__atomic_add_fetch(&done_count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&done_count, __ATOMIC_ACQUIRE) < n)
		cpu_relax();
	return 0;
}

static bool tlbflush_setup(void)
{
	const uint32_t pv_bits = (1u << KVM_FEATURE_STEAL_TIME) |
				 (1u << KVM_FEATURE_PV_TLB_FLUSH);
	const char *pv = cmdline_get("pv");

	if (!cmdline_get_u64("ms", 1000, 1, 600000, &duration_ms) ||
	    !cmdline_get_u64("flush", 1, 0, 1, &remote_flush))
		return false;
	kvm_features = read_kvm_features();
	if (!pv || !strcmp(pv, "auto")) {
		use_pv = (kvm_features & pv_bits) == pv_bits;
	} else if (!strcmp(pv, "1")) {
		if ((kvm_features & pv_bits) != pv_bits) {
			printk("tlbflush: pv=1 but CPUID 0x40000001 offers no "
			       "steal time + PV TLB flush (kvm_features=0x%x)",
			       kvm_features);
			return false;
		}
		use_pv = true;
	} else if (!strcmp(pv, "0")) {
		use_pv = false;
	} else {
		printk("tlbflush: pv=%s, expected auto, 0 or 1", pv);
		return false;
	}

	/* Every CPU's page starts at its generation-0 frame. */
	for (unsigned int c = 0; c < MAX_CPUS; c++)
		tlb_pt[c] = (uint64_t)(uintptr_t)&frames[c][0] | PTE_TABLE;
	tlb_pd[0] = (uint64_t)(uintptr_t)tlb_pt | PTE_TABLE;
	tlb_pdpt[0] = (uint64_t)(uintptr_t)tlb_pd | PTE_TABLE;
	/* Not-present entries are never cached: no flush needed. */
	boot_pml4[TLB_PML4_SLOT] = (uint64_t)(uintptr_t)tlb_pdpt | PTE_TABLE;

	for (unsigned int s = 0; s < smp_online_count(); s++)
		irq_set_handler(IPI_VECTOR_BASE + s, flush_ipi);
	return true;
}

static void tlbflush_run(struct cpu *cpu)
{
	struct worker *w = &workers[cpu->nr];

	w->nr = cpu->nr;
	if (use_pv)
		wrmsr(MSR_KVM_STEAL_TIME,
		      (uint64_t)(uintptr_t)&steal_time[cpu->nr] |
			      KVM_MSR_ENABLED);
	while (run_at_cpl3(tlbflush_user, w))
		remap_and_shoot_down(w);
	/* The record stays KVM's until the VM ends: leave it registered. */
}

static bool tlbflush_report(struct result *r)
{
	uint64_t records = 0, sent = 0, saved = 0, stale = 0, timeouts = 0;
	unsigned int idle = 0;

	for (unsigned int i = 0; i < smp_online_count(); i++) {
		const struct worker *w = &workers[i];

		records += w->records;
		sent += w->ipis_sent;
		saved += w->ipis_saved;
		stale += w->stale;
		timeouts += w->timeouts;
		if (!w->records)
			idle++;
	}
	result_add(r, "records_per_s", "%lu", records * 1000 / duration_ms);
	result_add(r, "records", "%lu", records);
	result_add(r, "cycles", "%lu", ms_to_tsc(duration_ms));
	result_add(r, "ipis_sent", "%lu", sent);
	result_add(r, "ipis_saved", "%lu", saved);
	result_add(r, "stale", "%lu", stale);
	result_add(r, "pv", "%d", use_pv);
	if (!remote_flush)
		result_add(r, "flush", "0");
	if (idle)
		result_add(r, "idle_cpus", "%u", idle);
	if (timeouts)
		result_add(r, "timeouts", "%lu", timeouts);
	return !stale && !idle && !timeouts;
}

const struct payload payload_tlbflush = {
	.name = "tlbflush",
	.setup = tlbflush_setup,
	.run = tlbflush_run,
	.report = tlbflush_report,
};
