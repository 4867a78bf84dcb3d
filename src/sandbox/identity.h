/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who a VM's threads are once it is set up (--user, docs/sandbox.md):
 * started as root, every thread of the VM takes an unprivileged uid/gid
 * before any guest code runs, so that a compromised thread is neither
 * root nor able to signal or ptrace another VM (each has its own uid).
 *
 * Credentials are per thread in the kernel; glibc's setresuid() makes
 * them per process by signalling every thread, which a thread already
 * under its seccomp filter could not obey. So each VM thread switches
 * itself, with the raw system calls, as the first act of
 * sandbox_thread_enter(); the thread that built the VM switches last,
 * just before the vCPUs start. Everything the VM needs (/dev/kvm, the VM
 * and vCPU fds, disks, taps, listening sockets) is opened before.
 */
#ifndef HVM_SANDBOX_IDENTITY_H
#define HVM_SANDBOX_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct vm_identity {
	bool set; /* false: the threads stay who started the VM */
	uid_t uid;
	gid_t gid;
	int lock_fd; /* --user auto: the uid's lock, held while the VM lives */
	/*
	 * --jail's user namespace (src/vmm/jail.c): uid and gid are 0 there,
	 * mapped to the VM's on the host, the process is them already, and
	 * setgroups is denied (the groups were dropped before).
	 */
	bool userns;
};

/*
 * --user auto: a uid of FIRST..LAST (gid the same) that no running VM
 * holds, by a lock file of that name in directory DIR (root's own), kept
 * open in ID for the VM's life. 0, or -errno with the reason recorded
 * (hvm_error_message()).
 */
int identity_take_free(int dir, uint32_t first, uint32_t last,
		       struct vm_identity *id);
void identity_release(struct vm_identity *id);

/*
 * The identity threads created from this thread take (per thread, as the
 * sandbox request: vm_thread_create() hands it on). NULL: none.
 */
void identity_set_requested(const struct vm_identity *id);
const struct vm_identity *identity_requested(void);

/*
 * On the calling thread only: setgroups to none, then gid, then uid, when
 * identity_requested() has one. A thread that cannot become it must not
 * run: 0 or -errno (the caller aborts or fails the start).
 */
int identity_thread_enter(void);

/*
 * Just after unshare(CLONE_NEWUSER) and the parent's one-line uid_map and
 * gid_map ("0 UID 1"): the process (one thread) becomes the namespace's
 * root, which is the VM's uid and gid on the host. 0 or -errno.
 */
int identity_userns_enter(void);

/*
 * The whole process becomes ID (glibc's wrappers): for a process with one
 * thread only, such as --jail's supervisor. 0 or -errno.
 */
int identity_process_enter(const struct vm_identity *id);

#endif
