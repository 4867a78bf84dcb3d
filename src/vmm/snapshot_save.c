// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Taking a snapshot (docs/snapshot.md): every vCPU parked outside KVM_RUN
 * with its last exit completed (vcpu.c, vcpu_settle), then the state file
 * (config, memory layout, the arch's state, every platform device's) and
 * the guest's non-zero pages written to two files the caller opened. The
 * VM then runs on, or stays paused when asked. The control socket's
 * `snapshot` reaches this through vm_hooks; hvm_vm_snapshot() opens the
 * files itself.
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
#include "core/vm.h"
#include "devices/virtio/virtio_vm.h"
#include "snapshot/format.h"
#include "vmm/platform.h"
#include "vmm/snapshot.h"

#define PAGE 4096u

static bool page_is_zero(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)p;

	for (unsigned int i = 0; i < PAGE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

static int write_all(int fd, const uint8_t *buf, size_t len, off_t off,
		     const char *what)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return hvm_set_errno_error(
				"cannot write the snapshot's %s", what);
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/*
 * Guest RAM at its offset in the mapping, non-zero pages only: runs of
 * them in one write each, zero pages left as holes (ftruncate makes the
 * file its full length), so the file is as large as what the guest used.
 */
static int save_memory(struct vm *vm, int fd, uint64_t *written)
{
	const uint8_t *mem = vm->mem.mapping;
	uint64_t size = vm->mem.mapping_size;
	int r;

	*written = 0;
	if (ftruncate(fd, 0) < 0)
		return hvm_set_errno_error("cannot truncate the memory file");
	for (uint64_t at = 0; at < size;) {
		uint64_t end = at;

		while (end < size && !page_is_zero(mem + end))
			end += PAGE;
		if (end > at) {
			r = write_all(fd, mem + at, end - at, (off_t)at,
				      "memory file");
			if (r < 0)
				return r;
			*written += (end - at) / PAGE;
		}
		at = end + PAGE;
	}
	if (ftruncate(fd, (off_t)size) < 0)
		return hvm_set_errno_error("cannot size the memory file");
	return 0;
}

/* The machine options a restore rebuilds the VM with (docs/snapshot.md). */
static int config_text(struct vm *vm, char *buf, size_t len)
{
	int n = snprintf(buf, len, "cpus=%u\nmem=%lluK\nirqchip=%s\n",
			 vm->nr_vcpus, (unsigned long long)(vm->cfg->mem >> 10),
			 arch_irqchip_name(vm));

	return n > 0 && (size_t)n < len ? n : -ENOSPC;
}

/* Writing onto the file our own memory is mapped from would SIGBUS us. */
static int check_not_own_memory(struct vm *vm, int mem_fd)
{
	struct stat a, b;

	if (vm->restore_mem_fd < 0 || fstat(vm->restore_mem_fd, &a) < 0 ||
	    fstat(mem_fd, &b) < 0)
		return 0;
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return hvm_set_error(
			-EINVAL,
			"cannot snapshot into the snapshot this VM was restored from: its memory is mapped from that file");
	return 0;
}

static int save_paused(struct vm *vm, int state_fd, int mem_fd)
{
	struct snap_identity id;
	struct snap_writer w;
	struct snap_memory mem = { .mapping_size = vm->mem.mapping_size };
	char config[256];
	int n, r;

	r = arch_snapshot_identity(vm, &id);
	if (r < 0)
		return r;
	n = config_text(vm, config, sizeof(config));
	if (n < 0)
		return hvm_set_error(n,
				     "the VM's options do not fit a snapshot");
	r = save_memory(vm, mem_fd, &mem.pages_written);
	if (r < 0)
		return r;
	r = snap_writer_init(&w, &id);
	if (r < 0)
		return r;
	snap_writer_add(&w, SNAP_SEC_CONFIG, 0, config, (size_t)n);
	snap_writer_add(&w, SNAP_SEC_MEMORY, 0, &mem, sizeof(mem));
	r = arch_snapshot_save(vm, &w);
	if (r == 0)
		r = platform_save(vm, &w);
	if (r == 0)
		r = snap_writer_finish(&w);
	if (r == 0 && ftruncate(state_fd, 0) < 0)
		r = hvm_set_errno_error("cannot truncate the state file");
	if (r == 0)
		r = write_all(state_fd, w.buf, w.len, 0, "state file");
	/* Both on disk before anyone is told the snapshot exists. */
	if (r == 0 && (fdatasync(mem_fd) < 0 || fdatasync(state_fd) < 0))
		r = hvm_set_errno_error("cannot sync the snapshot's files");
	snap_writer_release(&w);
	return r;
}

int snapshot_save_fds(struct vm *vm, int state_fd, int mem_fd, bool stay_paused)
{
	bool was_paused;
	int r;

	if (!vm->started || atomic_load(&vm->stopping))
		return hvm_set_error(-EINVAL,
				     "cannot snapshot: the VM is not running");
	r = platform_check_snapshot(vm);
	if (r == 0)
		r = check_not_own_memory(vm, mem_fd);
	if (r < 0)
		return r;
	/* One at a time, and no resume until it is written. */
	if (atomic_exchange(&vm->snapshotting, true))
		return hvm_set_error(
			-EBUSY,
			"cannot snapshot: another snapshot is being written");
	was_paused = atomic_load(&vm->paused);
	r = vm_pause(vm);
	if (r < 0) {
		atomic_store(&vm->snapshotting, false);
		return r;
	}
	/* vCPUs parked: now the devices, so no request is half done. */
	if (atomic_load(&vm->stopping))
		r = hvm_set_error(-EINVAL,
				  "cannot snapshot: the VM stopped meanwhile");
	else
		r = virtio_vm_freeze(vm);
	/* A VM that stays paused keeps its devices frozen as well: a chain
	 * the guest queued before the pause would otherwise be served now,
	 * writing the disk after the snapshot recorded it (and a restore on
	 * that same image would rightly be refused). vm_resume() thaws them
	 * through snapshot_resuming(). */
	if (r == 0) {
		r = save_paused(vm, state_fd, mem_fd);
		if (was_paused || stay_paused)
			atomic_store(&vm->devices_frozen, true);
		else
			virtio_vm_thaw(vm);
	}
	atomic_store(&vm->snapshotting, false);
	if (!was_paused && !stay_paused)
		vm_resume(vm);
	if (r == 0)
		event_post(&vm->events, VM_EVENT_STATE, -1, 0, "snapshotted",
			   NULL);
	return r;
}

void snapshot_resuming(struct vm *vm)
{
	if (atomic_exchange(&vm->devices_frozen, false))
		virtio_vm_thaw(vm);
}

static int create_file(int dir, const char *dirname, const char *name)
{
	int fd = openat(dir, name,
			O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			0600);

	if (fd < 0)
		return hvm_set_errno_error("cannot create %s/%s", dirname,
					   name);
	/* 0600 even if it existed with another mode: guest memory. */
	if (fchmod(fd, 0600) < 0) {
		int r = hvm_set_errno_error("cannot chmod %s/%s", dirname,
					    name);

		close(fd);
		return r;
	}
	return fd;
}

int snapshot_open_dir(const char *dir, int *state_fd, int *mem_fd)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (d < 0)
		return hvm_set_errno_error("snapshot directory %s", dir);
	*state_fd = create_file(d, dir, SNAP_STATE_FILE);
	*mem_fd = *state_fd < 0 ? -1 : create_file(d, dir, SNAP_MEMORY_FILE);
	r = *state_fd < 0 ? *state_fd : *mem_fd < 0 ? *mem_fd : 0;
	if (r < 0 && *state_fd >= 0)
		close(*state_fd);
	close(d);
	return r;
}
