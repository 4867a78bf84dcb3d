// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A snapshot's config section (docs/snapshot.md) applied to the
 * restoring VM's configuration: the machine options the snapshot
 * records, through the one option table, so that each value is checked
 * as a command-line one is, and the memory size and vCPU count they give
 * checked against the sections that hold that memory and those vCPUs.
 * Its own file so that the fuzzer reaches it without a VM.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/config.h"
#include "snapshot/format.h"
#include "vmm/snapshot.h"

static int apply_lines(struct hvm_config *cfg, const struct snap_section *s,
		       const char *path)
{
	static const char *const keys[] = { "cpus", "mem", "irqchip" };
	char *text = strndup((const char *)s->data, s->len);
	char *save = NULL;
	int r = 0;

	if (!text)
		return hvm_set_error(-ENOMEM, "out of memory");
	for (char *line = strtok_r(text, "\n", &save); line && r == 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		bool known = false;

		if (eq) {
			*eq = '\0';
			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]);
			     i++)
				known |= !strcmp(line, keys[i]);
		}
		if (!known)
			r = hvm_set_error(
				-EINVAL,
				"snapshot %s: config line '%.40s' is not one of cpus=, mem=, irqchip=",
				path, line);
		else if (hvm_config_set(cfg, line, eq + 1) < 0)
			r = hvm_set_error(-EINVAL, "snapshot %s: %s", path,
					  hvm_error_message());
	}
	free(text);
	return r;
}

int snapshot_config_apply(struct hvm_config *cfg, const struct snap_file *f,
			  const char *path)
{
	/* Both required: snap_parse() refuses a file without them. */
	const struct snap_section *config = snap_find(f, SNAP_SEC_CONFIG, 0);
	const struct snap_section *mem = snap_find(f, SNAP_SEC_MEMORY, 0);
	uint64_t mem_size;
	int r = apply_lines(cfg, config, path);

	memcpy(&mem_size, mem->data, sizeof(mem_size));
	if (r == 0 && cfg->mem != mem_size)
		r = hvm_set_error(
			-EINVAL,
			"snapshot %s: mem=%llu bytes in its config, %llu in its memory section",
			path, (unsigned long long)cfg->mem,
			(unsigned long long)mem_size);
	if (r == 0 && cfg->cpus != f->nr_vcpus)
		r = hvm_set_error(
			-EINVAL,
			"snapshot %s: cpus=%u in its config, state for %u vCPUs",
			path, cfg->cpus, f->nr_vcpus);
	return r;
}
