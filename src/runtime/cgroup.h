/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linux.cgroupsPath: the VMM process (and so every thread of the VM) is
 * placed there before the VM exists, with the container's CPU and memory
 * limits written to it, so the engine's accounting (`podman stats`, the
 * kubelet) sees the VM's real cost.
 */
#ifndef HVM_RUNTIME_CGROUP_H
#define HVM_RUNTIME_CGROUP_H

#include <stddef.h>

#include "spec.h"

/*
 * Move the calling process into PATH: a cgroupfs path ("/a/b"), or with
 * systemd's form ("parent.slice:prefix:name") the scope directory systemd
 * would use (no D-Bus: the directory is made by hand). cgroup v2 and v1.
 */
int rt_cgroup_enter(const char *path, const struct oci_resources *res,
		    char *err, size_t errlen);

/* PATH in systemd form -> the cgroupfs path; copies other paths. */
int rt_cgroup_resolve(const char *path, char *out, size_t len);

#endif
