// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --user (docs/sandbox.md): the uid/gid a VM's threads become, chosen
 * before any thread of the VM exists. The switch itself is per thread,
 * in src/sandbox/identity.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "core/config.h"
#include "vmm/vm_user.h"

/* vm_user_preset(): --jail's choice, made in the host's /run. */
static struct vm_identity preset = { .lock_fd = -1 };

void vm_user_preset(const struct vm_identity *id)
{
	preset = *id;
}

/*
 * The directory of --user auto's uid locks: one for the host, whatever
 * runtime directory a VM's socket goes to, so that no two VMs share a uid;
 * root's own, so that nobody else can hold (or free) a VM's uid.
 */
#define USER_LOCKS "/run/hintvm-users"

static int open_user_locks(void)
{
	struct stat st;
	int fd;

	mkdir("/run", 0755); /* a bare system (an initramfs) may have none */
	if (mkdir(USER_LOCKS, 0700) < 0 && errno != EEXIST)
		return hvm_set_errno_error("--user auto: cannot create %s",
					   USER_LOCKS);
	fd = open(USER_LOCKS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hvm_set_errno_error("--user auto: cannot open %s",
					   USER_LOCKS);
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0077)) {
		close(fd);
		return hvm_set_error(
			-EPERM, "--user auto: %s must be root's, mode 0700",
			USER_LOCKS);
	}
	return fd;
}

/* --user: who the VM's threads become (sandbox/identity.h). */
int vm_user_choose(const struct hvm_config *cfg, struct vm_identity *id)
{
	int dir, r;

	/* Chosen already, before the jail was entered. */
	if (preset.set) {
		*id = preset;
		preset = (struct vm_identity){ .lock_fd = -1 };
		return 0;
	}
	*id = (struct vm_identity){ .lock_fd = -1 };
	switch (cfg->user_mode) {
	case HVM_USER_ID:
		/* Without CAP_SETUID only our own ids are ours to take. */
		if (geteuid() != 0 &&
		    (cfg->user_uid != geteuid() || cfg->user_gid != getegid()))
			return hvm_set_error(
				-EPERM,
				"--user %u:%u: only root can run a VM as another user",
				cfg->user_uid, cfg->user_gid);
		*id = (struct vm_identity){ .set = true,
					    .uid = cfg->user_uid,
					    .gid = cfg->user_gid,
					    .lock_fd = -1 };
		return 0;
	case HVM_USER_AUTO:
		/* Unprivileged already: nothing to give up. */
		if (geteuid() != 0)
			return 0;
		dir = open_user_locks();
		if (dir < 0)
			return dir;
		r = identity_take_free(dir, cfg->user_first, cfg->user_last,
				       id);
		close(dir);
		return r;
	default:
		return 0;
	}
}
