/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /dev/kvm: opened once per VM (cheap, and keeps VMs independent), with the
 * API version and the capabilities hintvm cannot run without checked up
 * front, so that a host that cannot work fails before anything is built.
 */
#ifndef HVM_CORE_KVM_HOST_H
#define HVM_CORE_KVM_HOST_H

#include <stdbool.h>
#include <stddef.h>

struct kvm_host {
	int fd;
	size_t run_size; /* mmap size of struct kvm_run per vCPU */
	int max_vcpus;
	int coalesced_mmio_page; /* 0: no coalesced MMIO */
	bool coalesced_pio;
	bool sync_regs;
	bool immediate_exit;
};

struct kvm_required_cap {
	long cap;
	const char *name;
};

/* Open PATH (normally /dev/kvm) and check the API version. */
int kvm_host_open(struct kvm_host *kvm, const char *path);
void kvm_host_close(struct kvm_host *kvm);

/* KVM_CHECK_EXTENSION on the /dev/kvm fd (or a VM fd); < 0 on error. */
int kvm_check_cap(int fd, long cap);

/* Fail with a message naming the first capability of CAPS KVM lacks. */
int kvm_require_caps(int fd, const struct kvm_required_cap *caps, size_t n);

#endif
