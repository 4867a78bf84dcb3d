// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A pod container's /dev (EXEC's ROOT, docs/shim.md "Pods"): what runc
 * gives a container from containerd's default spec and hintvm-oci-init
 * gives a container VM — a tmpfs with the default device nodes and links,
 * a devpts instance of its own and a /dev/shm — so that "< /dev/zero" and
 * "> /dev/null" work in the container's root, which is only its image.
 * Called in the process's own mount namespace, before its chroot: none
 * of it is seen outside.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent.h"

#define DEV_FLAGS (MS_NOSUID | MS_NOEXEC)

int agent_pod_dev_setup(const char *root)
{
	static const struct {
		const char *name;
		unsigned int major, minor;
	} nodes[] = {
		{ "null", 1, 3 },   { "zero", 1, 5 },	 { "full", 1, 7 },
		{ "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
	};
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
		{ "pts/ptmx", "ptmx" },
	};
	char dev[AGENT_MAX_PATH + 16], path[AGENT_MAX_PATH + 32];

	if (snprintf(dev, sizeof(dev), "%s/dev", root) >= (int)sizeof(dev))
		return -ENAMETOOLONG;
	/* An image without /dev gets one, as runc makes it. */
	if (mkdir(dev, 0755) && errno != EEXIST)
		return -errno;
	if (mount("tmpfs", dev, "tmpfs", DEV_FLAGS, "mode=755,size=65536k"))
		return -errno;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dev, nodes[i].name);
		if (mknod(path, S_IFCHR | 0666,
			  makedev(nodes[i].major, nodes[i].minor)) ||
		    chmod(path, 0666)) /* whatever the umask took */
			return -errno;
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dev, links[i][1]);
		if (symlink(links[i][0], path))
			return -errno;
	}
	snprintf(path, sizeof(path), "%s/pts", dev);
	if (mkdir(path, 0755) || mount("devpts", path, "devpts", DEV_FLAGS,
				       "newinstance,ptmxmode=0666,mode=0620"))
		return -errno;
	snprintf(path, sizeof(path), "%s/shm", dev);
	if (mkdir(path, 01777) ||
	    mount("shm", path, "tmpfs", DEV_FLAGS | MS_NODEV,
		  "mode=1777,size=65536k"))
		return -errno;
	return 0;
}
