/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-container initramfs of console mode: the guest init
 * (guest-firmware/oci/oci-init.c) as /hintvm/oci-init (rdinit=), what it
 * runs as /hintvm/container (the CONTAINER frame of container_frame.h:
 * process, mounts, paths, sysctls, the seccomp program) and the container's root
 * file system under /hintvm/root (or a marker that it is a 9p share), as
 * one uncompressed newc archive the kernel unpacks after the base (the
 * guest agent's initramfs: the agent and the kernel modules).
 */
#ifndef HVM_RUNTIME_INITRAMFS_H
#define HVM_RUNTIME_INITRAMFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What goes into the archive besides oci-init and the container frame. */
struct rt_initramfs_extra {
	const char *rootfs; /* tree for /hintvm/root; NULL: a 9p share */
	/*
	 * mounts[i] of config.json: 'f' host file copied to
	 * /hintvm/files/i, 's' directory shared as tag m<i> (marker
	 * /hintvm/shares/i), 0 nothing
	 */
	const char *mount_kind;
	const char *const *mount_src; /* per mount, for 'f' */
	size_t nmounts;
	bool net_share; /* eth0's settings come in the "hvmcfg" share */
};

/*
 * Write OUT: the archive BASE (optional: kernel modules) as it is, then
 * GUEST_INIT, the container frame FRAME (LEN bytes) and what X names.
 * Returns 0 or a negative errno with the reason in ERR.
 */
int rt_initramfs_write(const char *out, const char *base,
		       const char *guest_init, const uint8_t *frame, size_t len,
		       const struct rt_initramfs_extra *x, char *err,
		       size_t errlen);

#endif
