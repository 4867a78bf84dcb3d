/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Limits and per-CPU layout shared by the assembly and the C code. */
#ifndef TK_LAYOUT_H
#define TK_LAYOUT_H

#define MAX_CPUS 8 /* SGI INTIDs 0-15 name the sender: at most 16 */
#define KSTACK_SIZE 0x4000
#define USTACK_SIZE 0x4000
#define CPU_SAVED_KSP 0 /* offsetof(struct cpu, saved_ksp) */

/* PSCI 0.2 function IDs (SMC64 where there is a choice). */
#define PSCI_CPU_ON 0xc4000003
#define PSCI_SYSTEM_OFF 0x84000008
#define PSCI_SYSTEM_RESET 0x84000009

#endif
