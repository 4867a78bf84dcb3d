/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pods (issue 31, docs/shim.md "Pods"): the CRI's sandbox container is a
 * VM, and each app container of the pod runs inside that VM through its
 * guest agent, in the one shim that serves the sandbox.
 *
 * pod_spec.c reads what containerd's CRI plugin writes into a bundle's
 * config.json (its annotations) and rewrites the sandbox's spec; pod.c
 * serves the app containers' Task requests in the sandbox's shim.
 */
#ifndef HVM_SHIM_POD_H
#define HVM_SHIM_POD_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/runtime.h"
#include "shim/ttrpc_server.h"

/* containerd 1.6's CRI annotations (pkg/cri/annotations). */
#define POD_ANN_TYPE "io.kubernetes.cri.container-type"
#define POD_ANN_SANDBOX_ID "io.kubernetes.cri.sandbox-id"

/* Where the host puts a pod's share: POD_SHARE_ROOT/<namespace>/<sandbox>;
 * each app container's rootfs is mounted on <share>/<id>/rootfs. */
#define POD_SHARE_ROOT "/run/hintvm-shim/pods"
/* ... and where the sandbox VM sees it. */
#define POD_GUEST_DIR "/hintvm-pod"

enum pod_role {
	POD_NONE, /* not the CRI's: a task of its own VM, as ever */
	POD_SANDBOX, /* the pod's sandbox: the VM */
	POD_CONTAINER, /* an app container, in its sandbox's VM */
};

struct pod_info {
	enum pod_role role;
	/* POD_CONTAINER: linux.resources.memory.limit in bytes, the
	 * container's cgroup's memory.max in the guest; 0: none. */
	unsigned long long memory_limit;
	/* POD_CONTAINER: a PID namespace of its own (linux.namespaces has
	 * "pid" without a path: the CRI's NamespaceMode CONTAINER); with a
	 * path (POD) or none (NODE) it shares the VM's, which is the pod's. */
	bool own_pidns;
	char sandbox_id[RT_MAX_ID +
			1]; /* POD_CONTAINER (and the sandbox's own) */
};

/*
 * The role config.json (JSON, LEN bytes) gives its container, from the
 * CRI's annotations. 0, or -EINVAL with the reason in ERR: not JSON, a
 * container-type other than "sandbox" or "container", a container
 * without a valid sandbox id, a memory limit that is not an integer
 * (one below 1, as runc's -1, is no limit).
 */
int pod_info_parse(const char *json, size_t len, struct pod_info *out,
		   char *err, size_t errlen);
/* The same for BUNDLE/config.json; a missing file is POD_NONE. */
int pod_info_read(const char *bundle, struct pod_info *out, char *err,
		  size_t errlen);

/*
 * The sandbox's config.json, in place: a bind mount of SHARE (the host
 * directory) on POD_GUEST_DIR added, so that the VM has the pod's one
 * share. 0 or -errno with the reason in ERR.
 */
int pod_spec_add_share(const char *bundle, const char *share, char *err,
		       size_t errlen);
/*
 * BUNDLE/config.json's "process" written alone to OUT (what the runtime's
 * exec --process reads). 0 or -errno with the reason in ERR.
 */
int pod_spec_write_process(const char *bundle, const char *out, char *err,
			   size_t errlen);

/* What an Update (CRI UpdateContainerResources) asks of a container. */
struct pod_resources {
	unsigned long long memory_limit; /* bytes; 0: unchanged */
	bool set_cpu;
	unsigned long long cpu_quota; /* us per period; 0: no limit */
	unsigned long long cpu_period; /* us */
};
/* The type URL containerd 1.6 gives Update's resources (typeurl). */
#define POD_RESOURCES_TYPE \
	"types.containerd.io/opencontainers/runtime-spec/1/LinuxResources"
/*
 * The runtime spec's LinuxResources (JSON, LEN bytes) as Update's: memory
 * limit, cpu quota and period (100000 us when only a quota is given; a
 * quota below 1 is no limit). -EINVAL with the reason in ERR: not a JSON
 * object, a value that is not an integer, a period out of 1000..1000000,
 * nothing this runtime applies.
 */
int pod_resources_parse(const char *json, size_t len, struct pod_resources *out,
			char *err, size_t errlen);

struct shim;
/* The Task service with the pod's app containers served in it: requests
 * naming one of them are this file's, every other goes to task.c's. */
struct ttrpc_service shim_pod_service(struct shim *s);

#endif
