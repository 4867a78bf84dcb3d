// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * config.json -> the CONTAINER frame hintvm-oci-init reads (see
 * container_frame.h): every field oci-init uses, and nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "abi/agent_proto.h"
#include "container_frame.h"
#include "errbuf.h"

_Static_assert(OCI_MAX_RLIMITS == AGENT_MAX_RLIMITS, "one rlimit each");
_Static_assert((int)OCI_CAP_SETS == (int)AGENT_CAP_SETS &&
		       (int)OCI_CAP_BOUNDING == (int)AGENT_CAP_BOUNDING &&
		       (int)OCI_CAP_AMBIENT == (int)AGENT_CAP_AMBIENT,
	       "capability sets in one order");
_Static_assert(OCI_MAX_MOUNTS == AGENT_MAX_MOUNTS &&
		       OCI_MAX_PATHS == AGENT_MAX_PATHS &&
		       OCI_MAX_SYSCTLS == AGENT_MAX_SYSCTLS,
	       "config.json's bounds are the frame's");

/* The process: an EXEC request's fields. */
static void fill_process(const struct oci_process *p, const void *seccomp,
			 size_t seccomp_len, struct agent_exec_req *req)
{
	struct agent_limits *l = &req->limits;

	*req = (struct agent_exec_req){
		.argv = p->args,
		.envp = p->nenv ? p->env : NULL,
		.cwd = p->cwd,
		.uid = p->uid,
		.gid = p->gid,
		.has_uid = true,
		.has_gid = true,
		.flags = p->terminal ? AGENT_EXEC_TTY : 0,
	};
	/* consoleSize: a terminal's, both sides or neither (oci-init). */
	if (p->terminal && p->console_rows && p->console_cols) {
		req->rows = p->console_rows;
		req->cols = p->console_cols;
	}
	for (size_t i = 0; i < p->nrlimits; i++)
		l->rlimits[l->nrlimits++] = (struct agent_rlimit){
			.resource = (uint32_t)p->rlimits[i].resource,
			.soft = p->rlimits[i].soft,
			.hard = p->rlimits[i].hard,
		};
	l->has_caps = p->has_capabilities;
	for (int i = 0; i < AGENT_CAP_SETS; i++)
		l->caps[i] = p->caps[i];
	l->no_new_privs = p->no_new_privileges;
	l->seccomp = seccomp;
	l->seccomp_len = seccomp ? seccomp_len : 0;
	if (agent_limits_any(l))
		req->flags |= AGENT_EXEC_LIMITS;
}

int rt_container_frame(const struct oci_spec *spec, const void *seccomp,
		       size_t seccomp_len, uint8_t **frame, size_t *len,
		       char *err, size_t errlen)
{
	struct agent_container c = {
		.hostname = spec->hostname,
		.root_readonly = spec->root_readonly,
		.nmounts = spec->nmounts,
		.nsysctls = spec->nsysctls,
		.masked_paths = spec->masked_paths,
		.nmasked_paths = spec->nmasked_paths,
		.readonly_paths = spec->readonly_paths,
		.nreadonly_paths = spec->nreadonly_paths,
	};
	struct agent_container check;
	char msg[160];
	uint8_t *buf;
	int n, ret;

	*frame = NULL;
	*len = 0;
	fill_process(&spec->process, seccomp, seccomp_len, &c.process);
	c.mounts = calloc(spec->nmounts + 1, sizeof(*c.mounts));
	c.sysctls = calloc(spec->nsysctls + 1, sizeof(*c.sysctls));
	buf = malloc(AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD);
	if (!c.mounts || !c.sysctls || !buf) {
		ret = rt_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < spec->nmounts; i++) {
		const struct oci_mount *m = &spec->mounts[i];

		c.mounts[i] = (struct agent_mount){
			.destination = m->destination,
			.type = m->type,
			.source = m->source,
			.flags = (m->readonly ? AGENT_MOUNT_RO : 0) |
				 (m->bind ? AGENT_MOUNT_BIND : 0),
		};
	}
	for (size_t i = 0; i < spec->nsysctls; i++)
		c.sysctls[i] = (struct agent_sysctl){ spec->sysctls[i].key,
						      spec->sysctls[i].value };
	n = agent_container_encode(buf, AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD, &c);
	if (n < 0) {
		ret = rt_fail(
			err, errlen, n,
			"config.json's process and container do not fit the guest init's %u-byte frame (an argument, variable or path of 64 KiB or more, or too many)",
			AGENT_MAX_PAYLOAD);
		goto out;
	}
	/* The guest's own rules, here, where the error can be reported. */
	ret = agent_container_decode(buf, (size_t)n, &check, msg, sizeof(msg));
	if (ret) {
		rt_fail(err, errlen, ret, "config.json: %s", msg);
		goto out;
	}
	agent_container_free(&check);
	*frame = buf;
	*len = (size_t)n;
	buf = NULL;
out:
	free(buf);
	free(c.mounts);
	free(c.sysctls);
	return ret;
}
