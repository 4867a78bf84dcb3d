// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Restoring a snapshot (docs/snapshot.md), in three steps the builder
 * calls around its usual assembly: open and check both files and apply
 * the snapshot's machine options to the VM's configuration (nothing of
 * KVM exists yet, so a refusal starts nothing); assemble the VM with its
 * RAM mapped from the memory file and no kernel loaded; then load the
 * arch's and every device's state into it. The restored VM then starts
 * like any other, through the same identity and sandbox steps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "core/arch.h"
#include "core/config.h"
#include "core/vm.h"
#include "snapshot/format.h"
#include "vmm/platform.h"
#include "vmm/snapshot.h"

/*
 * A file of the snapshot: a regular file, owned by whoever restores it or
 * by root, writable by nobody else (anyone who can write it chooses the
 * restored VM's registers and memory).
 */
static int open_checked(int dir, const char *dirname, const char *name,
			struct stat *st)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int r;

	if (fd < 0)
		return hvm_set_errno_error("snapshot %s/%s: cannot open it",
					   dirname, name);
	if (fstat(fd, st) < 0) {
		r = hvm_set_errno_error("snapshot %s/%s: fstat", dirname, name);
	} else if (!S_ISREG(st->st_mode)) {
		r = hvm_set_error(-EINVAL, "snapshot %s/%s: not a regular file",
				  dirname, name);
	} else if (st->st_uid != geteuid() && st->st_uid != 0) {
		r = hvm_set_error(
			-EPERM,
			"snapshot %s/%s: owned by uid %u, not by you (uid %u) or root",
			dirname, name, (unsigned int)st->st_uid,
			(unsigned int)geteuid());
	} else if (st->st_mode & 022) {
		r = hvm_set_error(
			-EPERM,
			"snapshot %s/%s: mode %04o lets others write it; expected 0600",
			dirname, name, (unsigned int)(st->st_mode & 07777));
	} else {
		return fd;
	}
	close(fd);
	return r;
}

static int read_state(int fd, const char *path, size_t size, uint8_t **out)
{
	uint8_t *buf;
	size_t got = 0;

	if (size > SNAP_MAX_FILE)
		return hvm_set_error(
			-EINVAL,
			"snapshot %s: %zu bytes, more than the %u a state file may be",
			path, size, SNAP_MAX_FILE);
	buf = malloc(size ? size : 1);
	if (!buf)
		return hvm_set_error(-ENOMEM, "out of memory");
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? hvm_set_errno_error("snapshot %s: read",
							   path)
				     : hvm_set_error(
					       -EINVAL,
					       "snapshot %s: shrank while read",
					       path);
		}
		got += (size_t)n;
	}
	*out = buf;
	return 0;
}

int snapshot_restore_open(struct hvm_config *cfg, struct snapshot_restore *rs)
{
	const char *dir = cfg->restore;
	const struct snap_section *mem;
	struct stat st;
	int d, fd, r;

	memset(rs, 0, sizeof(*rs));
	rs->mem_fd = -1;
	snprintf(rs->path, sizeof(rs->path), "%s/%s", dir, SNAP_STATE_FILE);
	d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return hvm_set_errno_error(
			"snapshot %s: cannot open the directory", dir);
	fd = open_checked(d, dir, SNAP_STATE_FILE, &st);
	if (fd < 0) {
		close(d);
		return fd;
	}
	r = read_state(fd, rs->path, (size_t)st.st_size, &rs->buf);
	close(fd);
	if (r == 0)
		r = snap_parse(rs->buf, (size_t)st.st_size, rs->path,
			       &rs->file);
	if (r < 0) {
		close(d);
		snapshot_restore_release(rs);
		return r;
	}
	rs->mem_fd = open_checked(d, dir, SNAP_MEMORY_FILE, &st);
	close(d);
	if (rs->mem_fd < 0) {
		r = rs->mem_fd;
		snapshot_restore_release(rs);
		return r;
	}
	mem = snap_find(&rs->file, SNAP_SEC_MEMORY, 0);
	memcpy(&rs->mem_size, mem->data, sizeof(rs->mem_size));
	if ((uint64_t)st.st_size != rs->mem_size) {
		r = hvm_set_error(
			-EINVAL,
			"snapshot %s/%s: %llu bytes, but the state file says the guest has %llu",
			dir, SNAP_MEMORY_FILE, (unsigned long long)st.st_size,
			(unsigned long long)rs->mem_size);
		snapshot_restore_release(rs);
		return r;
	}
	r = snapshot_config_apply(cfg, &rs->file, rs->path);
	if (r < 0)
		snapshot_restore_release(rs);
	return r;
}

int snapshot_restore_load(struct vm *vm, struct snapshot_restore *rs)
{
	int r = platform_check_snapshot(vm);

	if (r < 0)
		return hvm_set_error(
			r, "--restore: %s (leave out the options that add one)",
			hvm_error_message());
	r = arch_snapshot_check(vm, &rs->file, rs->path);
	if (r == 0)
		r = arch_snapshot_load(vm, &rs->file, rs->path);
	if (r == 0)
		r = platform_load(vm, &rs->file, rs->path);
	return r;
}

void snapshot_restore_release(struct snapshot_restore *rs)
{
	snap_file_release(&rs->file);
	free(rs->buf);
	rs->buf = NULL;
	if (rs->mem_fd >= 0)
		close(rs->mem_fd);
	rs->mem_fd = -1;
}
