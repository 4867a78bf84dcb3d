// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/log.h"
#include "core/kvm_host.h"

int kvm_check_cap(int fd, long cap)
{
	int r = ioctl(fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? -errno : r;
}

int kvm_require_caps(int fd, const struct kvm_required_cap *caps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (kvm_check_cap(fd, caps[i].cap) <= 0)
			return hvm_set_error(
				-ENOTSUP,
				"KVM on this host lacks %s, which hintvm requires",
				caps[i].name);
	}
	return 0;
}

static const struct kvm_required_cap common_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP (in-kernel interrupt controller)" },
	{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
	{ KVM_CAP_IRQFD, "KVM_CAP_IRQFD" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
};

int kvm_host_open(struct kvm_host *kvm, const char *path)
{
	int version, r;

	*kvm = (struct kvm_host){ .fd = -1 };
	kvm->fd = open(path, O_RDWR | O_CLOEXEC);
	if (kvm->fd < 0) {
		int err = errno;

		if (err == ENOENT)
			return hvm_set_error(
				-err,
				"%s does not exist: this host has no KVM (is the kvm module loaded, or is this a VM without nested virtualization?)",
				path);
		if (err == EACCES || err == EPERM)
			return hvm_set_error(
				-err,
				"no permission to open %s: add your user to the group owning it (usually 'kvm') or run as root",
				path);
		return hvm_set_error(-err, "cannot open %s: %s", path,
				     strerror(err));
	}

	version = ioctl(kvm->fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION) {
		kvm_host_close(kvm);
		return hvm_set_error(
			-ENOTSUP,
			"%s speaks KVM API version %d; hintvm needs version %d",
			path, version, KVM_API_VERSION);
	}

	r = kvm_require_caps(kvm->fd, common_caps,
			     sizeof(common_caps) / sizeof(common_caps[0]));
	if (r < 0) {
		kvm_host_close(kvm);
		return r;
	}

	r = ioctl(kvm->fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (r <= 0) {
		kvm_host_close(kvm);
		return hvm_set_error(
			-ENOTSUP, "KVM_GET_VCPU_MMAP_SIZE failed on %s", path);
	}
	kvm->run_size = (size_t)r;

	kvm->max_vcpus = kvm_check_cap(kvm->fd, KVM_CAP_MAX_VCPUS);
	if (kvm->max_vcpus <= 0)
		kvm->max_vcpus = kvm_check_cap(kvm->fd, KVM_CAP_NR_VCPUS);
	if (kvm->max_vcpus <= 0)
		kvm->max_vcpus = 4; /* what the API documents as the floor */
	kvm->coalesced_mmio_page =
		kvm_check_cap(kvm->fd, KVM_CAP_COALESCED_MMIO);
	if (kvm->coalesced_mmio_page < 0)
		kvm->coalesced_mmio_page = 0;
	kvm->coalesced_pio = kvm_check_cap(kvm->fd, KVM_CAP_COALESCED_PIO) > 0;
	kvm->sync_regs = kvm_check_cap(kvm->fd, KVM_CAP_SYNC_REGS) > 0;
	kvm->immediate_exit = true;
	return 0;
}

void kvm_host_close(struct kvm_host *kvm)
{
	if (kvm->fd >= 0)
		close(kvm->fd);
	kvm->fd = -1;
}
