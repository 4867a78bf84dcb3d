/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A writer of newc ("070701") cpio archives, the format Linux unpacks as
 * an initramfs: directories, regular files, symlinks and device nodes,
 * into a growing memory buffer. No external cpio: `hintvm initramfs`
 * needs to name owners and device numbers the host user may not have.
 */
#ifndef HVM_IMAGE_CPIO_H
#define HVM_IMAGE_CPIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cpio {
	uint8_t *buf;
	size_t len, cap;
	uint32_t next_ino;
	int error; /* the first failure; every later call does nothing */
};

void cpio_init(struct cpio *c);
/* NAME is relative ("init", "lib/modules"); MODE includes the type bits. */
void cpio_add(struct cpio *c, const char *name, mode_t mode, const void *data,
	      size_t size, unsigned int rdev_major, unsigned int rdev_minor);
void cpio_add_dir(struct cpio *c, const char *name);
void cpio_add_file(struct cpio *c, const char *name, mode_t perm,
		   const void *data, size_t size);
/* Append the trailer. Returns 0 or the first error (-ENOMEM, -EINVAL). */
int cpio_finish(struct cpio *c);
void cpio_release(struct cpio *c);

#endif
