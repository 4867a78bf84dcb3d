/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* arm64 helpers: system registers, barriers, device register access. */
#ifndef TK_ARM64_H
#define TK_ARM64_H

#include "lib.h"

#define read_sysreg(r)                                       \
	({                                                   \
		uint64_t __v;                                \
		__asm__ volatile("mrs %0, " #r : "=r"(__v)); \
		__v;                                         \
	})
#define write_sysreg(r, v) \
	__asm__ volatile("msr " #r ", %0" ::"r"((uint64_t)(v)) : "memory")
#define isb() __asm__ volatile("isb" ::: "memory")
#define dsb(opt) __asm__ volatile("dsb " #opt ::: "memory")

/*
 * Device register access with plain [Xn] addressing. KVM can only emulate
 * a trapped access whose syndrome it can decode: the compiler's
 * post-indexed or pair forms (str w1, [x0], #4; ldp) end the VM with
 * KVM_RUN -ENOSYS. QEMU's TCG runs them either way.
 */
static inline uint32_t mmio_read32(uint64_t addr)
{
	uint32_t v;

	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}
static inline void mmio_write32(uint64_t addr, uint32_t v)
{
	__asm__ volatile("str %w0, [%1]" ::"rZ"(v), "r"(addr) : "memory");
}
static inline uint8_t mmio_read8(uint64_t addr)
{
	uint32_t v;

	__asm__ volatile("ldrb %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return (uint8_t)v;
}
static inline void mmio_write8(uint64_t addr, uint8_t v)
{
	__asm__ volatile("strb %w0, [%1]" ::"rZ"(v), "r"(addr) : "memory");
}

static inline void cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

#endif
