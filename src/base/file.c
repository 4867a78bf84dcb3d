// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"

/* open_host_input() without the early ones. */
static int open_fresh(const char *path, int flags, struct stat *st)
{
	int fd = open(path, flags | O_NONBLOCK), fl, err;

	if (fd < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fstat(fd, st) < 0 || fl < 0 ||
	    (!(flags & O_NONBLOCK) &&
	     fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* open_host_input_early()'s: few (the images and the kernel of a VM). */
#define EARLY_FILES 16
static struct early_file {
	char *path;
	int flags;
	int fd;
} early[EARLY_FILES];

static int take_early(const char *path, int flags, struct stat *st)
{
	for (unsigned int i = 0; i < EARLY_FILES; i++) {
		int fd = early[i].fd;

		if (!early[i].path || early[i].flags != flags ||
		    strcmp(early[i].path, path))
			continue;
		free(early[i].path);
		early[i] = (struct early_file){ 0 };
		if (fstat(fd, st) < 0) {
			int err = errno;

			close(fd);
			return -err;
		}
		return fd;
	}
	return -ENOENT;
}

int open_host_input_early(const char *path, int flags)
{
	struct stat st;

	for (unsigned int i = 0; i < EARLY_FILES; i++) {
		int fd;

		if (early[i].path)
			continue;
		/* Fresh: the same image twice (read-only) is two fds. */
		fd = open_fresh(path, flags, &st);
		if (fd < 0)
			return fd;
		early[i] = (struct early_file){ .path = strdup(path),
						.flags = flags,
						.fd = fd };
		if (!early[i].path) {
			close(fd);
			early[i] = (struct early_file){ 0 };
			return -ENOMEM;
		}
		return 0;
	}
	return -ENOSPC;
}

int open_host_input(const char *path, int flags, struct stat *st)
{
	int fd = take_early(path, flags, st);

	return fd >= 0 ? fd : open_fresh(path, flags, st);
}

/* QEMU's lock layout (block/file-posix), so that both see each other. */
#define QEMU_LOCK_PERM_BASE 100
#define QEMU_LOCK_SHARED_BASE 200
#define QEMU_PERM_READ 0 /* BLK_PERM_CONSISTENT_READ */
#define QEMU_PERM_WRITE 1 /* BLK_PERM_WRITE */

static int ofd_lock_byte(int fd, off_t byte)
{
	struct flock fl = { .l_type = F_RDLCK,
			    .l_whence = SEEK_SET,
			    .l_start = byte,
			    .l_len = 1 };

	return fcntl(fd, F_OFD_SETLK, &fl) < 0 ? -errno : 0;
}

/* Whether another open file holds a lock on BYTE (ours never conflict). */
static bool ofd_byte_held(int fd, off_t byte)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = byte,
			    .l_len = 1 };

	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

int file_lock_like_qemu(int fd, bool write)
{
	static const char *const perm_name[] = { "read", "write" };
	static const char *const perm_use[] = { "reading", "writing" };
	unsigned int perms = 1u << QEMU_PERM_READ;
	unsigned int unshared = 1u << QEMU_PERM_WRITE;
	int r;

	if (write)
		perms |= 1u << QEMU_PERM_WRITE;
	/* Take ours first, then look: two starting at once both back off. */
	for (unsigned int n = 0; n < 2; n++) {
		if ((perms & (1u << n)) &&
		    (r = ofd_lock_byte(fd, QEMU_LOCK_PERM_BASE + n)) < 0)
			return r;
		if ((unshared & (1u << n)) &&
		    (r = ofd_lock_byte(fd, QEMU_LOCK_SHARED_BASE + n)) < 0)
			return r;
	}
	for (unsigned int n = 0; n < 2; n++) {
		if ((perms & (1u << n)) &&
		    ofd_byte_held(fd, QEMU_LOCK_SHARED_BASE + n))
			return hvm_set_error(
				-EBUSY,
				"another process (QEMU or hintvm) does not let others %s it",
				perm_name[n]);
		if ((unshared & (1u << n)) &&
		    ofd_byte_held(fd, QEMU_LOCK_PERM_BASE + n))
			return hvm_set_error(
				-EBUSY,
				"another process (QEMU or hintvm) has it open for %s",
				perm_use[n]);
	}
	return 0;
}

/*
 * Open PATH (a WHAT, for messages) as a non-empty regular file of at most
 * MAX bytes; the fd, or -errno with the reason recorded.
 */
static int open_whole_file(const char *path, const char *what, size_t max,
			   struct stat *st)
{
	int fd = open_host_input(path, O_RDONLY | O_CLOEXEC, st);

	if (fd < 0) {
		errno = -fd;
		return hvm_set_errno_error("cannot open %s %s", what, path);
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return hvm_set_error(-EINVAL, "%s %s is not a regular file",
				     what, path);
	}
	if ((uint64_t)st->st_size > max) {
		close(fd);
		return hvm_set_error(-EFBIG,
				     "%s %s is %lld bytes; at most %zu fit",
				     what, path, (long long)st->st_size, max);
	}
	if (st->st_size == 0) {
		close(fd);
		return hvm_set_error(-EINVAL, "%s %s is empty", what, path);
	}
	return fd;
}

int read_whole_file(const char *path, const char *what, size_t max,
		    uint8_t **data, size_t *size)
{
	struct stat st;
	size_t done = 0;
	uint8_t *buf;
	int fd, err;

	fd = open_whole_file(path, what, max, &st);
	if (fd < 0)
		return fd;
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return hvm_set_error(-ENOMEM, "out of memory reading %s %s",
				     what, path);
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			free(buf);
			close(fd);
			return hvm_set_error(-err, "cannot read %s %s: %s",
					     what, path, strerror(err));
		}
		done += (size_t)n;
	}
	close(fd);
	*data = buf;
	*size = done;
	return 0;
}

int map_whole_file(const char *path, const char *what, size_t max,
		   const uint8_t **data, size_t *size)
{
	struct stat st;
	void *map;
	int fd;

	fd = open_whole_file(path, what, max, &st);
	if (fd < 0)
		return fd;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return hvm_set_errno_error("cannot map %s %s", what, path);
	*data = map;
	*size = (size_t)st.st_size;
	return 0;
}

int check_bound_socket(const char *what, const char *path, struct stat *st)
{
	if (lstat(path, st) < 0)
		return hvm_set_errno_error("%s: %s vanished after bind", what,
					   path);
	if (!S_ISSOCK(st->st_mode))
		return hvm_set_error(
			-EPERM,
			"%s: %s is no longer the socket just bound (replaced by another file or a link)",
			what, path);
	if (st->st_uid != geteuid() || (st->st_mode & 077))
		return hvm_set_error(
			-EPERM,
			"%s: the socket %s has owner %u and mode %04o; expected uid %u and 0600",
			what, path, (unsigned int)st->st_uid,
			(unsigned int)(st->st_mode & 07777),
			(unsigned int)geteuid());
	return 0;
}
