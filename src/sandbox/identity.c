// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "sandbox/identity.h"
#include "sandbox/sandbox.h"

/* Like the sandbox request: this thread's, handed to the threads it makes. */
static _Thread_local const struct vm_identity *requested;

void identity_set_requested(const struct vm_identity *id)
{
	requested = id && id->set ? id : NULL;
}

const struct vm_identity *identity_requested(void)
{
	return requested;
}

int identity_take_free(int dir, uint32_t first, uint32_t last,
		       struct vm_identity *id)
{
	uint64_t span = (uint64_t)last - first + 1;
	/*
	 * Start at a place that depends on our pid, so that VMs started
	 * together rarely probe the same files. flock: the lock goes with
	 * the last fd, so a crash frees it too.
	 */
	uint64_t start = (uint64_t)getpid() % span;

	*id = (struct vm_identity){ .lock_fd = -1 };
	for (uint64_t i = 0; i < span; i++) {
		uint32_t uid = first + (uint32_t)((start + i) % span);
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "%u", uid);
		fd = openat(dir, name,
			    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return hvm_set_errno_error(
				"--user auto: cannot open the lock of uid %u",
				uid);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*id = (struct vm_identity){ .set = true,
						    .uid = uid,
						    .gid = uid,
						    .lock_fd = fd };
			return 0;
		}
		close(fd);
	}
	return hvm_set_error(-EBUSY,
			     "--user auto: every uid of --user-range %u-%u is "
			     "taken by a running VM",
			     first, last);
}

void identity_release(struct vm_identity *id)
{
	if (id->lock_fd >= 0)
		close(id->lock_fd);
	id->lock_fd = -1;
}

static void keep_dumpable_for_sanitizers(void)
{
#if SANDBOX_SANITIZED
	/*
	 * The change of uid made the process non-dumpable, and
	 * LeakSanitizer's exit check ptraces our threads: sanitizer builds
	 * only (CI's), where the check matters more than the dump.
	 */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
}

int identity_process_enter(const struct vm_identity *id)
{
	if (setgroups(0, NULL) < 0 ||
	    setresgid(id->gid, id->gid, id->gid) < 0 ||
	    setresuid(id->uid, id->uid, id->uid) < 0)
		return hvm_set_errno_error("--user: cannot become %u:%u",
					   id->uid, id->gid);
	keep_dumpable_for_sanitizers();
	return 0;
}

int identity_userns_enter(void)
{
	/* Groups went before the namespace: it denies setgroups. */
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return hvm_set_errno_error(
			"--jail: cannot become root of the user namespace");
	keep_dumpable_for_sanitizers();
	return 0;
}

int identity_thread_enter(void)
{
	const struct vm_identity *id = requested;

	if (!id)
		return 0;
	/*
	 * Raw system calls: the kernel's credentials are per thread, and
	 * glibc's wrappers would make every thread of the process (an
	 * embedder's too, and threads whose filters forbid it) follow.
	 * Groups first, while we may still change them (in --jail's user
	 * namespace they are gone already, and setgroups is denied).
	 */
	if ((getuid() == 0 && !id->userns &&
	     syscall(SYS_setgroups, 0, NULL) < 0) ||
	    syscall(SYS_setresgid, id->gid, id->gid, id->gid) < 0 ||
	    syscall(SYS_setresuid, id->uid, id->uid, id->uid) < 0)
		return hvm_set_errno_error("--user: cannot become %u:%u",
					   id->uid, id->gid);
	keep_dumpable_for_sanitizers();
	return 0;
}
