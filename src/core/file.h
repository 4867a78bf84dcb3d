/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef HVM_CORE_FILE_H
#define HVM_CORE_FILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read all of PATH into a malloc'ed buffer. WHAT names the file's role in
 * error messages ("kernel", "initrd"). Refuses files above MAX bytes and
 * anything that is not a regular file or block device.
 */
int read_whole_file(const char *path, const char *what, size_t max,
		    uint8_t **data, size_t *size);

/*
 * The same checks, but map PATH read-only (MAP_PRIVATE) instead of copying
 * it: a loader that copies parts of a large file (a 66 MiB vmlinux whose
 * loadable segments are half of it) then touches only those. Release with
 * munmap(*DATA, *SIZE). A file truncated while mapped faults (SIGBUS) on
 * access, as with any mapped file: hintvm only reads it before the guest
 * runs, from the file the user named.
 */
int map_whole_file(const char *path, const char *what, size_t max,
		   const uint8_t **data, size_t *size);

#endif
