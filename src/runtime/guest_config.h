/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What VM a container gets: the runtime configuration file (kernel, agent
 * initramfs, defaults, which io.hintvm.* annotations pods may set) and the
 * translation of a config.json's resources and annotations into hintvm
 * options. Pure apart from reading the file, so it is unit-tested.
 */
#ifndef HVM_RUNTIME_GUEST_CONFIG_H
#define HVM_RUNTIME_GUEST_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec.h"

#define RT_DEFAULT_CONFIG "/etc/hintvm/runtime.conf"
#define RT_MAX_OPTIONS 64
/* 9p shares a container VM gets (hintvm's --share limit). */
#define RT_MAX_SHARES 8
/* Guest RAM when config.json sets no memory limit. */
#define RT_DEFAULT_MEM_MIB 256
/*
 * What the VMM process itself costs beyond guest RAM (its code, page
 * tables, device buffers, the vCPU threads' stacks): subtracted from a
 * memory limit so that the VM fits it. Measured in docs/oci-runtime.md.
 */
#define RT_DEFAULT_OVERHEAD_MIB 48
/* The least guest RAM a container VM gets (a Linux guest with the agent). */
#define RT_MIN_GUEST_MIB 64

struct rt_option {
	char *key;
	char *value; /* NULL for a flag */
};

struct rt_guest_config {
	char *kernel; /* "builtin": hintvm's test kernel (tests only) */
	char *initrd; /* the agent initramfs; in console mode, modules */
	char *guest_init; /* console mode's /init (oci-init) */
	bool rootfs_share; /* root as a 9p share, else in the initramfs */
	char *cmdline; /* extra kernel command line */
	unsigned int cpus; /* default vCPUs */
	unsigned int max_cpus; /* 0: host CPUs */
	uint64_t mem_mib; /* default guest RAM */
	uint64_t overhead_mib;
	char *annotations; /* comma list of options pods may set */
	/*
	 * template = auto: a pod's sandbox VM is a clone of a VM template
	 * (docs/template.md), made on first use; off (the default): every
	 * VM boots.
	 */
	bool template_auto;
	struct rt_option options[RT_MAX_OPTIONS]; /* any other hintvm option */
	size_t noptions;
};

/* Defaults (the host's own kernel, like kvmtool), then PATH if it exists. */
int rt_guest_config_load(struct rt_guest_config *g, const char *path, char *err,
			 size_t errlen);
/* Parse "key = value" lines of TEXT into G (already defaulted). */
int rt_guest_config_parse(struct rt_guest_config *g, const char *text,
			  char *err, size_t errlen);
void rt_guest_config_defaults(struct rt_guest_config *g);
void rt_guest_config_free(struct rt_guest_config *g);

/* "256M", "2G", "1048576" (bytes without a suffix) -> MiB, rounded up. */
int rt_parse_mib(const char *s, uint64_t *mib);

/* What linux.resources turns into. */
struct rt_vm_resources {
	unsigned int cpus;
	uint64_t mem_mib;
	char pin[256]; /* a host CPU list for --pin, or "" */
};

/*
 * CPU quota/period -> vCPUs (rounded up), else the cpuset's CPU count,
 * else the default; capped by max_cpus (HOST_CPUS when 0). Memory limit
 * -> limit minus overhead (an error when that leaves less than
 * RT_MIN_GUEST_MIB), else the default.
 */
int rt_map_resources(const struct rt_guest_config *g,
		     const struct oci_resources *r, unsigned int host_cpus,
		     struct rt_vm_resources *out, char *err, size_t errlen);

/* Whether pods may set hintvm option KEY through io.hintvm.KEY. */
bool rt_annotation_allowed(const struct rt_guest_config *g, const char *key);

#endif
