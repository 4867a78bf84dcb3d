/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The optional KVM patch series (kernel/): its userspace interface lives in
 * kvm_hint_uapi.h. At run time hintvm probes KVM_CHECK_EXTENSION for the
 * series' capabilities and uses them when present; otherwise it falls back
 * to what stock KVM offers. The answer is shown in --stats.
 */
#ifndef HVM_SCHED_KERNEL_HINTS_H
#define HVM_SCHED_KERNEL_HINTS_H

/* "stock KVM", or which of the series' capabilities this host has. */
const char *kernel_hints_probe(int kvm_fd);

#endif
