/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/vgic-probe: what creating and destroying a minimal arm64 VM costs
 * (one 1 MiB memory slot, one initialized vCPU), without and with a vGICv3
 * (addresses, 128 IRQs, CTRL_INIT). Prints one VGICPROBE line for each: the
 * median, min and max of N runs (default 9). bench/vgic-l1 runs it in the
 * nested arm64 L1; docs/arm64.md has the figures. Not built by meson.
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static int cmp(const void *a, const void *b)
{
	double x = *(double *)a, y = *(double *)b;
	return x < y ? -1 : x > y;
}
static void attr(int fd, uint32_t g, uint64_t a, void *v)
{
	struct kvm_device_attr d = { .group = g,
				     .attr = a,
				     .addr = (uintptr_t)v };
	if (ioctl(fd, KVM_SET_DEVICE_ATTR, &d) < 0)
		perror("attr");
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 9, kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0) {
		perror("/dev/kvm");
		return 1;
	}
	for (int gic = 0; gic < 2; gic++) {
		double c[64], d[64];
		for (int i = 0; i < n; i++) {
			double t0 = now();
			int vm = ioctl(kvm, KVM_CREATE_VM, 0);
			void *mem = mmap(0, 1 << 20, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			struct kvm_userspace_memory_region r = {
				.slot = 0,
				.guest_phys_addr = 0x40000000,
				.memory_size = 1 << 20,
				.userspace_addr = (uintptr_t)mem
			};
			ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r);
			int gfd = -1;
			if (gic) {
				struct kvm_create_device cd = {
					.type = KVM_DEV_TYPE_ARM_VGIC_V3
				};
				if (ioctl(vm, KVM_CREATE_DEVICE, &cd) < 0)
					perror("vgic");
				gfd = cd.fd;
				uint64_t dist = 0x08000000, red = 0x080a0000;
				uint32_t nirq = 128;
				attr(gfd, KVM_DEV_ARM_VGIC_GRP_ADDR,
				     KVM_VGIC_V3_ADDR_TYPE_DIST, &dist);
				attr(gfd, KVM_DEV_ARM_VGIC_GRP_ADDR,
				     KVM_VGIC_V3_ADDR_TYPE_REDIST, &red);
				attr(gfd, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0,
				     &nirq);
			}
			int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
			struct kvm_vcpu_init init;
			ioctl(vm, KVM_ARM_PREFERRED_TARGET, &init);
			if (ioctl(vcpu, KVM_ARM_VCPU_INIT, &init) < 0)
				perror("vcpu init");
			if (gic)
				attr(gfd, KVM_DEV_ARM_VGIC_GRP_CTRL,
				     KVM_DEV_ARM_VGIC_CTRL_INIT, NULL);
			double t1 = now();
			close(vcpu);
			if (gfd >= 0)
				close(gfd);
			close(vm);
			munmap(mem, 1 << 20);
			double t2 = now();
			c[i] = t1 - t0;
			d[i] = t2 - t1;
		}
		qsort(c, n, sizeof(double), cmp);
		qsort(d, n, sizeof(double), cmp);
		printf("VGICPROBE %s create median %.2f ms (min %.2f max %.2f) destroy median %.2f ms (min %.2f max %.2f) n=%d\n",
		       gic ? "vm+vcpu+vgicv3" : "vm+vcpu", c[n / 2], c[0],
		       c[n - 1], d[n / 2], d[0], d[n - 1], n);
	}
	return 0;
}
