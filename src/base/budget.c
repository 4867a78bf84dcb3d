// SPDX-License-Identifier: LGPL-2.1-or-later
/* Host memory the guest makes hintvm allocate (budget.h). */
#include "base/budget.h"

/* Remember USED as the most held at once, if it is. */
static void raise_peak(struct budget *b, uint64_t used)
{
	uint64_t peak = atomic_load_explicit(&b->peak, memory_order_relaxed);

	while (used > peak &&
	       !atomic_compare_exchange_weak_explicit(&b->peak, &peak, used,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

bool budget_charge(struct budget *b, uint64_t n)
{
	uint64_t used;

	if (!b)
		return true;
	used = atomic_load_explicit(&b->used, memory_order_relaxed);
	do {
		if (b->limit && (n > b->limit || used > b->limit - n)) {
			atomic_fetch_add_explicit(&b->refused, 1,
						  memory_order_relaxed);
			return false;
		}
	} while (!atomic_compare_exchange_weak_explicit(
		&b->used, &used, used + n, memory_order_relaxed,
		memory_order_relaxed));
	raise_peak(b, used + n);
	return true;
}

void budget_force(struct budget *b, uint64_t n)
{
	if (b)
		raise_peak(b, atomic_fetch_add_explicit(&b->used, n,
							memory_order_relaxed) +
				      n);
}

void budget_release(struct budget *b, uint64_t n)
{
	if (b)
		atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
}

void budget_follow(struct budget *b, _Atomic uint64_t *seen, uint64_t used)
{
	/* Unsigned: a smaller figure than the last adds its wrapped difference. */
	uint64_t d = used -
		     atomic_exchange_explicit(seen, used, memory_order_relaxed);

	if (b)
		raise_peak(b, atomic_fetch_add_explicit(&b->used, d,
							memory_order_relaxed) +
				      d);
}
