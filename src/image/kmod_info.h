/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a kernel module file says about itself: its .modinfo section's
 * "depends=" entry, the list depmod turns into modules.dep. For modules
 * directories that have no modules.dep (an unpacked Debian linux-image
 * package: depmod runs only when the package is installed).
 */
#ifndef HVM_IMAGE_KMOD_INFO_H
#define HVM_IMAGE_KMOD_INFO_H

#include <stddef.h>

/*
 * The comma-separated module names module file PATH depends on (possibly
 * empty) into BUF. 0; -ENOEXEC for a file that is not a 64-bit ELF module
 * (compressed ones included), -E2BIG when the list does not fit.
 */
int kmod_read_depends(const char *path, char *buf, size_t size);

#endif
