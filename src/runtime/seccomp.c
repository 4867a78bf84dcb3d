// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * linux.seccomp -> BPF with libseccomp. The rules follow runc's reading of
 * the profile: an entry whose action is the default action adds nothing;
 * an unknown syscall name is skipped; the conditions of one entry are ANDed
 * in one rule unless two test the same argument, in which case each
 * becomes a rule of its own (libseccomp cannot AND two on one argument).
 */
#include <errno.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errbuf.h"
#include "seccomp.h"

static uint32_t scmp_action(enum oci_seccomp_action a, uint32_t errno_ret)
{
	switch (a) {
	case OCI_SCMP_KILL_THREAD:
		return SCMP_ACT_KILL_THREAD;
	case OCI_SCMP_KILL_PROCESS:
		return SCMP_ACT_KILL_PROCESS;
	case OCI_SCMP_TRAP:
		return SCMP_ACT_TRAP;
	case OCI_SCMP_ERRNO:
		return SCMP_ACT_ERRNO(errno_ret);
	case OCI_SCMP_TRACE:
		return SCMP_ACT_TRACE(errno_ret);
	case OCI_SCMP_LOG:
		return SCMP_ACT_LOG;
	case OCI_SCMP_ALLOW:
	default:
		return SCMP_ACT_ALLOW;
	}
}

static const enum scmp_compare scmp_ops[] = {
	[OCI_SCMP_CMP_NE] = SCMP_CMP_NE,
	[OCI_SCMP_CMP_LT] = SCMP_CMP_LT,
	[OCI_SCMP_CMP_LE] = SCMP_CMP_LE,
	[OCI_SCMP_CMP_EQ] = SCMP_CMP_EQ,
	[OCI_SCMP_CMP_GE] = SCMP_CMP_GE,
	[OCI_SCMP_CMP_GT] = SCMP_CMP_GT,
	[OCI_SCMP_CMP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

static void note_unknown(const char *name, char *unknown, size_t unknown_len,
			 size_t *nunknown)
{
	size_t used = strnlen(unknown, unknown_len);

	if (used + 1 < unknown_len)
		snprintf(unknown + used, unknown_len - used, "%s%s",
			 *nunknown ? ", " : "", name);
	(*nunknown)++;
}

static int add_rule(scmp_filter_ctx ctx, const struct oci_seccomp_rule *r,
		    uint32_t action, int nr)
{
	struct scmp_arg_cmp conds[OCI_MAX_SECCOMP_ARGS];
	unsigned int per_index[6] = { 0 };
	bool separate = false;
	int ret;

	for (size_t i = 0; i < r->nargs; i++) {
		conds[i] = (struct scmp_arg_cmp){
			.arg = r->args[i].index,
			.op = scmp_ops[r->args[i].op],
			.datum_a = r->args[i].value,
			.datum_b = r->args[i].value_two,
		};
		separate |= ++per_index[r->args[i].index] > 1;
	}
	if (!separate)
		return seccomp_rule_add_array(ctx, action, nr,
					      (unsigned int)r->nargs, conds);
	for (size_t i = 0; i < r->nargs; i++) {
		ret = seccomp_rule_add_array(ctx, action, nr, 1, &conds[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int export_bpf(scmp_filter_ctx ctx, void **prog, size_t *len)
{
	int fd = memfd_create("hintvm-seccomp", MFD_CLOEXEC), ret;
	off_t size;
	void *buf;

	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	size = ret ? -1 : lseek(fd, 0, SEEK_END);
	if (ret || size <= 0 || size % 8 || size > RT_SECCOMP_MAX_BYTES) {
		close(fd);
		return ret ? ret : -E2BIG;
	}
	buf = malloc((size_t)size);
	if (!buf || pread(fd, buf, (size_t)size, 0) != size) {
		free(buf);
		close(fd);
		return -EIO;
	}
	close(fd);
	*prog = buf;
	*len = (size_t)size;
	return 0;
}

int rt_seccomp_compile(const struct oci_seccomp *sc, void **prog, size_t *len,
		       char *unknown, size_t unknown_len, size_t *nunknown,
		       char *err, size_t errlen)
{
	uint32_t def = scmp_action(sc->default_action, sc->default_errno);
	scmp_filter_ctx ctx;
	int ret = 0;

	*prog = NULL;
	*len = 0;
	*nunknown = 0;
	if (unknown_len)
		unknown[0] = '\0';
	ctx = seccomp_init(def);
	if (!ctx)
		return rt_fail(err, errlen, -ENOMEM,
			       "linux.seccomp: out of memory");
	for (size_t i = 0; i < sc->narchs; i++) {
		uint32_t arch = seccomp_arch_resolve_name(sc->archs[i]);

		/* One this libseccomp does not know cannot be the VM's. */
		if (!arch)
			continue;
		ret = seccomp_arch_add(ctx, arch);
		if (ret && ret != -EEXIST) {
			ret = rt_fail(err, errlen, ret,
				      "linux.seccomp.architectures: %s: %s",
				      sc->archs[i], strerror(-ret));
			goto out;
		}
		ret = 0;
	}
	for (size_t i = 0; i < sc->nrules; i++) {
		const struct oci_seccomp_rule *r = &sc->rules[i];
		uint32_t action = scmp_action(r->action, r->errno_ret);

		if (action == def)
			continue;
		for (size_t k = 0; k < r->nnames; k++) {
			int nr = seccomp_syscall_resolve_name(r->names[k]);

			if (nr == __NR_SCMP_ERROR) {
				note_unknown(r->names[k], unknown, unknown_len,
					     nunknown);
				continue;
			}
			ret = add_rule(ctx, r, action, nr);
			if (ret) {
				ret = rt_fail(
					err, errlen, ret,
					"linux.seccomp.syscalls[%zu]: %s: %s",
					i, r->names[k], strerror(-ret));
				goto out;
			}
		}
	}
	ret = export_bpf(ctx, prog, len);
	if (ret)
		rt_fail(err, errlen, ret,
			"linux.seccomp: the filter cannot be built (%s; at most %u bytes)",
			strerror(-ret), RT_SECCOMP_MAX_BYTES);
out:
	seccomp_release(ctx);
	return ret;
}
