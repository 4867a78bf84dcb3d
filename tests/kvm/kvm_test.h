/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for kvm-suite tests: boot a guest through the public API with
 * its console captured, and read back what it printed.
 */
#ifndef HVM_KVM_TEST_H
#define HVM_KVM_TEST_H

#include <stdbool.h>

#include "hintvm/hintvm.h"

#define KVM_TEST_SKIP 77

struct guest_run {
	struct hvm_exit exit;
	char *output; /* everything the guest wrote to its serial port */
};

/*
 * hvm_config_new() plus what the whole run asks for: KVM_TEST_IRQCHIP
 * (split or kernel) selects --irqchip, so meson runs the suite once per
 * interrupt-controller mode. NULL on failure.
 */
struct hvm_config *kvm_test_config_new(void);

/* Exit with the skip status, saying why, when /dev/kvm is unusable. */
void kvm_test_require_kvm(void);

/*
 * Boot the built-in test kernel (or KERNEL) with CPUS vCPUs and CMDLINE,
 * plus optional extra "key=value" options (NULL-terminated), and wait for
 * it to end. Returns 0, or -1 when the VM could not be created (the reason
 * is in hvm_last_error()).
 */
int guest_boot(struct guest_run *run, const char *kernel, unsigned int cpus,
	       const char *cmdline, const char *const *extra);
void guest_run_free(struct guest_run *run);

/* The value of KEY in the guest's RESULT line, or NULL. Static buffer. */
const char *result_field(const struct guest_run *run, const char *key);

#endif
