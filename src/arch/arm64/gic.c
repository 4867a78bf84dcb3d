// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/arm64/gic.h"
#include "base/log.h"

_Static_assert(KVM_ARM_IRQ_TYPE_SPI == 1 && KVM_ARM_IRQ_TYPE_SHIFT == 24,
	       "gic_spi_gsi() encodes KVM_IRQ_LINE's SPI type");

static int gic_set_attr(struct gic *gic, uint32_t group, uint64_t attr,
			const void *value, const char *what)
{
	struct kvm_device_attr a = {
		.group = group,
		.attr = attr,
		.addr = (uintptr_t)value,
	};

	if (ioctl(gic->fd, KVM_SET_DEVICE_ATTR, &a) < 0)
		return hvm_set_errno_error("vGICv3: cannot set %s", what);
	return 0;
}

int gic_create(struct gic *gic, int vm_fd, unsigned int nr_vcpus)
{
	struct kvm_create_device dev = { .type = KVM_DEV_TYPE_ARM_VGIC_V3 };
	uint64_t dist = ARM64_GICD_GPA, redist = ARM64_GICR_GPA;
	uint32_t nr_irqs = ARM64_GIC_NR_IRQS;
	int r;

	if (nr_vcpus > ARM64_MAX_VCPUS)
		return hvm_set_error(
			-EINVAL,
			"%u vCPUs need more GICv3 redistributors than fit below 0x%llx (at most %llu)",
			nr_vcpus, ARM64_GICR_END, ARM64_MAX_VCPUS);
	if (ioctl(vm_fd, KVM_CREATE_DEVICE, &dev) < 0)
		return hvm_set_error(
			-errno,
			"KVM cannot create a GICv3 (%s); hintvm needs a host with GICv3 (GICv2-only hosts are not supported)",
			strerror(errno));
	gic->fd = (int)dev.fd;
	r = gic_set_attr(gic, KVM_DEV_ARM_VGIC_GRP_ADDR,
			 KVM_VGIC_V3_ADDR_TYPE_DIST, &dist,
			 "the distributor address");
	if (!r)
		r = gic_set_attr(gic, KVM_DEV_ARM_VGIC_GRP_ADDR,
				 KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist,
				 "the redistributor address");
	if (!r)
		r = gic_set_attr(gic, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &nr_irqs,
				 "the number of interrupts");
	return r;
}

int gic_finalize(struct gic *gic)
{
	return gic_set_attr(gic, KVM_DEV_ARM_VGIC_GRP_CTRL,
			    KVM_DEV_ARM_VGIC_CTRL_INIT, NULL, "CTRL_INIT");
}

void gic_destroy(struct gic *gic)
{
	if (gic->fd >= 0)
		close(gic->fd);
	gic->fd = -1;
}
