// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness: the fuzzer's bytes are a bundle's config.json (or an
 * exec's process.json), which whoever builds the bundle writes. Whatever
 * the bytes, the parser must either refuse them with a message or give a
 * spec whose vectors are NULL-terminated and within the documented bounds;
 * then the resources mapping must not fail on anything the parser passed
 * except with a message, and every string is freed (ASan). A config.json
 * the parser passed becomes the CONTAINER frame console mode's guest init
 * reads (container_frame.c), which is refused with a message or decodes,
 * with the guest's codec, to the same process and container: the guest
 * parses no JSON, so this is the whole path from the bundle to oci-init.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "abi/agent_proto.h"
#include "runtime/container_frame.h"
#include "runtime/guest_config.h"
#include "runtime/seccomp.h"
#include "runtime/spec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_vector(char **vec, size_t n, size_t max)
{
	check(n <= max);
	for (size_t i = 0; i < n; i++)
		check(vec[i] && strlen(vec[i]) <= OCI_MAX_STRING);
	check(!vec || !vec[n]);
}

static bool same_str(const char *a, const char *b)
{
	return !a == !b && (!a || !strcmp(a, b));
}

/* S as the guest init would get it. */
static void check_frame(const struct oci_spec *s)
{
	static const uint8_t bpf[8] = { 6, 0, 0, 0, 0, 0, 0xff, 0x7f };
	const struct oci_process *p = &s->process;
	struct agent_container c;
	char err[256], msg[160];
	uint8_t *frame;
	size_t len;

	err[0] = '\0';
	if (rt_container_frame(s, s->seccomp.present ? bpf : NULL, sizeof(bpf),
			       &frame, &len, err, sizeof(err))) {
		check(err[0] && !frame);
		return;
	}
	check(agent_container_decode(frame, len, &c, msg, sizeof(msg)) == 0);
	for (size_t i = 0; i < p->nargs; i++)
		check(same_str(c.process.argv[i], p->args[i]));
	check(!c.process.argv[p->nargs]);
	for (size_t i = 0; i < p->nenv; i++)
		check(same_str(c.process.envp[i], p->env[i]));
	check(!p->nenv || !c.process.envp[p->nenv]);
	check(same_str(c.process.cwd, p->cwd) && c.process.uid == p->uid &&
	      c.process.gid == p->gid);
	check(!!(c.process.flags & AGENT_EXEC_TTY) == p->terminal);
	check(c.process.limits.nrlimits == p->nrlimits &&
	      c.process.limits.has_caps == p->has_capabilities &&
	      c.process.limits.no_new_privs == p->no_new_privileges &&
	      !c.process.limits.seccomp == !s->seccomp.present);
	check(same_str(c.hostname, s->hostname) &&
	      c.root_readonly == s->root_readonly);
	check(c.nmounts == s->nmounts && c.nsysctls == s->nsysctls &&
	      c.nmasked_paths == s->nmasked_paths &&
	      c.nreadonly_paths == s->nreadonly_paths);
	for (size_t i = 0; i < s->nmounts; i++)
		check(same_str(c.mounts[i].destination,
			       s->mounts[i].destination) &&
		      same_str(c.mounts[i].type, s->mounts[i].type) &&
		      same_str(c.mounts[i].source, s->mounts[i].source) &&
		      !!(c.mounts[i].flags & AGENT_MOUNT_RO) ==
			      s->mounts[i].readonly &&
		      !!(c.mounts[i].flags & AGENT_MOUNT_BIND) ==
			      s->mounts[i].bind);
	for (size_t i = 0; i < s->nsysctls; i++)
		check(same_str(c.sysctls[i].key, s->sysctls[i].key) &&
		      same_str(c.sysctls[i].value, s->sysctls[i].value));
	for (size_t i = 0; i < s->nmasked_paths; i++)
		check(same_str(c.masked_paths[i], s->masked_paths[i]));
	for (size_t i = 0; i < s->nreadonly_paths; i++)
		check(same_str(c.readonly_paths[i], s->readonly_paths[i]));
	agent_container_free(&c);
	free(frame);
}

