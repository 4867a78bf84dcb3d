/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * virtio-9p (device ID 9): a host directory shared with the guest over
 * 9P2000.L (--share HOSTDIR,tag=TAG[,ro][,ids=mapped]; the guest mounts
 * it with `mount -t 9p -o trans=virtio,version=9p2000.L TAG /mnt`).
 *
 * The event loop only pops requests and copies them out of the ring;
 * worker threads serve them (p9_server.c), so a slow file system blocks
 * neither a vCPU nor the other virtio devices nor, up to the number of
 * workers, other requests of the same share.
 */
#ifndef HVM_DEVICES_VIRTIO_VIRTIO_9P_H
#define HVM_DEVICES_VIRTIO_VIRTIO_9P_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "devices/virtio/p9_fs.h"
#include "devices/virtio/virtio_device.h"
#include "devices/virtio/virtio_host.h"

#define VIRTIO_9P_WORKERS 4
#define VIRTIO_9P_MAX_FIDS 4096 /* per share; each may hold an open file */

/*
 * The system calls a share's worker threads make (for the seccomp filter
 * of the "hvm-9p" thread kind): the confined file operations of p9_fs.c,
 * the I/O of p9_server.c, and what completing a request takes (futex,
 * eventfd write, the interrupt ioctl, malloc).
 */
extern const char *const virtio_9p_worker_syscalls[];

/* Who serves a share's requests (--share ...,server=; docs/shares.md). */
enum virtio_9p_server {
	VIRTIO_9P_SERVER_THREAD, /* the workers themselves, in this process */
	/*
	 * A file-server process forked now (p9_file_server.h): root's view
	 * of the share for VMM threads that will not be root. Needs
	 * CAP_SYS_ADMIN.
	 */
	VIRTIO_9P_SERVER_PROCESS,
};

struct virtio_9p_share {
	const char *dir;
	const char *tag;
	bool readonly;
	enum p9_id_mode ids;
	enum virtio_9p_server server;
};

struct virtio_device *virtio_9p_create(const struct virtio_host *host,
				       const struct virtio_9p_share *share,
				       unsigned int index);

/* The msize the share's server negotiated (its last reply's, for a process). */
uint32_t virtio_9p_msize(struct virtio_device *vdev);

/* The file-server process's pid (server=process), else 0. */
pid_t virtio_9p_server_pid(struct virtio_device *vdev);

/*
 * A share in a snapshot (docs/snapshot.md, "Shares"): only one the guest
 * has sent no request since the device's last reset, so no fid, open
 * file or walked path exists that a restore would lose. What is saved is
 * the mount tag, which the guest read at probe and mounts by; the
 * directory is the restoring VM's own (a template's clone names its
 * container's, docs/template.md).
 */
struct virtio_9p_state {
	uint16_t tag_len;
	uint8_t reserved[6]; /* zero */
	char tag[64]; /* P9_MOUNT_TAG_MAX bytes, not NUL-terminated */
};
_Static_assert(sizeof(struct virtio_9p_state) == 72,
	       "docs/snapshot.md's layout");
/*
 * Locked, frozen. -EBUSY naming the device when the guest has used the
 * share (sent a request since the device's last reset).
 */
int virtio_9p_save(struct virtio_device *vdev, struct virtio_9p_state *s);
/* Locked. -EINVAL naming the device for another tag or a bad length. */
int virtio_9p_load(struct virtio_device *vdev, const struct virtio_9p_state *s);

/* Tests: a hook run by a worker before it serves a request of TYPE. */
void virtio_9p_set_before_op(struct virtio_device *vdev,
			     void (*fn)(void *ctx, uint8_t type), void *ctx);

#endif
