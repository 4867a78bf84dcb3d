/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.json's linux.seccomp -> a classic BPF seccomp program, compiled
 * on the host with libseccomp, as runc builds its filter. The guest only
 * loads the bytes (oci-init for the main process, the guest agent for
 * exec): the VM runs the host's architecture, so the host's libseccomp
 * knows its syscall numbers, and a profile's mistakes are reported by
 * create, in the engine's log, before any VM boots.
 */
#ifndef HVM_RUNTIME_SECCOMP_H
#define HVM_RUNTIME_SECCOMP_H

#include <stddef.h>

#include "spec.h"

/* The kernel's limit on a classic BPF program: BPF_MAXINSNS of 8 bytes. */
#define RT_SECCOMP_MAX_BYTES (4096 * 8)

/*
 * Compile SC into *PROG (malloc'd, *LEN bytes, a multiple of 8). Syscall
 * names this libseccomp does not know are skipped, as runc skips them,
 * and listed in UNKNOWN (", "-separated, truncated to UNKNOWN_LEN; *NUNKNOWN
 * counts them all). Returns 0, or a negative errno with ERR saying which
 * entry failed.
 */
int rt_seccomp_compile(const struct oci_seccomp *sc, void **prog, size_t *len,
		       char *unknown, size_t unknown_len, size_t *nunknown,
		       char *err, size_t errlen);

#endif
