/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where hintvm (and QEMU virt) put things, when the tree does not say. */
#ifndef TK_PLATFORM_DEFAULTS_H
#define TK_PLATFORM_DEFAULTS_H

#include "arch/arm64/platform.h"

#define DEFAULT_GICD ARM64_GICD_GPA
#define DEFAULT_GICR ARM64_GICR_GPA
#define ARM64_UART_GPA_DEFAULT ARM64_UART_GPA

#endif
