// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kvm-hold: create one KVM VM, with the in-kernel irqchip and one vCPU
 * that never runs, and keep it in a background process until the L1 ends.
 * The parent exits 0 once the VM exists (non-zero with the reason when it
 * cannot be made).
 *
 * Why the x86 L1 holds one for its whole test run (tests/e2e/l1-init): KVM
 * counts VMs and vCPUs in static keys of the kernel (the scheduler's
 * preempt notifiers, KVM's own "local APIC software-disabled" key), and
 * every 0 <-> 1 transition of a key rewrites kernel code on a live system
 * through int3 patching. Under QEMU 7.2's TCG the other L1 CPU now and
 * then keeps executing the int3 from a stale translation of the patched
 * code: both L1 CPUs then spin in the int3 handler forever (the kernel
 * sees the int3 gone, backs up and returns to it), and the L1 is lost
 * with every test after it (issue 12, docs/linux-guests.md). With this VM
 * held, the tests' VMs only move the counts between 1 and more, and no
 * code is rewritten. It changes nothing a test checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "kvm-hold: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(void)
{
	int kvm, vm, vcpu;
	pid_t child;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return fail("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");
	/* The vCPU's local APIC is what holds KVM's APIC key. */
	if (ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0)
		return fail("KVM_CREATE_IRQCHIP");
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	child = fork();
	if (child < 0)
		return fail("fork");
	if (child > 0)
		return 0;
	/* The child holds the fds; nothing to say from here on. */
	setsid();
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	for (;;)
		pause();
}
