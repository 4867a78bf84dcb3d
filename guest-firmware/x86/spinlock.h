/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test-and-test-and-set spinlock (xchg only: no cmpxchg16b on the host). */
#ifndef TK_SPINLOCK_H
#define TK_SPINLOCK_H

#include "x86.h"

struct spinlock {
	volatile uint32_t locked;
};

static inline void spin_lock(struct spinlock *lock)
{
	while (__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE)) {
		while (lock->locked)
			cpu_relax();
	}
}

static inline void spin_unlock(struct spinlock *lock)
{
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
}

#endif
