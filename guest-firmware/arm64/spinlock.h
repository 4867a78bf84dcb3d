/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A test-and-set lock (needs the MMU on: exclusives want normal memory). */
#ifndef TK_SPINLOCK_H
#define TK_SPINLOCK_H

#include "arm64.h"

struct spinlock {
	uint32_t locked;
};

static inline void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
