/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Snapshots of a VM (docs/snapshot.md): taking one into two open files
 * (snapshot_save.c) and rebuilding a VM from one (snapshot_restore.c,
 * called by the builder when the configuration has --restore).
 */
#ifndef HVM_VMM_SNAPSHOT_H
#define HVM_VMM_SNAPSHOT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot/format.h"

struct vm;
struct hvm_config;

/*
 * Pause VM (all vCPUs parked, their last exit completed), write its state
 * to STATE_FD and its memory to MEM_FD (both truncated first), then let it
 * run again unless STAY_PAUSED or it was paused already. -errno with the
 * reason; a device that cannot be saved is named.
 */
int snapshot_save_fds(struct vm *vm, int state_fd, int mem_fd,
		      bool stay_paused);

/*
 * The vm_resume() hook: a VM the snapshot left paused also kept its
 * devices frozen (the disk stays as saved); serve them again.
 */
void snapshot_resuming(struct vm *vm);

/* Create (or truncate) DIR/state and DIR/memory, mode 0600. */
int snapshot_open_dir(const char *dir, int *state_fd, int *mem_fd);

/*
 * The config section of F (parsed from PATH): its machine options set on
 * CFG through the one option table (each value checked as a command
 * line's is), only those a snapshot records (cpus=, mem=, irqchip=), and
 * checked against F's memory section and vCPU count. -EINVAL with a
 * message naming PATH. snapshot_config.c; fuzzed with the parser.
 */
int snapshot_config_apply(struct hvm_config *cfg, const struct snap_file *f,
			  const char *path);

struct snapshot_restore {
	char path[PATH_MAX + 16]; /* DIR/state, for messages */
	uint8_t *buf; /* the state file; sections point into it */
	struct snap_file file;
	int mem_fd;
	uint64_t mem_size;
};

/*
 * Open CFG->restore's files, check owner, mode, sizes and every field of
 * the state file, and set CFG's machine options from it. -errno with a
 * message naming the file; nothing of KVM exists yet.
 */
int snapshot_restore_open(struct hvm_config *cfg, struct snapshot_restore *rs);
/* After assembly (vm->restore_mem_fd set): the arch's and devices' state. */
int snapshot_restore_load(struct vm *vm, struct snapshot_restore *rs);
void snapshot_restore_release(struct snapshot_restore *rs);

#endif
