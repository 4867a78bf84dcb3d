/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest agent's initramfs: the agent as /init and the kernel modules
 * it needs (initramfs.c). The public side is hvm_initramfs_build(),
 * hvm_initramfs_cached() and hvm_kernel_version() in hintvm.h.
 */
#ifndef HVM_IMAGE_INITRAMFS_H
#define HVM_IMAGE_INITRAMFS_H

#include <stddef.h>
#include <stdint.h>

#define INITRAMFS_MAX_FILE (512u << 20)

struct initramfs_extra {
	const char *src; /* a host file */
	const char *dest; /* its path in the archive, relative */
};

/*
 * The archive in a malloc'ed buffer: the agent, the modules of
 * MODULES_DIR (NULL: none) and the extra files.
 */
int initramfs_build(const char *modules_dir,
		    const struct initramfs_extra *extra, size_t nr_extra,
		    uint8_t **data, size_t *size);

/* Write DATA to PATH atomically (a temporary file, then rename). */
int initramfs_write_file(const char *path, const uint8_t *data, size_t size);

#endif
