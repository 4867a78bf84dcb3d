/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef HVM_BASE_FILE_H
#define HVM_BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * Read all of PATH into a malloc'ed buffer. WHAT names the file's role in
 * error messages ("kernel", "initrd"). Refuses files above MAX bytes and
 * anything that is not a regular file or block device.
 */
int read_whole_file(const char *path, const char *what, size_t max,
		    uint8_t **data, size_t *size);

/*
 * open(PATH, FLAGS) for a host input without ever waiting in open(): with
 * O_NONBLOCK, so a FIFO (or a device that waits for carrier) cannot hang
 * hintvm there; then fstat into *ST, and O_NONBLOCK cleared again (io_uring
 * and plain reads must see an ordinary blocking file). Returns the fd or
 * -errno; the caller checks the file type in *ST.
 */
int open_host_input(const char *path, int flags, struct stat *st);

/*
 * open_host_input(PATH, FLAGS) now, kept for the first later call with
 * the same PATH and FLAGS, which takes it instead of opening PATH again:
 * --jail (src/vmm/jail.c) opens the VM's images this way while it is
 * still host root, before its user namespace, where root-owned images
 * would be out of the VM's uid's reach. 0, or -errno (the caller words
 * it; a later open says it again).
 */
int open_host_input_early(const char *path, int flags);

/*
 * Take QEMU's locks on an open disk image (the byte-range OFD locks of
 * QEMU's file-posix driver: byte 100 + n held for permission n, 200 + n
 * for a permission others may not share; n = 0 consistent read, 1 write),
 * as a QEMU virtio-blk device would: read, WRITE when writable, and nobody
 * else may write. Returns 0, or -EBUSY (what conflicts in
 * hvm_error_message()) when another process, QEMU or hintvm, holds a lock
 * that excludes ours. Released when FD is closed.
 */
int file_lock_like_qemu(int fd, bool write);

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

/*
 * After bind(): PATH must be the socket just bound, ours and closed to
 * group and others, seen without following a link (a chmod(PATH) would
 * follow one planted there since). The mode comes from fchmod() on the
 * socket before bind(), which Linux gives the file. 0, or -EPERM with the
 * reason; *ST receives what PATH is.
 */
int check_bound_socket(const char *what, const char *path, struct stat *st);

#endif
