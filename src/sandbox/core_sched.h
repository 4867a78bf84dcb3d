/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core scheduling (--core-sched, docs/sandbox.md): the kernel runs two
 * tasks on the SMT siblings of one core only when they carry the same
 * cookie (prctl PR_SCHED_CORE, Linux 5.14+ with CONFIG_SCHED_CORE), so a
 * VM whose threads hold a cookie of their own never has another tenant's
 * task on a vCPU's sibling, where it could read what the guest leaves in
 * the core's shared buffers (MDS, L1TF and their kin).
 *
 * A cookie is per thread and a new thread inherits its creator's
 * (sched_core_fork(), called for every clone), so a cookie made on the
 * thread that builds a VM, before the VM's first thread exists, covers
 * every thread of the VM; a vCPU thread that makes one of its own at its
 * start (--core-sched vcpu) shares its core with no other thread at all.
 * Both are made before the thread's seccomp filter loads: no filter
 * allows prctl(PR_SCHED_CORE).
 */
#ifndef HVM_SANDBOX_CORE_SCHED_H
#define HVM_SANDBOX_CORE_SCHED_H

#include <stdint.h>
#include <sys/types.h>

/*
 * A new cookie for the calling thread alone. 0, or -errno with a reason
 * that names --core-sched MODE: -EOPNOTSUPP when the kernel has no core
 * scheduling, -ENODEV when the machine has no SMT (or it is off), which
 * leaves no sibling to protect.
 */
int core_sched_create(const char *mode);

/*
 * For a VM with --core-sched off: when the calling thread holds a cookie
 * core_sched_create() made for an earlier VM, give it a fresh one, so
 * that this VM's threads never share that VM's cookie (and its cores).
 * Nothing on a thread hintvm never gave a cookie. 0 or -errno.
 */
int core_sched_leave_earlier(void);

/* The cookie of thread TID (0: the caller; none: 0). 0 or -errno. */
int core_sched_get(pid_t tid, uint64_t *cookie);

#endif
