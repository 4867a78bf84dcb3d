/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test kernel built into libhintvm (guest-firmware/<arch>), booted by
 * `hintvm run` when no --kernel is given: a PVH ELF on x86-64. Empty
 * (start == end) on architectures that have none yet.
 */
#ifndef HVM_IMAGE_BUILTIN_KERNEL_H
#define HVM_IMAGE_BUILTIN_KERNEL_H

#include <stddef.h>

extern const unsigned char hvm_builtin_kernel_start[];
extern const unsigned char hvm_builtin_kernel_end[];

static inline size_t hvm_builtin_kernel_size(void)
{
	return (size_t)(hvm_builtin_kernel_end - hvm_builtin_kernel_start);
}

#endif
