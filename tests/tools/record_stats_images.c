// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Record the binary statistics files of a real VM and vCPU, so the parser's
 * unit tests run against what this kernel really produces (committed under
 * tests/unit/sched/data/). Not part of the build's test run: it needs
 * /dev/kvm. Usage: record_stats_images OUTDIR
 *
 * The vCPU first runs a few real-mode instructions (a port write, then hlt)
 * so that some counters are non-zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

static int dump(int stats_fd, const char *dir, const char *name)
{
	char path[4096], buf[4096];
	uint64_t off = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	while ((n = pread(stats_fd, buf, sizeof(buf), (off_t)off)) > 0) {
		fwrite(buf, 1, (size_t)n, f);
		off += (uint64_t)n;
	}
	fclose(f);
	printf("%s: %llu bytes\n", path, (unsigned long long)off);
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	/* mov al, 1; out 0x10, al; hlt */
	static const uint8_t code[] = { 0xb0, 0x01, 0xe6, 0x10, 0xf4 };
	struct kvm_userspace_memory_region region;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int kvm, vm, vcpu, vm_stats, vcpu_stats;
	size_t run_size;
	uint8_t *mem;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		perror("/dev/kvm");
		return 77;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (vm < 0 || mem == MAP_FAILED) {
		perror("KVM_CREATE_VM");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0x1000,
		.memory_size = 0x1000,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		perror("KVM_SET_USER_MEMORY_REGION");
		return 1;
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	run_size = (size_t)ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (vcpu < 0 || run == MAP_FAILED) {
		perror("KVM_CREATE_VCPU");
		return 1;
	}
	ioctl(vcpu, KVM_GET_SREGS, &sregs);
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	ioctl(vcpu, KVM_SET_SREGS, &sregs);
	regs = (struct kvm_regs){ .rip = 0x1000, .rflags = 2 };
	ioctl(vcpu, KVM_SET_REGS, &regs);
	for (int i = 0; i < 4; i++) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			perror("KVM_RUN");
			break;
		}
		printf("exit reason %u\n", run->exit_reason);
		if (run->exit_reason != KVM_EXIT_IO)
			break;
	}

	vm_stats = ioctl(vm, KVM_GET_STATS_FD, 0);
	vcpu_stats = ioctl(vcpu, KVM_GET_STATS_FD, 0);
	if (vm_stats < 0 || vcpu_stats < 0) {
		perror("KVM_GET_STATS_FD");
		return 1;
	}
	if (dump(vm_stats, argv[1], "vm-stats.bin") ||
	    dump(vcpu_stats, argv[1], "vcpu-stats.bin"))
		return 1;
	return 0;
}
