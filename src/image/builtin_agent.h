/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest agent built into libhintvm (guest-firmware/agent, a static
 * program for the build's architecture), packed as /init by `hintvm
 * initramfs` and `hintvm run --agent`. Empty (start == end) in builds
 * that cannot link it statically (sanitizers).
 */
#ifndef HVM_IMAGE_BUILTIN_AGENT_H
#define HVM_IMAGE_BUILTIN_AGENT_H

#include <stddef.h>

extern const unsigned char hvm_builtin_agent_start[];
extern const unsigned char hvm_builtin_agent_end[];

static inline size_t hvm_builtin_agent_size(void)
{
	return (size_t)(hvm_builtin_agent_end - hvm_builtin_agent_start);
}

#endif
