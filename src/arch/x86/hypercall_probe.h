/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Can this host serve KVM hypercalls? On nested kvm_pvm hosts a vmcall
 * from guest CPL0 livelocks the vCPU (KVM_RUN never returns), so the
 * hypercall-based PV features (unhalt, send-ipi, sched-yield) must not be
 * offered there. Probed once per process with a throw-away VM that makes
 * a harmless hypercall under a timeout.
 */
#ifndef HVM_X86_HYPERCALL_PROBE_H
#define HVM_X86_HYPERCALL_PROBE_H

#include <stdbool.h>

bool x86_hypercalls_work(int kvm_fd);

#endif