static void check_spec(const struct oci_spec *s)
{
	struct rt_guest_config g;
	struct rt_vm_resources res;
	char err[256];

	check_vector(s->process.args, s->process.nargs, OCI_MAX_ARGS);
	check_vector(s->process.env, s->process.nenv, OCI_MAX_ENV);
	check(s->nmounts <= OCI_MAX_MOUNTS);
	for (size_t i = 0; i < s->nmounts; i++)
		check(s->mounts[i].destination &&
		      s->mounts[i].destination[0] == '/');
	check(s->nannotations <= OCI_MAX_ANNOTATIONS);
	check(s->nwarnings <= OCI_MAX_WARNINGS);
	for (size_t i = 0; i < s->nwarnings; i++)
		check(s->warnings[i] && s->warnings[i][0]);
	if (s->process.cwd)
		check(s->process.cwd[0] == '/');
	/* The limits: bounded, each value one the guest can apply. */
	check(s->process.nrlimits <= OCI_MAX_RLIMITS);
	for (size_t i = 0; i < s->process.nrlimits; i++)
		check(s->process.rlimits[i].resource >= 0 &&
		      s->process.rlimits[i].resource < OCI_MAX_RLIMITS &&
		      s->process.rlimits[i].soft <= s->process.rlimits[i].hard);
	for (int i = 0; i < OCI_CAP_SETS; i++)
		check(!(s->process.caps[i] >> 41));
	check_vector(s->masked_paths, s->nmasked_paths, OCI_MAX_PATHS);
	check_vector(s->readonly_paths, s->nreadonly_paths, OCI_MAX_PATHS);
	for (size_t i = 0; i < s->nmasked_paths; i++)
		check(s->masked_paths[i][0] == '/' &&
		      !strstr(s->masked_paths[i], "/../"));
	check(s->nsysctls <= OCI_MAX_SYSCTLS);
	for (size_t i = 0; i < s->nsysctls; i++)
		check(s->sysctls[i].key && s->sysctls[i].key[0] != '/' &&
		      !strstr(s->sysctls[i].key, "..") && s->sysctls[i].value);
	check(s->seccomp.nrules <= OCI_MAX_SECCOMP_RULES);
	check(s->seccomp.narchs <= OCI_MAX_SECCOMP_ARCHS);
	for (size_t i = 0; i < s->seccomp.nrules; i++) {
		const struct oci_seccomp_rule *r = &s->seccomp.rules[i];

		check(r->nnames >= 1);
		check_vector(r->names, r->nnames, OCI_MAX_SECCOMP_NAMES);
		check(r->nargs <= OCI_MAX_SECCOMP_ARGS);
		for (size_t k = 0; k < r->nargs; k++)
			check(r->args[k].index <= 5 &&
			      r->args[k].op <= OCI_SCMP_CMP_MASKED_EQ);
		check(r->errno_ret <= 4095);
	}

	/*
	 * A profile the parser passed compiles, or fails with a message;
	 * the program is whole instructions within the kernel's limit.
	 * (Small ones only: libseccomp's cost grows with the names.)
	 */
	size_t names = 0;

	for (size_t i = 0; i < s->seccomp.nrules; i++)
		names += s->seccomp.rules[i].nnames;
	if (s->seccomp.present && names <= 64) {
		char unknown[128];
		size_t len, nunknown;
		void *prog;

		err[0] = '\0';
		if (rt_seccomp_compile(&s->seccomp, &prog, &len, unknown,
				       sizeof(unknown), &nunknown, err,
				       sizeof(err)))
			check(err[0] && !prog);
		else
			check(prog && len && len % 8 == 0 &&
			      len <= RT_SECCOMP_MAX_BYTES);
		free(prog);
	}

	rt_guest_config_defaults(&g);
	err[0] = '\0';
	if (rt_map_resources(&g, &s->resources, 2, &res, err, sizeof(err)))
		check(err[0]);
	else
		check(res.cpus >= 1 && res.cpus <= 2 &&
		      res.mem_mib >= RT_MIN_GUEST_MIB);
	rt_guest_config_free(&g);
	check_frame(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_spec spec;
	char err[256];

	/* The first byte picks config.json or process.json. */
	if (!size)
		return 0;
	err[0] = '\0';
	if ((data[0] & 1 ? oci_process_parse : oci_spec_parse)(
		    (const char *)data + 1, size - 1, &spec, err, sizeof(err)))
		check(err[0] && memchr(err, '\0', sizeof(err)));
	else
		check_spec(&spec);
	oci_spec_free(&spec);
	return 0;
}
