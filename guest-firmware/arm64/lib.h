/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The little libc the test kernel needs, plus arm64 helpers. */
#ifndef TK_LIB_H
#define TK_LIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* printf subset: %s %c %d %u %x %lu %lx %ld %llu %llx %p, width/0-pad. */
size_t format(char *buf, size_t size, const char *fmt, va_list ap);
size_t snformat(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

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
