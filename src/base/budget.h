/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A byte budget for host memory that a guest makes hintvm allocate (vsock
 * connections and their buffers, 9P fids and xattr buffers): without one, a
 * guest could grow the VMM by a gigabyte through objects each of which is
 * within its own limit. Charges are atomic (several device threads share a
 * VM's budget); a charge that would pass the limit is refused and counted,
 * and the device tells the guest with an error of its protocol.
 */
#ifndef HVM_BASE_BUDGET_H
#define HVM_BASE_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct budget {
	uint64_t limit; /* bytes; 0: no limit */
	_Atomic uint64_t used;
	_Atomic uint64_t peak;
	_Atomic uint64_t refused; /* charges refused */
};

/* Take N bytes; false (and counted) when that would pass the limit. NULL
 * budget: always true (a device built without a VM, in unit tests). */
bool budget_charge(struct budget *b, uint64_t n);

/* Give back N bytes taken by budget_charge(). */
void budget_release(struct budget *b, uint64_t n);

/* Take N bytes whatever the limit: for a change that cannot be refused
 * halfway (a rename that lengthens the paths of many fids at once). */
void budget_force(struct budget *b, uint64_t n);

/*
 * B as the sum of budgets held elsewhere (another process's): USED is one
 * of them now, *SEEN its figure the last time; B moves by the difference
 * and remembers its own peak. Figures may arrive in any order: each swaps
 * itself in, so the sum is at most one figure stale.
 */
void budget_follow(struct budget *b, _Atomic uint64_t *seen, uint64_t used);

#endif
